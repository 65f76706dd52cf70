//! The key that seals people's credentials at rest: [`SealingKey`], AES-256-GCM (aws-lc-rs, the
//! crate rustls is built on) with a random nonce per sealing, each sealed value bound to what it
//! is (its associated data: the store's kind and, in Redis, its key) so that a sealed value moved
//! elsewhere does not open.

use std::sync::Arc;

use aws_lc_rs::aead::{AES_256_GCM, Aad, NONCE_LEN, Nonce, RandomizedNonceKey};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// The key that seals people's credentials: 32 bytes, written in base64 in an environment variable.
#[derive(Clone)]
pub struct SealingKey(Arc<RandomizedNonceKey>);

/// One person's credential for one source, what a key seals: values by name — a security scheme
/// of an OpenAPI document (as `credentials` names them), or a header of an MCP server.
pub type Entry = std::collections::BTreeMap<String, String>;

impl std::fmt::Debug for SealingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealingKey(…)")
    }
}

impl SealingKey {
    /// The key written (base64 of 32 bytes) in `text`.
    ///
    /// # Errors
    ///
    /// The text is not base64 of 32 bytes (the message never holds the text).
    pub fn from_base64(text: &str) -> Result<Self, String> {
        let bytes = STANDARD
            .decode(text.trim())
            .map_err(|_| "the key is not base64".to_owned())?;
        if bytes.len() != 32 {
            return Err(format!(
                "the key is {} bytes, and must be 32 (`openssl rand -base64 32` makes one)",
                bytes.len()
            ));
        }
        RandomizedNonceKey::new(&AES_256_GCM, &bytes)
            .map(|key| Self(Arc::new(key)))
            .map_err(|_| "the key cannot be used".to_owned())
    }

    /// `plain` sealed and bound to `bound`, as base64 of the nonce, then the sealed bytes and
    /// their tag.
    pub(crate) fn seal(&self, plain: &[u8], bound: &[u8]) -> Result<String, String> {
        let mut in_out = plain.to_vec();
        let nonce = self
            .0
            .seal_in_place_append_tag(Aad::from(bound), &mut in_out)
            .map_err(|_| "the secrets cannot be sealed".to_owned())?;
        let mut sealed = nonce.as_ref().to_vec();
        sealed.extend_from_slice(&in_out);
        Ok(STANDARD.encode(sealed))
    }

    /// What [`SealingKey::seal`] sealed, when bound to `bound` and unchanged.
    pub(crate) fn open(&self, sealed: &str, bound: &[u8]) -> Result<Vec<u8>, String> {
        let bytes = STANDARD
            .decode(sealed)
            .map_err(|_| "its sealed content is not base64".to_owned())?;
        if bytes.len() < NONCE_LEN {
            return Err("its sealed content is cut short".to_owned());
        }
        let (nonce, sealed) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce)
            .map_err(|_| "its sealed content is cut short".to_owned())?;
        let mut in_out = sealed.to_vec();
        let plain = self
            .0
            .open_in_place(nonce, Aad::from(bound), &mut in_out)
            .map_err(|_| {
                "it does not open with this key (another key sealed it, or it was changed)"
                    .to_owned()
            })?;
        Ok(plain.to_vec())
    }
}

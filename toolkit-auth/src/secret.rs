//! [`Secret`]: a token or a client secret, which no `Debug` output, log line or failure shows.

use std::fmt;

use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

/// A credential (an access or refresh token, a client secret): shown by no `Debug` output, and
/// wiped from memory when dropped. It serializes as the plain string, for a
/// [`TokenStore`](super::TokenStore) to keep.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// A secret holding `value`.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(…)")
    }
}

impl Drop for Secret {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_value() {
        let secret = Secret::new("s3cr3t");
        assert_eq!(format!("{secret:?}"), "Secret(…)");
        assert_eq!(secret.expose(), "s3cr3t");
        assert_eq!(
            serde_json::to_string(&secret).ok().as_deref(),
            Some("\"s3cr3t\"")
        );
    }
}

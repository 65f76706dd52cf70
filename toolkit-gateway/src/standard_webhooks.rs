//! Deliveries signed as Standard Webhooks sign (<https://www.standardwebhooks.com>):
//! `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,` and the
//! base64 of an HMAC-SHA256 of `ID.TIMESTAMP.BODY`, several space-separated during a rotation),
//! under a secret written `whsec_` and base64. Written here on aws-lc-rs's HMAC, which the
//! gateway has already, since the crates.io crate for it brings a second HTTP stack along.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;

/// How far a delivery's timestamp may be from now.
pub(crate) const TOLERANCE: Duration = Duration::from_secs(300);

/// What a receipt answers the sender: its status and words.
pub(crate) type Receipt = (u16, String);

/// The key of a Standard Webhooks secret: `whsec_` and base64, or the secret's own bytes.
pub(crate) fn key_of(secret: &str) -> Vec<u8> {
    secret
        .strip_prefix("whsec_")
        .and_then(|encoded| {
            base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok()
        })
        .unwrap_or_else(|| secret.as_bytes().to_vec())
}

/// The signature of `id.timestamp.body` under `key`, as `webhook-signature` writes it.
pub(crate) fn signature(key: &[u8], id: &str, timestamp: &str, body: &[u8]) -> String {
    let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, key);
    let mut context = aws_lc_rs::hmac::Context::with_key(&key);
    context.update(id.as_bytes());
    context.update(b".");
    context.update(timestamp.as_bytes());
    context.update(b".");
    context.update(body);
    let tag = context.sign();
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(tag.as_ref())
    )
}

/// A new secret: `whsec_` and the base64 of 32 random bytes; `None` when the system has no
/// randomness to give.
pub(crate) fn new_secret() -> Option<String> {
    let mut bytes = [0u8; 32];
    aws_lc_rs::rand::fill(&mut bytes).ok()?;
    Some(format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    ))
}

/// The delivery's id when `headers` sign `body` under `key` within [`TOLERANCE`] of now; else
/// what to answer its sender (401, saying what is wrong).
pub(crate) fn verified<'a>(
    key: &[u8],
    headers: &'a axum::http::HeaderMap,
    body: &[u8],
) -> Result<&'a str, Receipt> {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    let (Some(id), Some(timestamp), Some(signatures)) = (
        header("webhook-id"),
        header("webhook-timestamp"),
        header("webhook-signature"),
    ) else {
        return Err((
            401,
            "A delivery is signed: webhook-id, webhook-timestamp and webhook-signature.".into(),
        ));
    };
    let fresh = timestamp
        .parse::<i64>()
        .is_ok_and(|at| now_seconds().abs_diff(at) <= TOLERANCE.as_secs());
    if !fresh {
        return Err((
            401,
            "The delivery's timestamp is more than five minutes from now.".into(),
        ));
    }
    let expected = signature(key, id, timestamp, body);
    let signed = signatures.split_whitespace().any(|given| {
        aws_lc_rs::constant_time::verify_slices_are_equal(given.as_bytes(), expected.as_bytes())
            .is_ok()
    });
    if signed {
        Ok(id)
    } else {
        Err((401, "The delivery's signature is not the secret's.".into()))
    }
}

fn now_seconds() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |now| i64::try_from(now.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_standard_webhooks_secret_is_its_base64_key() {
        let key = key_of("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
        assert_eq!(key.len(), 24);
        assert_eq!(key_of("plain"), b"plain");
        // The example of the Standard Webhooks specification.
        let signed = signature(
            &key,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            "1614265330",
            br#"{"test": 2432232314}"#,
        );
        assert_eq!(signed, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        let secret = new_secret().unwrap_or_default();
        assert_eq!(key_of(&secret).len(), 32);
        assert_ne!(Some(secret), new_secret());
    }
}

//! Unguessable values, fresh from the system: [`hex_128`].

use std::fmt::Write as _;

/// 128 random bits from the operating system, as 32 lowercase hex digits; `None` when the
/// system has no randomness to give (then nothing unguessable can be made: the caller says
/// what it does without).
///
/// ```
/// let token = toolkit_core::random::hex_128().expect("the system's randomness");
/// assert_eq!(token.len(), 32);
/// assert_ne!(Some(token), toolkit_core::random::hex_128());
/// ```
pub fn hex_128() -> Option<String> {
    let mut bytes = [0u8; 16];
    if let Err(error) = getrandom::fill(&mut bytes) {
        tracing::warn!(%error, "the system gave no randomness");
        return None;
    }
    let mut hex = String::with_capacity(32);
    for byte in bytes {
        let _ = write!(hex, "{byte:02x}");
    }
    Some(hex)
}

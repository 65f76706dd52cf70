//! Unguessable values, fresh from the system: [`hex_128`].

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
    // By table, not `write!("{byte:02x}")`: the formatter took 4,000 instructions a token, and
    // a token is made for every call that asks an upstream for progress.
    Some(hex(&bytes))
}

/// `bytes` as lowercase hex digits, two a byte.
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes
        .iter()
        .flat_map(|byte| {
            [
                char::from(DIGITS[usize::from(byte >> 4)]),
                char::from(DIGITS[usize::from(byte & 0xf)]),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_byte_is_two_lowercase_hex_digits_high_half_first() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa0, 0xff, 0x3c]), "000fa0ff3c");
        assert_eq!(hex(&[]), "");
    }
}

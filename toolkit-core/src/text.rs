//! Cutting text that a model reads back.

/// The most UTF-16 code units of a caller-supplied value echoed back in a message.
pub const ECHO_LIMIT: usize = 200;

/// `text` cut to [`ECHO_LIMIT`] UTF-16 code units, never inside a character, and ended with `…`
/// when cut: a value the model gave is echoed back in a failure without flooding it.
#[doc(hidden)]
pub fn cut_for_echo(text: &str) -> String {
    cut_utf16(text, ECHO_LIMIT)
}

/// `text` cut to at most `limit` UTF-16 code units (the unit models' APIs count in), at a
/// character boundary, and ended with `…` when cut.
#[doc(hidden)]
pub fn cut_utf16(text: &str, limit: usize) -> String {
    let mut units = 0;
    for (index, character) in text.char_indices() {
        units += character.len_utf16();
        if units > limit {
            let mut cut = text[..index].to_owned();
            cut.push('…');
            return cut;
        }
    }
    text.to_owned()
}

/// How many UTF-16 code units `text` has: its length as JavaScript and models' APIs count it, and
/// what "characters" means in the limits of code mode.
#[doc(hidden)]
pub fn utf16_length(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_whole() {
        assert_eq!(cut_utf16("héllo", 5), "héllo");
    }

    #[test]
    fn a_surrogate_pair_is_never_split() {
        // '😀' is two UTF-16 code units: at a limit of 2 it cannot follow 'a'.
        assert_eq!(cut_utf16("a😀b", 2), "a…");
        assert_eq!(cut_utf16("a😀b", 3), "a😀…");
    }

    #[test]
    fn echo_cuts_ten_megabytes_to_the_limit() {
        let long = "x".repeat(10 * 1024 * 1024);
        let cut = cut_for_echo(&long);
        assert_eq!(cut.chars().count(), ECHO_LIMIT + 1);
        assert!(cut.ends_with('…'));
    }
}

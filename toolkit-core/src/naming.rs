//! Names a model can call a tool by: `source__tool`, in the characters and length model APIs
//! accept.
//!
//! The rules, in order:
//!
//! 1. the source's name and the tool's are joined by `__`: `github__create_issue`;
//! 2. every character outside `[A-Za-z0-9_-]` becomes `_` (one `_` per character, however many
//!    bytes it has);
//! 3. a name that does not start with a letter or `_` gets a leading `_` (Gemini's rule, the
//!    strictest of the model APIs);
//! 4. a name longer than the maximum (64 by default, [`DEFAULT_MAX_NAME_LENGTH`]) is cut and ends
//!    with `_` and a fingerprint of the whole: the first 8 hex digits of the SHA-256 of the
//!    source's name, a zero byte, and the tool's name. Long names that differ only after the cut
//!    stay apart, and a name is the same on every run, platform and version.
//!
//! ```
//! use toolkit_core::naming::tool_name;
//!
//! assert_eq!(tool_name("github", "create_issue", 64), "github__create_issue");
//! assert_eq!(tool_name("my.api", "pets/{id}", 64), "my_api__pets__id_");
//! assert_eq!(tool_name("1password", "get", 64), "_1password__get");
//! let long = tool_name("stripe", &"x".repeat(100), 64);
//! assert_eq!(long.len(), 64);
//! ```

use sha2::{Digest, Sha256};

/// The longest name model APIs take (OpenAI, Anthropic, Gemini): 64 characters.
pub const DEFAULT_MAX_NAME_LENGTH: usize = 64;

/// The smallest maximum an assembly accepts: room for a few characters of the name and the
/// 9 of the fingerprint.
pub const MIN_MAX_NAME_LENGTH: usize = 16;

/// The length of `_` and the fingerprint that end a cut name.
const FINGERPRINT_LENGTH: usize = 9;

/// The name a model calls the tool `tool` of the source `source` by, at most `max_length`
/// characters long (raised to [`MIN_MAX_NAME_LENGTH`] if it is less).
pub fn tool_name(source: &str, tool: &str, max_length: usize) -> String {
    model_safe(Some(source), tool, max_length)
}

/// The name a model calls the tool `tool` by when its source's tools are served under their own
/// names (a gateway that fronts one server): rules 2 to 4 above, without the source's name (the
/// fingerprint of a cut name is over an empty source name).
///
/// ```
/// use toolkit_core::naming::unprefixed_tool_name;
///
/// assert_eq!(unprefixed_tool_name("create_issue", 64), "create_issue");
/// assert_eq!(unprefixed_tool_name("pets/{id}", 64), "pets__id_");
/// assert_eq!(unprefixed_tool_name("2fa", 64), "_2fa");
/// ```
pub fn unprefixed_tool_name(tool: &str, max_length: usize) -> String {
    model_safe(None, tool, max_length)
}

fn model_safe(source: Option<&str>, tool: &str, max_length: usize) -> String {
    let max_length = max_length.max(MIN_MAX_NAME_LENGTH);
    let prefix = source.map_or(0, |source| source.len() + 2);
    let mut name = String::with_capacity(prefix + tool.len() + 1);
    let joined = source
        .into_iter()
        .flat_map(|source| source.chars().chain("__".chars()))
        .chain(tool.chars());
    for character in joined {
        name.push(
            if character.is_ascii_alphanumeric() || character == '_' || character == '-' {
                character
            } else {
                '_'
            },
        );
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert(0, '_');
    }
    if name.len() > max_length {
        // Only ASCII is left, so any byte index is a character boundary.
        name.truncate(max_length - FINGERPRINT_LENGTH);
        name.push('_');
        name.push_str(&fingerprint(source.unwrap_or(""), tool));
    }
    name
}

/// The first 8 hex digits of SHA-256 over `source`, a zero byte, and `tool`.
fn fingerprint(source: &str, tool: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(source.as_bytes());
    hasher.update([0]);
    hasher.update(tool.as_bytes());
    let digest = hasher.finalize();
    digest[..4]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_is_fixed_across_runs_and_versions() {
        // SHA-256 of "a", a zero byte, and "b" + 80 "c"s begins ede26400 (computed apart from
        // this crate): a change here would rename every long tool of every host.
        let name = tool_name("a", &format!("b{}", "c".repeat(80)), 20);
        assert_eq!(name, "a__bccccccc_ede26400");
    }

    #[test]
    fn long_names_that_differ_after_the_cut_stay_apart() {
        let base = "x".repeat(70);
        assert_ne!(
            tool_name("s", &format!("{base}1"), 64),
            tool_name("s", &format!("{base}2"), 64)
        );
    }

    #[test]
    fn a_multibyte_character_becomes_one_underscore() {
        assert_eq!(tool_name("café", "ünï", 64), "caf____n_");
    }

    #[test]
    fn a_name_starting_with_a_hyphen_gets_an_underscore() {
        assert_eq!(tool_name("-x", "y", 64), "_-x__y");
    }
}

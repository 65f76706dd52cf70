//! [`Redactor`]: the credentials a call sent, kept out of what the API answers, in the forms an
//! API echoes them in.
//!
//! An API echoes a credential as it was sent (a header, a JSON field), percent-encoded (a query
//! string: `%2B` or `+` for a space, upper- or lower-case hex, any set of characters encoded),
//! JSON-escaped (`\/`, `\"`, `\u00e9`, surrogate pairs), or in base64 (standard or URL-safe,
//! padded or not, on its own or inside a longer encoded value such as `user:password`). Rather
//! than list every encoding set, the matcher reads each character of a secret as any of its
//! escapes, so every mix of them is found. Hand-written: no crate matches a needle through
//! percent- and JSON-escapes at once.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use serde_json::Value;

/// What a found secret becomes.
pub(crate) const REPLACEMENT: &str = "<credential>";

/// The fewest characters a base64 form of a secret is looked for with: shorter runs are common in
/// ordinary text (the literal secret is looked for whatever its length).
const MIN_ENCODED: usize = 6;

/// Secrets (the credentials of a call, or every credential a host holds), found in text and JSON
/// in every form this file finds them in, and replaced by `<credential>`. The gateway's audit
/// passes an input it records through one (`include_inputs`).
///
/// ```
/// use toolkit_http::Redactor;
///
/// let redactor = Redactor::new(&["s3cr3t-t0ken".to_owned()]);
/// let input = serde_json::json!({"query": "token=s3cr3t%2Dt0ken"});
/// assert_eq!(redactor.value(input), serde_json::json!({"query": "token=<credential>"}));
/// ```
pub struct Redactor {
    needles: Vec<Vec<char>>,
}

/// The secrets are not shown.
impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("needles", &self.needles.len())
            .finish()
    }
}

/// How a needle met the text at a place.
enum Meeting {
    /// Whole, ending at this byte.
    Whole(usize),
    /// The text ended partway through it.
    Begun,
    /// Not there.
    No,
}

impl Redactor {
    /// A redactor of `secrets` (empty ones are ignored).
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a String>) -> Self {
        let mut needles: Vec<Vec<char>> = Vec::new();
        for secret in secrets.into_iter().filter(|secret| !secret.is_empty()) {
            needles.push(secret.chars().collect());
            for core in base64_cores(secret.as_bytes()) {
                let core: Vec<char> = core.chars().collect();
                if core.len() >= MIN_ENCODED && !needles.contains(&core) {
                    needles.push(core);
                }
            }
        }
        // Longest first, so that a secret is replaced whole rather than by a shorter form.
        needles.sort_by_key(|needle| std::cmp::Reverse(needle.len()));
        Self { needles }
    }

    /// Whether there is nothing to look for.
    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// `text` with every secret replaced by `<credential>`. When `cut` (the text is the start of
    /// something longer), a secret begun at its end and not finished is removed too: no prefix
    /// of a secret survives a cut.
    pub fn text(&self, text: &str, cut: bool) -> String {
        if self.is_empty() {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        'places: while let Some(character) = text[at..].chars().next() {
            for needle in &self.needles {
                match meet(text, at, needle) {
                    Meeting::Whole(end) => {
                        out.push_str(REPLACEMENT);
                        at = end;
                        continue 'places;
                    }
                    Meeting::Begun if cut => return out,
                    Meeting::Begun | Meeting::No => {}
                }
            }
            out.push(character);
            at += character.len_utf8();
        }
        out
    }

    /// `value` with every secret replaced in its strings and keys (a number that shows one
    /// becomes a string).
    pub fn value(&self, value: Value) -> Value {
        if self.is_empty() {
            return value;
        }
        match value {
            Value::String(text) => Value::String(self.text(&text, false)),
            Value::Number(number) => {
                let shown = number.to_string();
                let redacted = self.text(&shown, false);
                if redacted == shown {
                    Value::Number(number)
                } else {
                    Value::String(redacted)
                }
            }
            Value::Array(items) => Value::Array(items.into_iter().map(|v| self.value(v)).collect()),
            Value::Object(fields) => Value::Object(
                fields
                    .into_iter()
                    .map(|(key, v)| (self.text(&key, false), self.value(v)))
                    .collect(),
            ),
            other => other,
        }
    }
}

/// The parts of `secret`'s base64 (both alphabets) that are the same wherever it sits in a
/// longer encoded value: for each of the three alignments, the characters made of its bits
/// alone.
fn base64_cores(secret: &[u8]) -> Vec<String> {
    let mut cores = Vec::new();
    for offset in 0..3usize {
        let mut bytes = vec![0u8; offset];
        bytes.extend_from_slice(secret);
        let start = (8 * offset).div_ceil(6);
        let end = 8 * bytes.len() / 6;
        for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
            let encoded = engine.encode(&bytes);
            if let Some(core) = encoded.get(start..end)
                && !cores.iter().any(|c: &String| c == core)
            {
                cores.push(core.to_owned());
            }
        }
    }
    cores
}

/// How `needle` meets `text` at byte `at`, each of its characters read as itself or any escape.
fn meet(text: &str, at: usize, needle: &[char]) -> Meeting {
    let mut position = at;
    for character in needle {
        match one(text, position, *character) {
            Meeting::Whole(next) => position = next,
            other => return other,
        }
    }
    Meeting::Whole(position)
}

/// How `character` meets `text` at byte `at`: as itself, percent-encoded, `+` for a space, or
/// JSON-escaped.
fn one(text: &str, at: usize, character: char) -> Meeting {
    let rest = &text.as_bytes()[at..];
    if rest.is_empty() {
        return Meeting::Begun;
    }
    let mut utf8 = [0u8; 4];
    let literal = character.encode_utf8(&mut utf8).as_bytes();
    if rest.starts_with(literal) {
        return Meeting::Whole(at + literal.len());
    }
    match rest[0] {
        b'+' if character == ' ' => Meeting::Whole(at + 1),
        b'%' => percent(rest, literal).map_or(Meeting::No, |meeting| shift(meeting, at)),
        b'\\' => json_escape(rest, character).map_or(Meeting::No, |meeting| shift(meeting, at)),
        _ => Meeting::No,
    }
}

fn shift(meeting: Meeting, at: usize) -> Meeting {
    match meeting {
        Meeting::Whole(length) => Meeting::Whole(at + length),
        other => other,
    }
}

/// `bytes` as `%XX` escapes (any case) at the start of `rest`: the length they take.
fn percent(rest: &[u8], bytes: &[u8]) -> Option<Meeting> {
    let mut length = 0;
    for byte in bytes {
        match rest.get(length..length + 3) {
            Some([b'%', high, low]) if hex_pair(*high, *low) == Some(*byte) => length += 3,
            Some(_) => return None,
            None => {
                return escape_begun(&rest[length..], &format!("%{byte:02X}"))
                    .then_some(Meeting::Begun);
            }
        }
    }
    Some(Meeting::Whole(length))
}

/// `character` as a JSON escape at the start of `rest`: the length it takes.
fn json_escape(rest: &[u8], character: char) -> Option<Meeting> {
    let short = match character {
        '"' => Some('"'),
        '\\' => Some('\\'),
        '/' => Some('/'),
        '\u{8}' => Some('b'),
        '\u{c}' => Some('f'),
        '\n' => Some('n'),
        '\r' => Some('r'),
        '\t' => Some('t'),
        _ => None,
    };
    if let Some(short) = short {
        match rest.get(1) {
            Some(next) if *next == short as u8 => return Some(Meeting::Whole(2)),
            None => return Some(Meeting::Begun),
            Some(_) => {}
        }
    }
    let mut units = [0u16; 2];
    let mut length = 0;
    for unit in character.encode_utf16(&mut units).iter() {
        let expected = format!("\\u{unit:04x}");
        match rest.get(length..length + 6) {
            Some(found) if found.eq_ignore_ascii_case(expected.as_bytes()) => length += 6,
            Some(_) => return None,
            None => return escape_begun(&rest[length..], &expected).then_some(Meeting::Begun),
        }
    }
    Some(Meeting::Whole(length))
}

/// Whether `rest` (shorter than `escape`) is how `escape` begins, any case.
fn escape_begun(rest: &[u8], escape: &str) -> bool {
    escape
        .as_bytes()
        .get(..rest.len())
        .is_some_and(|start| start.eq_ignore_ascii_case(rest))
}

fn hex_pair(high: u8, low: u8) -> Option<u8> {
    let digit = |byte: u8| (byte as char).to_digit(16);
    Some(u8::try_from(digit(high)? * 16 + digit(low)?).unwrap_or(0))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};
    use serde_json::json;

    use super::*;

    const SECRET: &str = "k3y+Secret/Value==";

    fn redactor() -> Redactor {
        Redactor::new(&[SECRET.to_owned(), "two words".to_owned()])
    }

    #[test]
    fn every_echoed_form_is_found() {
        let encoded_in = |prefix: &str| STANDARD.encode(format!("{prefix}{SECRET}"));
        let forms = [
            SECRET.to_owned(),
            form_urlencoded::byte_serialize(SECRET.as_bytes()).collect(),
            "k3y%2bSecret%2fValue%3d%3d".to_owned(),
            "k3y%2BSecret/Value%3D%3D".to_owned(),
            serde_json::to_string(SECRET).unwrap().replace('/', "\\/"),
            "k3y\\u002bSecret\\/Value\\u003D==".to_owned(),
            STANDARD.encode(SECRET),
            STANDARD_NO_PAD.encode(SECRET),
            URL_SAFE.encode(SECRET),
            URL_SAFE_NO_PAD.encode(SECRET),
            encoded_in("ann:"),
            encoded_in("a:"),
            encoded_in("x"),
            "two+words".to_owned(),
            "two%20words".to_owned(),
        ];
        for form in forms {
            let text = format!("before {form} after");
            let redacted = redactor().text(&text, false);
            assert!(redacted.contains(REPLACEMENT), "{form}: {redacted}");
            for part in ["k3y", "Secret", "Value", "two", "words", "ecret"] {
                assert!(!redacted.contains(part), "{form}: {redacted}");
            }
        }
    }

    #[test]
    fn a_secret_begun_at_a_cut_leaves_no_prefix() {
        for cut_at in 1..SECRET.len() {
            let text = format!("the key is {}", &SECRET[..cut_at]);
            assert_eq!(redactor().text(&text, true), "the key is ", "{cut_at}");
        }
        let encoded: String = form_urlencoded::byte_serialize(SECRET.as_bytes()).collect();
        for cut_at in 1..encoded.len() {
            let text = format!("key={}", &encoded[..cut_at]);
            assert_eq!(redactor().text(&text, true), "key=", "{cut_at}");
        }
        // Words that are not cut keep their end.
        assert_eq!(redactor().text("ends with k3y", false), "ends with k3y");
    }

    #[test]
    fn values_are_redacted_in_strings_keys_and_numbers() {
        let numeric = Redactor::new(&["98765431".to_owned()]);
        assert_eq!(
            numeric.value(json!({"98765431": [98765431, "n 98765431", 12]})),
            json!({REPLACEMENT: [REPLACEMENT, format!("n {REPLACEMENT}"), 12]})
        );
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let text = "a plain answer: %41 \\n + é 😀 \\u00e9";
        assert_eq!(redactor().text(text, true), text);
        assert_eq!(Redactor::new(&[String::new()]).text(text, true), text);
    }
}

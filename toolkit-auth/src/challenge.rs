//! Reading `WWW-Authenticate` (RFC 9110 §11.6.1): the `Bearer` challenge's `resource_metadata`,
//! `scope` and `error`.
//!
//! Written here rather than taken from a crate: the crates that parse challenges are unmaintained
//! or parse only one challenge per header, and a server's header must be read with a size bound
//! and never fail a request for being malformed — what cannot be read is read as no parameter.

use reqwest::header::{HeaderMap, WWW_AUTHENTICATE};

/// The most bytes of `WWW-Authenticate` (all its lines) read; a longer header is read as none.
pub const MAX_CHALLENGE_BYTES: usize = 8 * 1024;

/// What a `Bearer` challenge says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Challenge {
    /// `resource_metadata`, as written (relative to the request's URL, maybe).
    pub resource_metadata: Option<String>,
    /// `scope`, split at spaces; `None` when absent or empty.
    pub scope: Option<Vec<String>>,
    /// `error` (`invalid_request`, `invalid_token`, `insufficient_scope`).
    pub error: Option<String>,
}

impl Challenge {
    /// The `Bearer` challenge of a response's `WWW-Authenticate` lines, or an empty one.
    pub(crate) fn of(headers: &HeaderMap) -> Self {
        let mut text = String::new();
        for value in headers.get_all(WWW_AUTHENTICATE) {
            let Ok(line) = value.to_str() else { continue };
            if text.len() + line.len() + 2 > MAX_CHALLENGE_BYTES {
                tracing::debug!(
                    "WWW-Authenticate is longer than {MAX_CHALLENGE_BYTES} bytes; read as none"
                );
                return Self::default();
            }
            if !text.is_empty() {
                text.push_str(", ");
            }
            text.push_str(line);
        }
        Self::parse(&text)
    }

    /// The `Bearer` challenge of `header`, or an empty one.
    pub(crate) fn parse(header: &str) -> Self {
        let mut challenge = Self::default();
        let mut in_bearer = false;
        for item in items(header) {
            match item {
                Item::Scheme(scheme) => in_bearer = scheme.eq_ignore_ascii_case("bearer"),
                Item::Param(name, value) if in_bearer => {
                    if name.eq_ignore_ascii_case("resource_metadata") {
                        challenge.resource_metadata = Some(value).filter(|v| !v.is_empty());
                    } else if name.eq_ignore_ascii_case("scope") {
                        let scopes: Vec<String> =
                            value.split_whitespace().map(str::to_owned).collect();
                        challenge.scope = Some(scopes).filter(|s| !s.is_empty());
                    } else if name.eq_ignore_ascii_case("error") {
                        challenge.error = Some(value);
                    }
                }
                Item::Param(..) => {}
            }
        }
        challenge
    }

    /// Whether the server asks for more scopes (403 `insufficient_scope`).
    pub(crate) fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// A piece of a challenge list.
#[derive(Debug, PartialEq)]
enum Item {
    /// An auth scheme, beginning a challenge.
    Scheme(String),
    /// `name=value` of the challenge begun last.
    Param(String, String),
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// The schemes and parameters of `header`, in order. Parsing stops at the first thing that is
/// neither (broken quoting, a stray character): what came before it stands.
fn items(header: &str) -> Vec<Item> {
    let chars: Vec<char> = header.chars().collect();
    let mut items = Vec::new();
    let mut i = 0;
    let skip = |i: &mut usize, also_commas: bool| {
        while *i < chars.len()
            && (chars[*i] == ' ' || chars[*i] == '\t' || (also_commas && chars[*i] == ','))
        {
            *i += 1;
        }
    };
    loop {
        skip(&mut i, true);
        let start = i;
        while i < chars.len() && is_tchar(chars[i]) {
            i += 1;
        }
        if i == start {
            break;
        }
        let token: String = chars[start..i].iter().collect();
        skip(&mut i, false);
        if i < chars.len() && chars[i] == '=' {
            // A parameter, or the padding of a token68 (`abc==`), which is skipped.
            i += 1;
            skip(&mut i, false);
            if i < chars.len() && chars[i] == '"' {
                i += 1;
                let mut value = String::new();
                let mut closed = false;
                while i < chars.len() {
                    match chars[i] {
                        '\\' if i + 1 < chars.len() => {
                            value.push(chars[i + 1]);
                            i += 2;
                        }
                        '"' => {
                            closed = true;
                            i += 1;
                            break;
                        }
                        c => {
                            value.push(c);
                            i += 1;
                        }
                    }
                }
                if !closed {
                    break;
                }
                items.push(Item::Param(token, value));
            } else {
                let value_start = i;
                while i < chars.len() && (is_tchar(chars[i]) || chars[i] == '/' || chars[i] == '=')
                {
                    i += 1;
                }
                let value: String = chars[value_start..i].iter().collect();
                if !value.is_empty() {
                    items.push(Item::Param(token, value));
                }
            }
        } else {
            // A token68 after a scheme (`Negotiate abc==`) reads as a parameter or a scheme of
            // its own, neither of which is a `Bearer` parameter.
            items.push(Item::Scheme(token));
        }
        skip(&mut i, false);
        if i < chars.len() && chars[i] != ',' && !is_tchar(chars[i]) {
            break;
        }
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_bearer_challenge_among_others() {
        let challenge = Challenge::parse(
            r#"Basic realm="x, y", Bearer error="insufficient_scope", scope="mcp:basic  mcp:write", resource_metadata="https://h/.well-known/oauth-protected-resource/mcp", DPoP algs="ES256""#,
        );
        assert_eq!(challenge.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(
            challenge.scope,
            Some(vec!["mcp:basic".to_owned(), "mcp:write".to_owned()])
        );
        assert_eq!(
            challenge.resource_metadata.as_deref(),
            Some("https://h/.well-known/oauth-protected-resource/mcp")
        );
        assert!(challenge.insufficient_scope());
    }

    #[test]
    fn reads_tokens_escapes_and_case() {
        let challenge = Challenge::parse(r#"bearer ERROR=invalid_token, Scope="a\"b c""#);
        assert_eq!(challenge.error.as_deref(), Some("invalid_token"));
        assert_eq!(
            challenge.scope,
            Some(vec!["a\"b".to_owned(), "c".to_owned()])
        );
    }

    #[test]
    fn a_token68_scheme_does_not_hide_the_next_challenge() {
        let challenge = Challenge::parse(r#"Negotiate abc==, Bearer scope="s""#);
        assert_eq!(challenge.scope, Some(vec!["s".to_owned()]));
    }

    #[test]
    fn broken_quoting_keeps_what_came_before() {
        let challenge = Challenge::parse(r#"Bearer error="invalid_token", scope="never closed"#);
        assert_eq!(challenge.error.as_deref(), Some("invalid_token"));
        assert_eq!(challenge.scope, None);
        assert_eq!(Challenge::parse("\"\"\"===,,,"), Challenge::default());
        assert_eq!(
            Challenge::parse("Bearer scope=\"\u{0}"),
            Challenge::default()
        );
    }

    #[test]
    fn a_header_over_the_cap_is_read_as_none() {
        let mut headers = HeaderMap::new();
        let long = format!(r#"Bearer scope="{}""#, "a".repeat(10 * 1024));
        headers.insert(WWW_AUTHENTICATE, long.parse().expect("a header value"));
        assert_eq!(Challenge::of(&headers), Challenge::default());
        headers.insert(
            WWW_AUTHENTICATE,
            r#"Bearer scope="a""#.parse().expect("a header value"),
        );
        assert_eq!(Challenge::of(&headers).scope, Some(vec!["a".to_owned()]));
    }

    proptest::proptest! {
        #[test]
        fn nothing_panics(header in ".{0,300}") {
            let _ = Challenge::parse(&header);
        }
    }
}

//! `--header 'Name: value'`: headers sent on every request to an MCP server, an API or a GraphQL
//! endpoint, where a credential goes ([`headers`]).

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// `'Name: value'` arguments as default headers; their values are marked sensitive, so that no
/// log shows them.
///
/// # Errors
///
/// A message for people when an argument is no `Name: value` header (never quoting a value).
pub fn headers(arguments: &[String]) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for argument in arguments {
        let (name, value) = argument
            .split_once(':')
            .ok_or_else(|| "a --header is 'Name: value'".to_owned())?;
        let name = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| format!("--header {:?} has no valid header name", name.trim()))?;
        let mut value = HeaderValue::from_str(value.trim())
            .map_err(|_| format!("the value of --header {name} cannot be a header value"))?;
        value.set_sensitive(true);
        map.append(name, value);
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn bad_headers_are_told_and_values_are_sensitive() {
        assert!(headers(&["no colon".into()]).is_err());
        assert!(headers(&["Bad Name: x".into()]).is_err());
        assert!(
            headers(&["X-Ok: fine".into()])
                .unwrap()
                .get("x-ok")
                .unwrap()
                .is_sensitive()
        );
    }
}

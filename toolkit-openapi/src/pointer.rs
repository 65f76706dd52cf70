//! JSON pointers: writing the location of a place of the document (`#/paths/~1pets/get`) and
//! following a document's own references (`#/components/schemas/Pet`).

use percent_encoding::percent_decode_str;
use serde_json::Value;

use super::SkipReason;

/// The most references followed one after another before a chain counts as broken (a `$ref`
/// to a `$ref` to …, or a cycle of them).
const MAX_CHAIN: usize = 32;

/// `token` escaped for a JSON pointer (RFC 6901): `~` as `~0`, `/` as `~1`.
pub(crate) fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The location `#/a/b/…` of the place reached by `tokens`.
pub(crate) fn location<'a>(tokens: impl IntoIterator<Item = &'a str>) -> String {
    let mut location = String::from("#");
    for token in tokens {
        location.push('/');
        location.push_str(&escape(token));
    }
    location
}

/// The place of the document `reference` (`#/components/schemas/Pet`, percent-encoded as URI
/// fragments may be) leads to.
///
/// # Errors
///
/// [`SkipReason::ExternalReference`] for a reference to another document, and
/// [`SkipReason::BrokenReference`] for one to nothing.
pub(crate) fn resolve<'d>(document: &'d Value, reference: &str) -> Result<&'d Value, SkipReason> {
    let Some(fragment) = reference.strip_prefix('#') else {
        return Err(SkipReason::ExternalReference {
            reference: reference.to_owned(),
        });
    };
    let decoded = percent_decode_str(fragment).decode_utf8_lossy();
    if !decoded.is_empty() && !decoded.starts_with('/') {
        // `#name` anchors would need `$anchor`s; no document in the corpus uses them.
        return Err(SkipReason::BrokenReference {
            reference: reference.to_owned(),
        });
    }
    document
        .pointer(&decoded)
        .ok_or_else(|| SkipReason::BrokenReference {
            reference: reference.to_owned(),
        })
}

/// `value` with every `$ref` of it followed in `document`, as a parameter or a request body
/// may be given: the object it leads to.
///
/// # Errors
///
/// As [`resolve`], and [`SkipReason::BrokenReference`] for a chain longer than 32 references.
pub(crate) fn follow<'d>(
    document: &'d Value,
    mut value: &'d Value,
) -> Result<&'d Value, SkipReason> {
    for _ in 0..MAX_CHAIN {
        match value.get("$ref").and_then(Value::as_str) {
            Some(reference) => value = resolve(document, reference)?,
            None => return Ok(value),
        }
    }
    Err(SkipReason::BrokenReference {
        reference: value
            .get("$ref")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
    })
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn locations_escape_slashes_and_tildes() {
        assert_eq!(
            location(["paths", "/pets/{id}", "post"]),
            "#/paths/~1pets~1{id}/post"
        );
        assert_eq!(location(["a~b"]), "#/a~0b");
    }

    #[test]
    fn references_are_followed_within_the_document_only() {
        let document = json!({"components": {"schemas": {"A B": {"type": "string"}, "L": {"$ref": "#/components/schemas/L"}}}});
        assert_eq!(
            resolve(&document, "#/components/schemas/A%20B").unwrap(),
            &json!({"type": "string"})
        );
        assert!(matches!(
            resolve(&document, "other.yaml#/x"),
            Err(SkipReason::ExternalReference { .. })
        ));
        assert!(matches!(
            resolve(&document, "#/nothing"),
            Err(SkipReason::BrokenReference { .. })
        ));
        let looped = json!({"$ref": "#/components/schemas/L"});
        assert!(matches!(
            follow(&document, &looped),
            Err(SkipReason::BrokenReference { .. })
        ));
    }
}

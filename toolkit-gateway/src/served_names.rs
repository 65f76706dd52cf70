//! How an upstream's resource URIs and prompt names are made distinct per source, as its tool
//! names are (`source__tool`), and read back. Both ways are pure string rules, reversible:
//!
//! - a prompt `name` of source `src` is served as `src__name`;
//! - a resource URI `scheme://rest` is served as `scheme://src/rest`, and `scheme:rest` (no `//`)
//!   as `scheme:src/rest`: the scheme is kept, so an MCP App's `ui://server/view.html` stays a
//!   `ui://` resource (`ui://src/server/view.html`) that an App host reads and renders; a template
//!   (`demo://item/{id}`) is rewritten by the same rule.
//!
//! A source served with `prefix = false` keeps its names and URIs as written. A served URI that
//! names no source, or has a `..` segment (written plainly or percent-encoded), is refused.

use serde_json::Value;
use toolkit_core::ToolDefinition;

/// The served name of `source`'s prompt `name`.
pub fn served_prompt(source: &str, name: &str) -> String {
    format!("{source}__{name}")
}

/// The upstream name of the served prompt `served` when it is `source`'s, else `None`.
pub fn upstream_prompt<'a>(source: &str, served: &'a str) -> Option<&'a str> {
    served
        .strip_prefix(source)?
        .strip_prefix("__")
        .filter(|name| !name.is_empty())
}

/// The served URI of `source`'s resource `uri` (or URI template). A URI without a scheme is
/// given back as it is: no served URI reads back to it, so it cannot be read through the gateway.
pub fn served_uri(source: &str, uri: &str) -> String {
    match split(uri) {
        Some((scheme, rest)) => match rest.strip_prefix("//") {
            Some(rest) => format!("{scheme}://{source}/{rest}"),
            None => format!("{scheme}:{source}/{rest}"),
        },
        None => uri.to_owned(),
    }
}

/// The upstream URI of the served URI `served` when it is `source`'s, else `None`.
pub fn upstream_uri(source: &str, served: &str) -> Option<String> {
    let (scheme, rest) = split(served)?;
    match rest.strip_prefix("//") {
        Some(rest) => {
            let rest = rest.strip_prefix(source)?.strip_prefix('/')?;
            Some(format!("{scheme}://{rest}"))
        }
        None => {
            let rest = rest.strip_prefix(source)?.strip_prefix('/')?;
            Some(format!("{scheme}:{rest}"))
        }
    }
}

/// `definition` with the `ui://` resource its `_meta` names for an MCP App
/// (`_meta.ui.resourceUri`, and the older `_meta["ui/resourceUri"]`) served under `source`, so
/// that the App host reads it through the gateway.
pub fn with_served_app(source: &str, definition: &ToolDefinition) -> ToolDefinition {
    let Some(meta) = definition.meta() else {
        return definition.clone();
    };
    let mut meta = meta.clone();
    if let Some(Value::String(uri)) = meta.get_mut("ui").and_then(|ui| ui.get_mut("resourceUri")) {
        *uri = served_uri(source, uri);
    }
    if let Some(Value::String(uri)) = meta.get_mut("ui/resourceUri") {
        *uri = served_uri(source, uri);
    }
    definition.clone().with_meta(meta)
}

/// Whether `uri` has a `..` segment, plainly or percent-encoded (`%2e%2e`, `.%2E`, ...), in its
/// path: such a URI could name what lies outside its source's prefix, and is refused.
pub fn climbs(uri: &str) -> bool {
    let after_scheme = split(uri).map_or(uri, |(_, rest)| rest);
    after_scheme
        .split(['/', '\\', '?', '#'])
        .any(|segment| decoded_dots(segment) == Some(2))
}

/// How many dots `segment` is when it is dots only (each `.` or `%2e`), else `None`.
fn decoded_dots(segment: &str) -> Option<usize> {
    let mut dots = 0;
    let mut rest = segment;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            rest = after;
        } else if rest.len() >= 3 && rest[..3].eq_ignore_ascii_case("%2e") {
            rest = &rest[3..];
        } else {
            return None;
        }
        dots += 1;
    }
    Some(dots)
}

/// `scheme` and what follows its `:`, when `uri` starts with a scheme (RFC 3986: a letter, then
/// letters, digits, `+`, `-`, `.`).
fn split(uri: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = uri.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some((scheme, rest))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_is_served_under_its_source_and_read_back() {
        for (uri, served) in [
            ("ui://server/view.html", "ui://apps/server/view.html"),
            ("test://static-text", "test://apps/static-text"),
            ("file:///etc/notes.txt", "file://apps//etc/notes.txt"),
            ("urn:isbn:123", "urn:apps/isbn:123"),
            ("demo://item/{id}", "demo://apps/item/{id}"),
        ] {
            assert_eq!(served_uri("apps", uri), served);
            assert_eq!(upstream_uri("apps", served).as_deref(), Some(uri));
        }
        assert_eq!(upstream_uri("other", "ui://apps/server/view.html"), None);
        assert_eq!(upstream_uri("app", "ui://apps/server/view.html"), None);
        assert_eq!(upstream_uri("apps", "ui://apps"), None);
        assert_eq!(upstream_uri("apps", "no scheme"), None);
    }

    #[test]
    fn an_apps_resource_uri_is_served_under_its_source() {
        let schema = serde_json::json!({"type": "object"});
        let definition = ToolDefinition::new("show", schema.as_object().cloned().unwrap())
            .unwrap()
            .with_meta(
                serde_json::json!({"ui": {"resourceUri": "ui://show/app.html"}, "ui/resourceUri": "ui://show/app.html", "other": 1})
                    .as_object()
                    .cloned()
                    .unwrap(),
            );
        let served = with_served_app("apps", &definition);
        let meta = served.meta().unwrap();
        assert_eq!(meta["ui"]["resourceUri"], "ui://apps/show/app.html");
        assert_eq!(meta["ui/resourceUri"], "ui://apps/show/app.html");
        assert_eq!(meta["other"], 1);
    }

    #[test]
    fn a_prompt_is_served_under_its_source_and_read_back() {
        assert_eq!(served_prompt("docs", "summarize"), "docs__summarize");
        assert_eq!(
            upstream_prompt("docs", "docs__summarize"),
            Some("summarize")
        );
        assert_eq!(upstream_prompt("doc", "docs__summarize"), None);
        assert_eq!(upstream_prompt("docs", "docs__"), None);
    }

    #[test]
    fn a_climbing_uri_is_seen_in_every_spelling() {
        for uri in [
            "ui://apps/../other/x",
            "ui://apps/%2e%2e/x",
            "ui://apps/.%2E/x",
            "file://apps//etc/..",
            "ui://apps/x\\..\\y",
            "ui:..",
        ] {
            assert!(climbs(uri), "{uri}");
        }
        for uri in [
            "ui://apps/x..y/z",
            "ui://apps/./x",
            "ui://apps/...",
            "test://static",
        ] {
            assert!(!climbs(uri), "{uri}");
        }
    }
}

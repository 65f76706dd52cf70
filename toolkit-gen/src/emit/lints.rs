//! The lint allows a generated item carries: descriptions are written for models and people,
//! not for rustdoc and clippy, and real ones trip their lints (a bare URL, `[optional]`, a
//! `<tag>`, a list whose next line is not indented) or leave a field without documentation.
//!
//! The allows go on the items whose documentation needs them — a module that is `include!`d may
//! hold no inner attribute, and allows on every item would grow each diff — so a crate compiles
//! under `-D warnings`, `cargo clippy -- -D warnings` and `RUSTDOCFLAGS=-D warnings cargo doc`.

use proc_macro2::TokenStream;
use quote::quote;

/// Whether a line of documentation starts a list item or a quote, after which clippy's
/// `doc_lazy_continuation` wants the next line indented.
fn starts_block(line: &str) -> bool {
    let line = line.trim_start();
    if line.starts_with(['-', '*', '+', '>']) {
        return true;
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && line[digits..].starts_with(['.', ')'])
}

/// Whether a link target is a URL or an anchor that rustdoc takes as it is (not a Rust path it
/// would resolve): no whitespace (CommonMark ends a target there), and a scheme, a root or `#`.
fn is_url(target: &str) -> bool {
    !target.contains(char::is_whitespace)
        && ["http://", "https://", "/", "#"]
            .iter()
            .any(|start| target.starts_with(start))
}

/// What rustdoc's link lints may see in `doc`: the text without the targets of its inline links
/// to URLs (`[text](https://…)`, where a URL is not bare), and whether it has brackets rustdoc
/// may read as an intra-doc link it cannot resolve — anything in brackets (`[optional]`,
/// `[text][ref]`, `[text](path)`, `[](Pet)`) but an inline link to a URL or an anchor and an
/// empty `[]` with nothing after it (`labels[]`).
fn links(doc: &str) -> (String, bool) {
    let mut text = String::with_capacity(doc.len());
    let mut may_break = false;
    let mut rest = doc;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let Some(close) = after.find(']') else {
            break;
        };
        let (inside, tail) = (&after[..close], &after[close + 1..]);
        let target = tail
            .strip_prefix('(')
            .and_then(|target| Some(&target[..target.find(')')?]));
        // Up to and with the `]`.
        text.push_str(&rest[..open + 1 + close + 1]);
        match target {
            Some(target) if is_url(target) && !inside.contains('[') => {
                // The target and its parentheses left out.
                rest = &tail[1 + target.len() + 1..];
                continue;
            }
            Some(_) => may_break = true,
            None => may_break = may_break || !inside.trim().is_empty() || tail.starts_with('['),
        }
        rest = tail;
    }
    text.push_str(rest);
    (text, may_break)
}

/// `#[allow(…)]` of the lints that `docs` (one entry per documented place of an item: itself,
/// its fields or variants; `None` for a place without documentation) can trigger; nothing when
/// none can.
pub(crate) fn allows<'d>(docs: impl IntoIterator<Item = Option<&'d str>>) -> TokenStream {
    let (mut missing, mut lazy, mut urls, mut links, mut html) =
        (false, false, false, false, false);
    for doc in docs {
        let Some(doc) = doc else {
            missing = true;
            continue;
        };
        lazy = lazy || (doc.contains('\n') && doc.lines().any(starts_block));
        let (text, may_break) = self::links(doc);
        urls = urls || text.contains("://") || text.contains("www.");
        links = links || may_break;
        html = html || doc.contains('<');
    }
    let mut lints = Vec::new();
    if missing {
        lints.push(quote!(missing_docs));
    }
    if lazy {
        lints.push(quote!(clippy::doc_lazy_continuation));
    }
    if urls {
        lints.push(quote!(rustdoc::bare_urls));
    }
    if links {
        lints.push(quote!(rustdoc::broken_intra_doc_links));
    }
    if html {
        lints.push(quote!(rustdoc::invalid_html_tags));
    }
    if lints.is_empty() {
        return TokenStream::new();
    }
    quote!(#[allow(#(#lints),*)])
}

#[cfg(test)]
mod tests {
    use super::allows;

    fn text(docs: &[Option<&str>]) -> String {
        allows(docs.iter().copied()).to_string()
    }

    #[test]
    fn only_the_lints_a_description_can_trigger_are_allowed() {
        assert_eq!(text(&[Some("A pet.")]), "");
        assert_eq!(text(&[Some("A pet."), None]), "# [allow (missing_docs)]");
        assert_eq!(
            text(&[Some("See https://example.com.")]),
            "# [allow (rustdoc :: bare_urls)]"
        );
        assert_eq!(
            text(&[Some("Options:\n- one\nmore"), Some("[optional] a <b>")]),
            "# [allow (clippy :: doc_lazy_continuation , rustdoc :: broken_intra_doc_links , rustdoc :: invalid_html_tags)]"
        );
        assert_eq!(
            text(&[Some("Steps:\n1. one\ntwo")]),
            "# [allow (clippy :: doc_lazy_continuation)]"
        );
    }

    #[test]
    fn links_to_urls_need_no_allow() {
        let see = "See \"[Using pagination](https://docs.github.com/rest/guides)\" and [a heading](#top).";
        assert_eq!(text(&[Some(see)]), "");
        assert_eq!(text(&[Some("Send `labels[]`.")]), "");
        let bare = "[Pagination](https://example.com) or https://example.com";
        assert_eq!(text(&[Some(bare)]), "# [allow (rustdoc :: bare_urls)]");
        // A target with a space is no link target, and a `](` without its `[` no link: their
        // URLs are bare.
        for doc in [
            "See [docs](https://example.com and the guide (v2).",
            "b](https://example.com)",
        ] {
            assert!(text(&[Some(doc)]).contains("bare_urls"), "{doc}");
        }
        for doc in [
            "[optional]",
            "[text](crate::Pet)",
            "[text][ref]",
            "[[nested](https://x)]",
            "[label](https://example.com",
            "tags[](string)",
            "[ ](Pet)",
            "[w](mailto:team)",
        ] {
            assert!(
                text(&[Some(doc)]).contains("broken_intra_doc_links"),
                "{doc}"
            );
        }
    }
}

//! The type model → Rust tokens (`quote`), formatted with `prettyplease`.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{ToTokens as _, quote};

use super::customize::{Attributes, Matched};
use super::naming;
use super::schema::{Item, ItemKind, Ty};

/// The identifier `name`, raw when it is a keyword. Names come from [`naming`], so they are
/// valid; should one not be, its tokens are a string, which does not parse where a name goes: the
/// module fails, naming the tool, rather than carrying a placeholder that could clash.
pub(crate) fn ident(name: &str) -> TokenStream {
    if !naming::is_plain_identifier(name) {
        let text = format!("not an identifier: {name}");
        return quote!(#text);
    }
    if naming::is_keyword(name) {
        if naming::can_be_raw(name) {
            return Ident::new_raw(name, Span::call_site()).into_token_stream();
        }
        return Ident::new(&format!("{name}_"), Span::call_site()).into_token_stream();
    }
    Ident::new(name, Span::call_site()).into_token_stream()
}

/// `#[doc = "…"]` lines (written as `///` by the formatter).
pub(crate) fn docs(doc: Option<&str>) -> TokenStream {
    let Some(doc) = doc else {
        return TokenStream::new();
    };
    let lines = doc_lines(doc).into_iter().map(|line| {
        let line = format!(" {line}");
        quote!(#[doc = #line])
    });
    quote!(#(#lines)*)
}

/// Whether `c` is one of the text-direction controls that rustc refuses in comments and literals
/// (they can make code read other than it compiles).
pub(crate) fn is_direction_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// A description's lines as documentation that rustdoc never runs: a description is written for
/// a model, and its code (a JSON example) is no Rust doctest. Fences open as `text`, and lines
/// outside fences lose their indentation (four spaces would open an indented code block).
pub(crate) fn doc_lines(doc: &str) -> Vec<String> {
    let mut in_fence = false;
    // `str::lines` leaves a lone `\r` in its line, and a bare CR inside a `///` comment does not
    // parse: every kind of line break counts. A text-direction control in a comment is an error
    // of rustc's (`text_direction_codepoint_in_comment`), so a description's are dropped.
    let doc = doc
        .replace("\r\n", "\n")
        .replace('\r', "\n")
        .replace(is_direction_control, "");
    let mut lines: Vec<String> = doc
        .lines()
        .map(|line| {
            let trimmed = line.trim();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                in_fence = !in_fence;
                if in_fence {
                    return "```text".to_owned();
                }
                return "```".to_owned();
            }
            if in_fence {
                line.trim_end().to_owned()
            } else {
                trimmed.to_owned()
            }
        })
        .collect();
    if in_fence {
        lines.push("```".to_owned());
    }
    lines
}

/// The tokens of a type.
fn ty(ty: &Ty) -> TokenStream {
    match ty {
        Ty::Bool => quote!(bool),
        Ty::Int(name) => {
            let name = ident(name);
            quote!(#name)
        }
        Ty::F64 => quote!(f64),
        Ty::String => quote!(String),
        Ty::Unit => quote!(()),
        Ty::Value => quote!(__tk::serde_json::Value),
        Ty::Object => {
            quote!(__tk::serde_json::Map<String, __tk::serde_json::Value>)
        }
        Ty::Option(inner) => {
            let inner = self::ty(inner);
            quote!(Option<#inner>)
        }
        Ty::Nullable(inner) => {
            let inner = self::ty(inner);
            quote!(__tk::Nullable<#inner>)
        }
        Ty::Vec(inner) => {
            let inner = self::ty(inner);
            quote!(Vec<#inner>)
        }
        Ty::Map(inner) => {
            let inner = self::ty(inner);
            quote!(::std::collections::BTreeMap<String, #inner>)
        }
        Ty::Tuple(items) => {
            let items = items.iter().map(self::ty);
            quote!((#(#items,)*))
        }
        Ty::Box(inner) => {
            let inner = self::ty(inner);
            quote!(Box<#inner>)
        }
        Ty::Named(name) => {
            let name = ident(name);
            quote!(#name)
        }
        // Checked as a type before anything is emitted; one that is not lexes into tokens that
        // do not parse, which fails the module rather than writing it.
        Ty::Path(path) => path.parse().unwrap_or_else(|_| quote!(<)),
    }
}

/// The one `use` a generated module starts with: `__tk`, the `codegen` module `contract` (see
/// `source::contract`), which every path of the module names (shorter code, formatted and
/// parsed faster, than the full path at every use).
pub(crate) fn prelude(contract: &TokenStream) -> TokenStream {
    quote! {
        #[allow(unused_imports)]
        use #contract as __tk;
    }
}

/// The tokens of the module's items, with the user's attributes; the rules used are recorded in
/// `matched`.
pub(crate) fn items(items: &[Item], attributes: &Attributes, matched: &mut Matched) -> TokenStream {
    let items = items.iter().map(|i| item(i, attributes, matched));
    quote!(#(#items)*)
}

fn item(item: &Item, attributes: &Attributes, matched: &mut Matched) -> TokenStream {
    let name = ident(&item.name);
    let doc = docs(item.doc.as_deref());
    // A type alias takes no attributes.
    let user_attributes = match item.kind {
        ItemKind::Alias(_) => TokenStream::new(),
        _ => attributes.of_type(&item.name, matched),
    };
    // The allows after the documentation: every kind of item starts with it.
    let allows = super::lints::allows(documented(item));
    let doc = quote! {
        #doc
        #allows
    };
    item_tokens(item, &name, &doc, &user_attributes, attributes, matched)
}

/// The derives of a struct or a data-carrying enum, with `extra` derives after `Clone` and serde's
/// container attributes `serde` after `crate`: serde's derives through the contract's re-export
/// (`__tk`, the module's one `use` of a `codegen` module: see [`prelude`]), told where serde is,
/// since generated code names no crate but that one and std.
fn derive(extra: TokenStream, serde: TokenStream) -> TokenStream {
    quote! {
        #[derive(Debug, Clone, #extra PartialEq, __tk::Serialize, __tk::Deserialize)]
        #[serde(crate = "__tk::serde" #serde)]
    }
}

/// The documentation of each place of `item` that rustdoc documents: itself, and its fields or
/// variants (`None` where there is none).
fn documented(item: &Item) -> Vec<Option<&str>> {
    let mut docs = vec![item.doc.as_deref()];
    match &item.kind {
        ItemKind::Struct(structure) => {
            docs.extend(structure.fields.iter().map(|field| field.doc.as_deref()));
        }
        ItemKind::StringEnum { .. } => docs.push(None),
        ItemKind::Untagged(variants) => {
            docs.extend(variants.iter().map(|variant| variant.doc.as_deref()));
        }
        ItemKind::Tagged { variants, .. } => {
            docs.extend(variants.iter().map(|variant| variant.doc.as_deref()));
        }
        ItemKind::Newtype(_) | ItemKind::Tuple(_) | ItemKind::Alias(_) => {}
    }
    docs
}

/// The tokens of `item`, without the lint allows its documentation needs.
fn item_tokens(
    item: &Item,
    name: &TokenStream,
    doc: &TokenStream,
    user_attributes: &TokenStream,
    attributes: &Attributes,
    matched: &mut Matched,
) -> TokenStream {
    match &item.kind {
        ItemKind::Struct(structure) => {
            let fields = structure.fields.iter().map(|field| {
                let field_name = ident(&field.name);
                let field_doc = docs(field.doc.as_deref());
                let field_ty = ty(&field.ty);
                let rename = (field.json_name != field.name).then(|| {
                    let json = &field.json_name;
                    quote!(#[serde(rename = #json)])
                });
                // Left out when absent; a required `Option` (required and nullable) must be there
                // when read: serde's derive would read a missing `Option` as `None`.
                let user_attributes = attributes.of_field(&item.name, &field.name, matched);
                let skip = match (&field.ty, field.optional) {
                    (Ty::Nullable(_), true) => Some(
                        quote!(#[serde(default, skip_serializing_if = "__tk::Nullable::is_absent")]),
                    ),
                    // serde's derive reads a missing `Option` as `None` without `default`, unless
                    // the user's attributes read it some other way (`with = "…"`).
                    (Ty::Option(_), true) if user_attributes.is_empty() => Some(
                        quote!(#[serde(skip_serializing_if = "Option::is_none")]),
                    ),
                    (_, true) => Some(
                        quote!(#[serde(default, skip_serializing_if = "Option::is_none")]),
                    ),
                    (Ty::Option(_), false) => Some(quote!(#[serde(deserialize_with = "__tk::present")])),
                    (_, false) => None,
                };
                let deprecated = field.deprecated.then(|| quote!(#[deprecated]));
                quote! {
                    #field_doc
                    #deprecated
                    #rename
                    #skip
                    #user_attributes
                    pub #field_name: #field_ty,
                }
            }).collect::<Vec<_>>();
            // `deny_unknown_fields` after the derive: before it, rustc 1.95 refuses the code.
            let (deny, extra) = if structure.closed {
                (quote!(, deny_unknown_fields), TokenStream::new())
            } else if structure.lenient {
                (TokenStream::new(), TokenStream::new())
            } else {
                let extra_name = ident(&structure.extra_name);
                (
                    TokenStream::new(),
                    quote! {
                        /// The properties the schema does not name.
                        #[serde(flatten)]
                        pub #extra_name: __tk::serde_json::Map<String, __tk::serde_json::Value>,
                    },
                )
            };
            // A struct whose fields may all be left out has a `Default`, so that a literal with
            // `..Default::default()` survives a document adding an optional property.
            let default = if structure.fields.iter().all(|field| field.optional) {
                quote!(Default,)
            } else {
                TokenStream::new()
            };
            let derive = derive(default, deny);
            quote! {
                #doc
                #derive
                #user_attributes
                pub struct #name {
                    #(#fields)*
                    #extra
                }
            }
        }
        ItemKind::StringEnum {
            variants,
            catch_all,
        } => {
            let names: Vec<TokenStream> = variants.iter().map(|v| ident(&v.name)).collect();
            let values: Vec<&str> = variants.iter().map(|v| v.value.as_str()).collect();
            // The catch-all, or (an enum that tells a union's members apart) `Copy` instead;
            // the impls (values, `as_str`, `Display`, `FromStr`, serde) from the runtime's macro.
            let (copy, other_variant, other_macro) = if *catch_all {
                let other = ident(&string_enum_other(variants));
                (
                    TokenStream::new(),
                    quote! {
                        /// A value the schema does not list.
                        #other(String),
                    },
                    quote!(, ..#other),
                )
            } else {
                (quote!(Copy,), TokenStream::new(), TokenStream::new())
            };
            quote! {
                #doc
                #[derive(Debug, Clone, #copy PartialEq, Eq, Hash, PartialOrd, Ord)]
                #user_attributes
                pub enum #name {
                    #(#names,)*
                    #other_variant
                }

                __tk::string_enum!(#name { #(#names = #values),* #other_macro });
            }
        }
        ItemKind::Untagged(variants) => {
            let variants = variants.iter().map(|variant| {
                let variant_name = ident(&variant.name);
                let variant_doc = docs(variant.doc.as_deref());
                let variant_ty = ty(&variant.ty);
                quote! {
                    #variant_doc
                    #variant_name(#variant_ty),
                }
            });
            let untagged = derive(TokenStream::new(), quote!(, untagged));
            quote! {
                #doc
                #untagged
                #user_attributes
                #[allow(clippy::large_enum_variant)]
                pub enum #name {
                    #(#variants)*
                }
            }
        }
        ItemKind::Tagged { tag, variants } => {
            let variants = variants.iter().map(|variant| {
                let variant_name = ident(&variant.name);
                let variant_doc = docs(variant.doc.as_deref());
                let variant_ty = ty(&variant.ty);
                let value = &variant.value;
                quote! {
                    #variant_doc
                    #[serde(rename = #value)]
                    #variant_name(#variant_ty),
                }
            });
            let tagged = derive(TokenStream::new(), quote!(, tag = #tag));
            quote! {
                #doc
                #tagged
                #user_attributes
                #[allow(clippy::large_enum_variant, clippy::enum_variant_names)]
                pub enum #name {
                    #(#variants)*
                }
            }
        }
        ItemKind::Newtype(inner) => {
            let inner = ty(inner);
            let transparent = derive(TokenStream::new(), quote!(, transparent));
            quote! {
                #doc
                #transparent
                #user_attributes
                pub struct #name(pub #inner);
            }
        }
        ItemKind::Tuple(items) => {
            let items = items.iter().map(ty);
            let derive = derive(TokenStream::new(), TokenStream::new());
            quote! {
                #doc
                #derive
                #user_attributes
                pub struct #name(#(pub #items),*);
            }
        }
        ItemKind::Alias(inner) => {
            let inner = ty(inner);
            quote! {
                #doc
                pub type #name = #inner;
            }
        }
    }
}

/// Formats `tokens` as a source file after `header`; when the tokens are no file (a bug of the
/// emitter, never of its input), the unformatted tokens and why.
pub(crate) fn format(header: &str, tokens: TokenStream) -> (String, Option<String>) {
    match syn::parse2::<syn::File>(tokens.clone()) {
        Ok(file) => (format!("{header}\n{}", prettyplease::unparse(&file)), None),
        Err(error) => (format!("{header}\n{tokens}\n"), Some(error.to_string())),
    }
}

/// The name of a string enum's catch-all variant: `Other`, or `Other2`, … when a listed value
/// is named so already.
fn string_enum_other(variants: &[super::schema::StringVariant]) -> String {
    let mut name = "Other".to_owned();
    let mut count = 1;
    while variants.iter().any(|variant| variant.name == name) {
        count += 1;
        name = format!("Other{count}");
    }
    name
}

#[cfg(test)]
mod tests {
    use super::doc_lines;

    #[test]
    fn descriptions_never_become_doctests() {
        assert_eq!(
            doc_lines("Example:\n```json\n  {\"a\": 1}\n```\n\n    indented\nlast  "),
            [
                "Example:",
                "```text",
                "  {\"a\": 1}",
                "```",
                "",
                "indented",
                "last"
            ]
        );
        // A fence left open is closed.
        assert_eq!(
            doc_lines("```\nfn main() {}"),
            ["```text", "fn main() {}", "```"]
        );
    }

    #[test]
    fn text_direction_controls_are_dropped() {
        assert_eq!(doc_lines("safe\u{202E}txt.exe\u{2066}"), ["safetxt.exe"]);
    }

    #[test]
    fn every_kind_of_line_break_ends_a_line() {
        assert_eq!(
            doc_lines("one\rtwo\r\nthree\nfour"),
            ["one", "two", "three", "four"]
        );
    }
}

//! What a user changes of the generated types: a JSON Schema `format` or a named schema replaced
//! by a type of their own (typify's `with_replacement`, prost's `extern_path`), and attributes
//! added to types and fields chosen by name (prost's `type_attribute` / `field_attribute`).
//!
//! Every setting is checked before anything is emitted ([`Customizations::check`]), and every
//! module says which settings it used ([`Matched`]), so that a setting that matches nothing is
//! an error of the builder, never silent.

use std::collections::{BTreeMap, BTreeSet};

use globset::{Glob, GlobMatcher};
use proc_macro2::TokenStream;

/// The `format`s a replacement may name: JSON Schema's (2020-12) and OpenAPI's own. A format
/// outside these is refused, because a typo would match nothing and go unseen.
pub const KNOWN_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
    "int32",
    "int64",
    "float",
    "double",
    "byte",
    "binary",
    "password",
];

/// The user's changes to the generated types; empty by default.
///
/// # Examples
///
/// ```
/// use toolkit_gen::emit::Customizations;
///
/// let mut changes = Customizations::default();
/// changes.formats.insert("date-time".into(), "::std::string::String".into());
/// changes.type_attributes.push(("Pet".into(), "#[derive(Eq, Hash)]".into()));
/// assert!(changes.check().is_empty());
///
/// changes.formats.insert("datetime".into(), "Vec<".into());
/// assert_eq!(changes.check().len(), 2); // an unknown format, a type that does not parse
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Customizations {
    /// A `format` (`date-time`, `uuid`, …) → the Rust type its strings, integers or numbers
    /// become (`::chrono::DateTime<::chrono::Utc>`). Without one, a format changes nothing: a
    /// `date-time` is a `String`.
    pub formats: BTreeMap<String, String>,
    /// A named schema — the key under `$defs` (or `definitions`) a reference leads to, which for
    /// an OpenAPI document is the name under `components.schemas` — → the Rust type it becomes
    /// instead of a generated one (`crate::models::Pet`).
    pub schemas: BTreeMap<String, String>,
    /// A glob over generated type names (`Pet`, `*Input`) and an attribute (`#[derive(Eq)]`)
    /// that every type it matches gets, after its derives. A string enum has no serde derive
    /// (its serde comes from `codegen::string_enum!`), so a `#[serde(…)]` attribute does not
    /// fit it.
    pub type_attributes: Vec<(String, String)>,
    /// A glob over `Type.field` (Rust names: `Pet.name`, `*.id`) and an attribute
    /// (`#[serde(alias = "id")]`) that every field it matches gets.
    pub field_attributes: Vec<(String, String)>,
}

impl Customizations {
    #[cfg(feature = "internals")]
    /// Whether nothing is changed.
    pub fn is_empty(&self) -> bool {
        self.formats.is_empty()
            && self.schemas.is_empty()
            && self.type_attributes.is_empty()
            && self.field_attributes.is_empty()
    }

    /// Every problem of the settings, each a sentence naming the setting: an unknown format, a
    /// type that is not a Rust type, an attribute that is not an outer attribute, a glob that
    /// is not one.
    pub fn check(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for (format, path) in &self.formats {
            if !KNOWN_FORMATS.contains(&format.as_str()) {
                problems.push(format!(
                    "the format `{format}` of a type replacement is no JSON Schema or OpenAPI format"
                ));
            }
            if syn::parse_str::<syn::Type>(path).is_err() {
                problems.push(format!(
                    "the replacement `{path}` of the format `{format}` is not a Rust type"
                ));
            }
        }
        for (schema, path) in &self.schemas {
            if syn::parse_str::<syn::Type>(path).is_err() {
                problems.push(format!(
                    "the replacement `{path}` of the schema `{schema}` is not a Rust type"
                ));
            }
        }
        for (kind, rules) in [
            ("type", &self.type_attributes),
            ("field", &self.field_attributes),
        ] {
            for (glob, attribute) in rules {
                if Glob::new(glob).is_err() {
                    problems.push(format!("the {kind} pattern `{glob}` is not a glob"));
                }
                if outer_attributes(attribute).is_none() {
                    problems.push(format!(
                        "`{attribute}` (for the {kind}s `{glob}`) is not an attribute such as `#[derive(Eq)]`"
                    ));
                }
            }
        }
        problems
    }
}

/// The tokens of `text` when it is one or more outer attributes (`#[…]`).
fn outer_attributes(text: &str) -> Option<TokenStream> {
    use syn::parse::Parser as _;

    let tokens: TokenStream = text.parse().ok()?;
    let attributes = syn::Attribute::parse_outer.parse2(tokens.clone()).ok()?;
    (!attributes.is_empty()).then_some(tokens)
}

/// Which settings of a module's customizations (the [`Builder`](crate::Builder)'s
/// `replace_format`, `replace_schema`, `type_attribute` and `field_attribute`) a module used, by
/// key (formats and schemas) or by position (attribute rules).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Matched {
    /// Formats replaced somewhere.
    pub formats: BTreeSet<String>,
    /// Named schemas replaced somewhere.
    pub schemas: BTreeSet<String>,
    /// Type attribute rules that matched a type, by index.
    pub type_attributes: BTreeSet<usize>,
    /// Field attribute rules that matched a field, by index.
    pub field_attributes: BTreeSet<usize>,
}

impl Matched {
    /// Adds what `other` used.
    pub(crate) fn merge(&mut self, other: &Matched) {
        self.formats.extend(other.formats.iter().cloned());
        self.schemas.extend(other.schemas.iter().cloned());
        self.type_attributes
            .extend(other.type_attributes.iter().copied());
        self.field_attributes
            .extend(other.field_attributes.iter().copied());
    }

    /// Each setting of `changes` that nothing used, as a sentence.
    pub(crate) fn unused(&self, changes: &Customizations) -> Vec<String> {
        let mut unused = Vec::new();
        for format in changes.formats.keys() {
            if !self.formats.contains(format) {
                unused.push(format!(
                    "the type replacement of the format `{format}` matches no schema"
                ));
            }
        }
        for schema in changes.schemas.keys() {
            if !self.schemas.contains(schema) {
                unused.push(format!(
                    "the type replacement of the schema `{schema}` matches no named schema"
                ));
            }
        }
        for (index, (glob, _)) in changes.type_attributes.iter().enumerate() {
            if !self.type_attributes.contains(&index) {
                unused.push(format!(
                    "the type attribute for `{glob}` matches no generated type"
                ));
            }
        }
        for (index, (glob, _)) in changes.field_attributes.iter().enumerate() {
            if !self.field_attributes.contains(&index) {
                unused.push(format!(
                    "the field attribute for `{glob}` matches no generated field"
                ));
            }
        }
        unused
    }
}

/// The attribute rules of a [`Customizations`], compiled once for a module.
#[derive(Debug, Default)]
pub(crate) struct Attributes {
    types: Vec<(Option<GlobMatcher>, TokenStream)>,
    fields: Vec<(Option<GlobMatcher>, TokenStream)>,
}

impl Attributes {
    /// The rules of `changes`; one that does not compile (reported by [`Customizations::check`])
    /// keeps its place, so that indices match, and matches nothing.
    pub(crate) fn new(changes: &Customizations) -> Self {
        let compile = |rules: &[(String, String)]| {
            rules
                .iter()
                .map(|(glob, attribute)| {
                    // A rule that does not compile matches nothing and adds nothing.
                    let matcher = Glob::new(glob).ok().map(|glob| glob.compile_matcher());
                    (matcher, outer_attributes(attribute).unwrap_or_default())
                })
                .collect()
        };
        Self {
            types: compile(&changes.type_attributes),
            fields: compile(&changes.field_attributes),
        }
    }

    /// The attributes of the type `name`, recording the rules used in `matched`.
    pub(crate) fn of_type(&self, name: &str, matched: &mut Matched) -> TokenStream {
        Self::select(&self.types, name, &mut matched.type_attributes)
    }

    /// The attributes of the field `field` of the type `type_name`.
    pub(crate) fn of_field(
        &self,
        type_name: &str,
        field: &str,
        matched: &mut Matched,
    ) -> TokenStream {
        let path = format!("{type_name}.{field}");
        Self::select(&self.fields, &path, &mut matched.field_attributes)
    }

    fn select(
        rules: &[(Option<GlobMatcher>, TokenStream)],
        name: &str,
        used: &mut BTreeSet<usize>,
    ) -> TokenStream {
        let mut tokens = TokenStream::new();
        for (index, (matcher, attribute)) in rules.iter().enumerate() {
            if matcher.as_ref().is_some_and(|m| m.is_match(name)) {
                used.insert(index);
                tokens.extend(attribute.clone());
            }
        }
        tokens
    }
}

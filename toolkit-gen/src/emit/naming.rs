//! Rust names for schema names: type names, field names and enum variants that are always valid
//! identifiers, deterministic, and unique where they must be.
//!
//! Every name that differs from the JSON name it stands for is paired with a `#[serde(rename)]`
//! by the code writer; here the names are only made.

use std::collections::HashSet;

use heck::{ToSnakeCase, ToUpperCamelCase};

/// Words that can't be identifiers as they are (strict, reserved and edition-2024 keywords).
const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

/// Keywords that even a raw identifier (`r#…`) can't be.
const NOT_RAW: &[&str] = &["self", "Self", "super", "crate", "_"];

/// Whether `name` is a Rust keyword.
pub(crate) fn is_keyword(name: &str) -> bool {
    KEYWORDS.contains(&name)
}

/// Whether `name` may be written as the raw identifier `r#name`.
pub(crate) fn can_be_raw(name: &str) -> bool {
    !NOT_RAW.contains(&name)
}

/// Whether `name` is made of ASCII letters, digits and `_`, starts with no digit and is not `_`.
pub(crate) fn is_plain_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) if first.is_ascii_alphabetic() || first == '_' => {}
        _ => return false,
    }
    name != "_" && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Spells out the characters that carry meaning in real schema names (`StartTime<`, `+1`,
/// `include[]`) and turns every other non-alphanumeric ASCII character into a word break, so that
/// the case conversions below see words.
fn words(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    let mut chars = name.chars().peekable();
    let mut first = true;
    while let Some(c) = chars.next() {
        match c {
            '<' => out.push_str(" before "),
            '>' => out.push_str(" after "),
            '+' => out.push_str(" plus "),
            // A leading minus, or one before a digit, is a sign (`-1`); otherwise a separator.
            '-' if first || chars.peek().is_some_and(char::is_ascii_digit) => {
                out.push_str(" minus ");
            }
            c if c.is_ascii_alphanumeric() => out.push(c),
            _ => out.push(' '),
        }
        first = false;
    }
    out
}

/// Keeps only ASCII letters, digits and `_` (heck keeps non-ASCII letters, which are valid in
/// identifiers but not what a user can type).
fn ascii_only(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The snake_case field name for the JSON property `name`: a valid identifier, possibly a keyword
/// (the writer makes those raw), never empty.
pub(crate) fn field_name(name: &str) -> String {
    let snake = ascii_only(&words(name).to_snake_case());
    let snake = snake.trim_matches('_').to_owned();
    if snake.is_empty() {
        return "field".to_owned();
    }
    if snake.starts_with(|c: char| c.is_ascii_digit()) {
        return format!("field_{snake}");
    }
    if !can_be_raw(&snake) {
        return format!("{snake}_");
    }
    snake
}

/// The UpperCamelCase type or variant name for `name`, never empty, never starting with a digit
/// (`V1024x1024`), never `Self`.
pub(crate) fn type_name(name: &str) -> String {
    let camel = ascii_only(&words(name).to_upper_camel_case());
    if camel.is_empty() {
        return "Empty".to_owned();
    }
    if camel.starts_with(|c: char| c.is_ascii_digit()) {
        return format!("V{camel}");
    }
    if !can_be_raw(&camel) || is_keyword(&camel) {
        return format!("{camel}Value");
    }
    camel
}

/// A set of names taken in one scope (a module's types, a struct's fields, an enum's variants):
/// a name asked for twice gets `2`, `3`, … after it (`Asc`, `Asc2`), in the order asked.
#[derive(Debug, Default)]
pub(crate) struct Scope {
    taken: HashSet<String>,
}

/// The names of std's prelude that generated code writes bare (`Option<String>`, `Ok(…)`): no
/// type of a module takes them, so that they keep meaning std's (a schema named `String` is
/// `String2`).
const PRELUDE: &[&str] = &[
    "Option", "Some", "None", "Result", "Ok", "Err", "String", "Vec", "Box",
];

impl Scope {
    /// The scope of a module's types, the prelude's names already taken.
    pub(crate) fn module() -> Self {
        Self {
            taken: PRELUDE.iter().map(|name| (*name).to_owned()).collect(),
        }
    }

    /// Takes `wanted`, or the first of `wanted2`, `wanted3`, … not taken yet; `separator` goes
    /// between the name and its number (`_` for snake_case names).
    pub(crate) fn unique(&mut self, wanted: &str, separator: &str) -> String {
        if self.taken.insert(wanted.to_owned()) {
            return wanted.to_owned();
        }
        let mut count = 2_usize;
        loop {
            let candidate = format!("{wanted}{separator}{count}");
            if self.taken.insert(candidate.clone()) {
                return candidate;
            }
            count += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_are_identifiers() {
        assert_eq!(field_name("petId"), "pet_id");
        assert_eq!(field_name("if-match"), "if_match");
        assert_eq!(field_name("StartTime<"), "start_time_before");
        assert_eq!(field_name("StartTime>"), "start_time_after");
        assert_eq!(field_name("include[]"), "include");
        assert_eq!(field_name("created_at.after"), "created_at_after");
        assert_eq!(field_name("type"), "type");
        assert_eq!(field_name("self"), "self_");
        assert_eq!(field_name("1st"), "field_1st");
        assert_eq!(field_name(""), "field");
        assert_eq!(field_name("___"), "field");
        assert_eq!(field_name("héllo"), "h_llo");
    }

    #[test]
    fn type_names_are_identifiers() {
        assert_eq!(type_name("list_pets"), "ListPets");
        assert_eq!(type_name("+1"), "Plus1");
        assert_eq!(type_name("-1"), "Minus1");
        assert_eq!(type_name("reactions-+1"), "ReactionsPlus1");
        assert_eq!(type_name("1024x1024"), "V1024x1024");
        assert_eq!(type_name("/"), "Empty");
        assert_eq!(type_name(""), "Empty");
        assert_eq!(type_name("self"), "SelfValue");
        for name in ["", "-", "+", "9", "é", "a b", "Self"] {
            assert!(is_plain_identifier(&type_name(name)), "{name}");
            assert!(is_plain_identifier(&field_name(name)), "{name}");
        }
    }

    #[test]
    fn a_module_leaves_the_preludes_names_to_std() {
        let mut scope = Scope::module();
        assert_eq!(scope.unique("String", ""), "String2");
        assert_eq!(scope.unique("Ok", ""), "Ok2");
        assert_eq!(scope.unique("Pet", ""), "Pet");
    }

    #[test]
    fn a_scope_numbers_repeats() {
        let mut scope = Scope::default();
        assert_eq!(scope.unique("Asc", ""), "Asc");
        assert_eq!(scope.unique("Asc", ""), "Asc2");
        assert_eq!(scope.unique("Asc", ""), "Asc3");
        assert_eq!(scope.unique("a", "_"), "a");
        assert_eq!(scope.unique("a", "_"), "a_2");
    }
}

//! The `$defs` name of each place of a document a reference leads to: [`Names`].
//!
//! A schema `#/components/schemas/Pet` is named `Pet`; any other place of the document by its
//! pointer (`#/components/parameters/id/schema` → `components_parameters_id_schema`); names are
//! made of `A-Z a-z 0-9 _ . -` (no escaping needed in a `$ref`), and two places that would share
//! one are told apart with `_2`, `_3`, … in the order the reader meets them.

use std::collections::{HashMap, HashSet};

use percent_encoding::percent_decode_str;

/// The `$defs` name of each place of the document a reference leads to.
#[derive(Debug, Default)]
pub(crate) struct Names {
    by_reference: HashMap<String, String>,
    taken: HashSet<String>,
}

impl Names {
    /// The name of the place `reference` leads to, the same every time it is asked.
    pub(crate) fn name(&mut self, reference: &str) -> String {
        if let Some(name) = self.by_reference.get(reference) {
            return name.clone();
        }
        let decoded = percent_decode_str(reference.trim_start_matches('#')).decode_utf8_lossy();
        let tokens: Vec<String> = decoded
            .split('/')
            .skip(1)
            .map(|token| token.replace("~1", "/").replace("~0", "~"))
            .collect();
        let wanted = match tokens.as_slice() {
            [components, schemas, name] if components == "components" && schemas == "schemas" => {
                sanitize(name)
            }
            _ => sanitize(&tokens.join("_")),
        };
        let name = self.take(&wanted);
        self.by_reference.insert(reference.to_owned(), name.clone());
        name
    }

    /// A name of its own for a variant of the entry `name` (`Pet.request`): asked once per
    /// variant, it is told apart from every other name like a place's.
    pub(crate) fn variant(&mut self, name: &str, suffix: &str) -> String {
        self.take(&format!("{name}.{suffix}"))
    }

    /// `wanted`, or the first of `wanted_2`, `wanted_3`, … no place has, taken.
    fn take(&mut self, wanted: &str) -> String {
        let mut name = wanted.to_owned();
        let mut count = 1;
        while self.taken.contains(&name) {
            count += 1;
            name = format!("{wanted}_{count}");
        }
        self.taken.insert(name.clone());
        name
    }
}

/// `text` in `A-Z a-z 0-9 _ . -`, every other character as `_`; `schema` when empty.
fn sanitize(text: &str) -> String {
    let name: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() {
        "schema".to_owned()
    } else {
        name
    }
}

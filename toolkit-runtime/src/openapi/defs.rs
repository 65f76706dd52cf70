//! The schemas of the document an input schema refers to, gathered under its `$defs` so that it
//! stands alone.
//!
//! Each schema of the document is converted once ([`Converter`]) and kept; an operation's input
//! schema takes the ones it reaches, following references from schema to schema. Every
//! reference is rewritten to `#/$defs/<name>`, so a cycle (a `Tree` whose `children` are `Tree`s)
//! stays a reference and never unrolls.
//!
//! A schema `#/components/schemas/Pet` is named `Pet`; any other place of the document by its
//! pointer (`#/components/parameters/id/schema` → `components_parameters_id_schema`); names are
//! made of `A-Z a-z 0-9 _ . -` (no escaping needed in a `$ref`), and two places that would share
//! one are told apart with `_2`, `_3`, … in the order the reader meets them.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use percent_encoding::percent_decode_str;
use serde_json::{Map, Value};

use super::SkipReason;
use super::pointer;
use super::schema::{Converter, Dialect};

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
        let mut name = wanted.clone();
        let mut count = 1;
        while self.taken.contains(&name) {
            count += 1;
            name = format!("{wanted}_{count}");
        }
        self.taken.insert(name.clone());
        self.by_reference.insert(reference.to_owned(), name.clone());
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

/// A converted schema of the document and the references it makes.
type Converted = Arc<(Value, Vec<String>)>;

/// The schemas of one document, converted on first use.
#[derive(Debug)]
pub(crate) struct Defs<'d> {
    document: &'d Value,
    dialect: Dialect,
    names: Names,
    cache: HashMap<String, Result<Converted, SkipReason>>,
}

impl<'d> Defs<'d> {
    /// The schemas of `document`, read in `dialect`.
    pub(crate) fn new(document: &'d Value, dialect: Dialect) -> Self {
        Self {
            document,
            dialect,
            names: Names::default(),
            cache: HashMap::new(),
        }
    }

    /// A schema written in an operation (a parameter's, a body's), converted; its references
    /// are pushed onto `refs`.
    ///
    /// # Errors
    ///
    /// As [`Converter::convert`].
    pub(crate) fn convert(
        &mut self,
        schema: &Value,
        refs: &mut Vec<String>,
    ) -> Result<Value, SkipReason> {
        Converter {
            dialect: self.dialect,
            names: &mut self.names,
            refs,
            place: None,
        }
        .convert(schema)
    }

    /// The `$defs` that `refs` reach, each converted, named as its references name it.
    ///
    /// # Errors
    ///
    /// The reason of the first reference that leads outside the document, to nothing, or to
    /// something that is no schema.
    pub(crate) fn gather(&mut self, refs: Vec<String>) -> Result<Map<String, Value>, SkipReason> {
        let mut defs = Map::new();
        let mut seen = HashSet::new();
        let mut queue = refs;
        while let Some(reference) = queue.pop() {
            if !seen.insert(reference.clone()) {
                continue;
            }
            let converted = self.definition(&reference)?;
            defs.insert(self.names.name(&reference), converted.0.clone());
            queue.extend(
                converted
                    .1
                    .iter()
                    .filter(|next| !seen.contains(*next))
                    .cloned(),
            );
        }
        Ok(defs)
    }

    fn definition(&mut self, reference: &str) -> Result<Converted, SkipReason> {
        if let Some(cached) = self.cache.get(reference) {
            return cached.clone();
        }
        let converted = self.convert_place(reference);
        self.cache.insert(reference.to_owned(), converted.clone());
        converted
    }

    fn convert_place(&mut self, reference: &str) -> Result<Converted, SkipReason> {
        let target = pointer::resolve(self.document, reference)?;
        let not_a_schema = || SkipReason::NotASchema {
            reference: reference.to_owned(),
        };
        // `#/components/parameters/id` is a parameter, `#/components/parameters/id/schema` its
        // schema: a component of any kind but `schemas` is no schema itself.
        let decoded = percent_decode_str(reference).decode_utf8_lossy();
        let tokens: Vec<&str> = decoded.trim_start_matches('#').split('/').skip(1).collect();
        if let ["components", kind, _] = tokens.as_slice()
            && *kind != "schemas"
        {
            return Err(not_a_schema());
        }
        if !(target.is_object() || target.is_boolean()) {
            return Err(not_a_schema());
        }
        let mut refs = Vec::new();
        let place = self.names.name(reference);
        let schema = Converter {
            dialect: self.dialect,
            names: &mut self.names,
            refs: &mut refs,
            place: Some(place),
        }
        .convert(target)?;
        Ok(Arc::new((schema, refs)))
    }
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_cycle_stays_a_reference() {
        let document = json!({"components": {"schemas": {
            "Tree": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/components/schemas/Tree"}}}}
        }}});
        let mut defs = Defs::new(&document, Dialect::V31);
        let mut refs = Vec::new();
        let root = defs
            .convert(&json!({"$ref": "#/components/schemas/Tree"}), &mut refs)
            .unwrap();
        assert_eq!(root, json!({"$ref": "#/$defs/Tree"}));
        let gathered = defs.gather(refs).unwrap();
        assert_eq!(
            gathered["Tree"]["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Tree"})
        );
        assert_eq!(gathered.len(), 1);
    }

    #[test]
    fn a_recursive_ref_leads_back_to_its_schema() {
        let document = json!({"components": {"schemas": {
            "Filter": {"$recursiveAnchor": true, "type": "object", "properties": {"filters": {"items": {"$recursiveRef": "#"}}}}
        }}});
        let mut defs = Defs::new(&document, Dialect::V31);
        let gathered = defs
            .gather(vec!["#/components/schemas/Filter".into()])
            .unwrap();
        assert_eq!(
            gathered["Filter"],
            json!({"type": "object", "properties": {"filters": {"items": {"$ref": "#/$defs/Filter"}}}})
        );
    }

    #[test]
    fn places_that_would_share_a_name_are_told_apart() {
        let mut names = Names::default();
        assert_eq!(names.name("#/components/schemas/a b"), "a_b");
        assert_eq!(names.name("#/components/schemas/a_b"), "a_b_2");
        assert_eq!(names.name("#/components/schemas/a%20b"), "a_b_3");
        assert_eq!(names.name("#/components/schemas/a b"), "a_b");
        assert_eq!(names.name("#/paths/~1pets/get"), "paths__pets_get");
    }

    #[test]
    fn references_to_other_components_are_no_schemas() {
        let document = json!({"components": {"parameters": {"id": {"name": "id", "in": "path", "schema": {"type": "string"}}}}});
        let mut defs = Defs::new(&document, Dialect::V31);
        assert!(matches!(
            defs.gather(vec!["#/components/parameters/id".into()]),
            Err(SkipReason::NotASchema { .. })
        ));
        assert!(
            defs.gather(vec!["#/components/parameters/id/schema".into()])
                .is_ok()
        );
        assert!(matches!(
            defs.gather(vec!["https://example.com/s.json".into()]),
            Err(SkipReason::ExternalReference { .. })
        ));
    }
}

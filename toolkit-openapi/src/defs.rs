//! The schemas of the document an input schema refers to, gathered under its `$defs` so that it
//! stands alone.
//!
//! Each schema of the document is converted once ([`Converter`]) and kept; an operation's input
//! schema takes the ones it reaches, following references from schema to schema. Every
//! reference is rewritten to `#/$defs/<name>`, so a cycle (a `Tree` whose `children` are `Tree`s)
//! stays a reference and never unrolls.
//!
//! Read with [`ReadOptions::shared_defs`](super::ReadOptions::shared_defs), an operation's
//! schema names its entries instead (`"$defs": ["Pet", "Tag"]`, in the same order) and each entry
//! is copied once for the whole document ([`Defs::into_shared`]): on Stripe's description an
//! operation reaches 490 of its 775 schemas on average, 222,000 copies (310 MB of JSON) in the
//! standalone form.
//!
//! A schema `#/components/schemas/Pet` is named `Pet`; any other place of the document by its
//! pointer (`#/components/parameters/id/schema` → `components_parameters_id_schema`); names are
//! made of `A-Z a-z 0-9 _ . -` (no escaping needed in a `$ref`), and two places that would share
//! one are told apart with `_2`, `_3`, … in the order the reader meets them.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use percent_encoding::percent_decode_str;
use serde_json::{Map, Value};

use super::def_names::Names;
use super::pointer;
use super::schema::{Converter, SchemaDialect};
use super::visibility::{self, Directed, Direction};
use super::{ReadOptions, SkipReason};

/// A converted schema of the document, kept for every schema that reaches it.
type Converted = Arc<Entry>;

/// A schema of the document, converted.
#[derive(Debug)]
struct Entry {
    schema: Value,
    /// The references it makes.
    refs: Vec<String>,
    /// Its size as JSON text.
    size: usize,
    /// Per direction (request, answer), whether the keyword that direction leaves out appears
    /// in it: when none of an operation's entries has it, the direction changes none of them.
    mentions: [bool; 2],
    /// Per direction, the name of its variant there, or `None` when it is the same there; set
    /// once known.
    variant: [OnceLock<Option<String>>; 2],
}

/// The schemas of one document, converted on first use.
#[derive(Debug)]
pub(crate) struct Defs<'d> {
    document: &'d Value,
    dialect: SchemaDialect,
    names: Names,
    cache: HashMap<String, Result<Converted, SkipReason>>,
    /// The entries named so far, each once, when schemas name their entries rather than hold
    /// them (`None`: each schema holds its own copies).
    shared: Option<Map<String, Value>>,
    /// The bytes of JSON the schemas' own copies may take, and those they take so far.
    budget: usize,
    copied: usize,
    /// The variants made so far, by name.
    variants: HashMap<String, Converted>,
}

/// What [`Defs::gather`] gathered for one schema.
#[derive(Debug)]
pub(crate) struct Gathered {
    /// The schema's `$defs`: its entries, or their names when entries are shared.
    pub(crate) defs: Option<Value>,
    /// What the direction changes in the schema's own subschemas (apply it to them).
    pub(crate) directed: Directed,
}

impl<'d> Defs<'d> {
    /// The schemas of `document`, read in `dialect`; with `options.shared_defs` for schemas
    /// that name their entries, kept once in [`Defs::into_shared`], else copied into each
    /// schema within `options.copy_budget`.
    pub(crate) fn new(document: &'d Value, dialect: SchemaDialect, options: &ReadOptions) -> Self {
        Self {
            document,
            dialect,
            names: Names::default(),
            cache: HashMap::new(),
            shared: options.shared_defs.then(Map::new),
            budget: options.copy_budget,
            copied: 0,
            variants: HashMap::new(),
        }
    }

    /// The entries every schema named, each once (empty unless made `shared`).
    pub(crate) fn into_shared(self) -> Map<String, Value> {
        self.shared.unwrap_or_default()
    }

    /// The entry `name` of the shared entries, once a schema named it.
    pub(crate) fn shared_entry(&self, name: &str) -> Option<&Value> {
        self.shared.as_ref()?.get(name)
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

    /// The `$defs` of a schema whose references are `refs`, as `direction` carries them: the
    /// entries they reach, each converted, named as its references name it — an object of them,
    /// or, when the entries are shared, the list of their names (each entry kept in the shared
    /// ones); `None` when `refs` reach nothing. An entry that changes in `direction` is its
    /// variant there (see `visibility`); [`Gathered::directed`] makes the schema's own
    /// properties and references agree.
    ///
    /// # Errors
    ///
    /// The reason of the first reference that leads outside the document, to nothing, or to
    /// something that is no schema; [`SkipReason::OverBudget`] when the copies would take the
    /// document's past its budget.
    pub(crate) fn gather(
        &mut self,
        refs: Vec<String>,
        direction: Direction,
    ) -> Result<Gathered, SkipReason> {
        let reached = self.reach(refs)?;
        let (reached, directed) = self.directed(reached, direction);
        if reached.is_empty() {
            return Ok(Gathered {
                defs: None,
                directed,
            });
        }
        let defs = match &mut self.shared {
            Some(shared) => {
                let mut names = Vec::with_capacity(reached.len());
                for (name, converted) in reached {
                    if !shared.contains_key(&name) {
                        shared.insert(name.clone(), converted.schema.clone());
                    }
                    names.push(Value::String(name));
                }
                Value::Array(names)
            }
            None => {
                let size = reached.iter().fold(0_usize, |sum, (_, converted)| {
                    sum.saturating_add(converted.size)
                });
                let copied = self.copied.saturating_add(size);
                if copied > self.budget {
                    return Err(SkipReason::OverBudget {
                        budget: self.budget,
                    });
                }
                self.copied = copied;
                Value::Object(
                    reached
                        .into_iter()
                        .map(|(name, converted)| (name, converted.schema.clone()))
                        .collect(),
                )
            }
        };
        Ok(Gathered {
            defs: Some(defs),
            directed,
        })
    }

    /// The `reached` entries as `direction` carries them: each that changes there (it has a
    /// property the direction does not carry, or reaches an entry that changes) replaced by its
    /// variant, made once per document; and how the schema that reached them changes.
    ///
    /// Linear in the entries reached: whether an entry changes is found once per direction
    /// (`reached` holds everything an entry reaches, so the answer is the entry's own), and a
    /// variant is made once.
    fn directed(
        &mut self,
        reached: Vec<(String, Converted)>,
        direction: Direction,
    ) -> (Vec<(String, Converted)>, Directed) {
        let index = direction as usize;
        if !reached
            .iter()
            .any(|(_, converted)| converted.mentions[index])
        {
            return (
                reached,
                Directed::new(direction, HashSet::new(), HashMap::new()),
            );
        }
        let keyword = direction.keyword();
        let marked: HashSet<String> = reached
            .iter()
            .filter(|(_, converted)| visibility::is_marked(&converted.schema, keyword))
            .map(|(name, _)| name.clone())
            .collect();
        let unknown = reached
            .iter()
            .any(|(_, converted)| converted.variant[index].get().is_none());
        if unknown {
            self.name_variants(&reached, direction, &marked);
        }
        let renamed: HashMap<String, String> = reached
            .iter()
            .filter_map(|(name, converted)| {
                let variant = converted.variant[index].get()?.as_ref()?;
                Some((name.clone(), variant.clone()))
            })
            .collect();
        let directed = Directed::new(direction, marked, renamed);
        if directed.renames_nothing() {
            return (reached, directed);
        }
        let reached = reached
            .into_iter()
            .map(|(name, converted)| match directed.variant(&name) {
                None => (name, converted),
                Some(variant) => {
                    let made = self.variants.entry(variant.to_owned()).or_insert_with(|| {
                        let mut schema = converted.schema.clone();
                        directed.apply(&mut schema);
                        Arc::new(Entry {
                            schema,
                            refs: Vec::new(),
                            size: converted.size,
                            mentions: [false; 2],
                            variant: Default::default(),
                        })
                    });
                    (variant.to_owned(), Arc::clone(made))
                }
            })
            .collect();
        (reached, directed)
    }

    /// Finds which of `reached` change in `direction` and names their variants: an entry
    /// changes when it leaves out a property itself or refers to one that changes (followed
    /// backwards from the first kind).
    fn name_variants(
        &mut self,
        reached: &[(String, Converted)],
        direction: Direction,
        marked: &HashSet<String>,
    ) {
        let probe = Directed::new(direction, marked.clone(), HashMap::new());
        let mut referrers: HashMap<String, Vec<&str>> = HashMap::new();
        let mut changes = HashSet::new();
        let mut queue = Vec::new();
        for (name, converted) in reached {
            for reference in &converted.refs {
                referrers
                    .entry(self.names.name(reference))
                    .or_default()
                    .push(name);
            }
            let known = converted.variant[direction as usize].get();
            if known.map_or_else(|| probe.removes(&converted.schema), Option::is_some) {
                changes.insert(name.as_str());
                queue.push(name.as_str());
            }
        }
        while let Some(name) = queue.pop() {
            for referrer in referrers.get(name).into_iter().flatten() {
                if changes.insert(referrer) {
                    queue.push(referrer);
                }
            }
        }
        for (name, converted) in reached {
            let known = &converted.variant[direction as usize];
            if known.get().is_none() {
                let variant = changes
                    .contains(name.as_str())
                    .then(|| self.names.variant(name, direction.suffix()));
                let _ = known.set(variant);
            }
        }
    }

    /// The entries `refs` reach, each once, in the order a schema's `$defs` lists them.
    fn reach(&mut self, refs: Vec<String>) -> Result<Vec<(String, Converted)>, SkipReason> {
        let mut reached = Vec::new();
        let mut seen = HashSet::new();
        let mut queue = refs;
        while let Some(reference) = queue.pop() {
            if !seen.insert(reference.clone()) {
                continue;
            }
            let converted = self.definition(&reference)?;
            queue.extend(
                converted
                    .refs
                    .iter()
                    .filter(|next| !seen.contains(*next))
                    .cloned(),
            );
            reached.push((self.names.name(&reference), converted));
        }
        Ok(reached)
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
        // Measured once per schema: the budget of copies counts in bytes of JSON.
        let size = serde_json::to_string(&schema).map_or(0, |text| text.len());
        let mentions = [Direction::Request, Direction::Answer]
            .map(|direction| visibility::mentions(&schema, direction.keyword()));
        Ok(Arc::new(Entry {
            schema,
            refs,
            size,
            mentions,
            variant: Default::default(),
        }))
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
        let mut defs = Defs::new(&document, SchemaDialect::V31, &ReadOptions::default());
        let mut refs = Vec::new();
        let root = defs
            .convert(&json!({"$ref": "#/components/schemas/Tree"}), &mut refs)
            .unwrap();
        assert_eq!(root, json!({"$ref": "#/$defs/Tree"}));
        let gathered = defs.gather(refs, Direction::Request).unwrap().defs.unwrap();
        assert_eq!(
            gathered["Tree"]["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Tree"})
        );
        assert_eq!(gathered.as_object().map(Map::len), Some(1));
    }

    #[test]
    fn a_recursive_ref_leads_back_to_its_schema() {
        let document = json!({"components": {"schemas": {
            "Filter": {"$recursiveAnchor": true, "type": "object", "properties": {"filters": {"items": {"$recursiveRef": "#"}}}}
        }}});
        let mut defs = Defs::new(&document, SchemaDialect::V31, &ReadOptions::default());
        let gathered = defs
            .gather(
                vec!["#/components/schemas/Filter".into()],
                Direction::Request,
            )
            .unwrap()
            .defs
            .unwrap();
        assert_eq!(
            gathered["Filter"],
            json!({"type": "object", "properties": {"filters": {"items": {"$ref": "#/$defs/Filter"}}}})
        );
    }

    #[test]
    fn shared_entries_are_named_in_the_order_they_would_be_held() {
        let document = json!({"components": {"schemas": {
            "Pet": {"type": "object", "properties": {"tag": {"$ref": "#/components/schemas/Tag"}}},
            "Tag": {"type": "string"}
        }}});
        let refs = || vec!["#/components/schemas/Pet".to_owned()];
        let held = Defs::new(&document, SchemaDialect::V31, &ReadOptions::default())
            .gather(refs(), Direction::Request)
            .unwrap()
            .defs
            .unwrap();
        let mut shared = Defs::new(
            &document,
            SchemaDialect::V31,
            &ReadOptions::default().shared_defs(true),
        );
        let named = shared
            .gather(refs(), Direction::Request)
            .unwrap()
            .defs
            .unwrap();
        let again = shared
            .gather(refs(), Direction::Request)
            .unwrap()
            .defs
            .unwrap();
        let keys: Vec<Value> = held.as_object().unwrap().keys().map(|k| json!(k)).collect();
        assert_eq!(named, Value::Array(keys));
        assert_eq!(again, named);
        assert_eq!(shared.shared_entry("Tag"), Some(&json!({"type": "string"})));
        assert_eq!(Value::Object(shared.into_shared()), held);
    }

    #[test]
    fn an_entry_that_changes_in_a_direction_is_a_variant_made_once() {
        let document = json!({"components": {"schemas": {
            "Owner": {"type": "object", "properties": {"pet": {"$ref": "#/components/schemas/Pet"}, "tag": {"$ref": "#/components/schemas/Tag"}}},
            "Pet": {"type": "object", "required": ["id"], "properties": {"id": {"readOnly": true}, "name": {"type": "string"}}},
            "Tag": {"type": "string"}
        }}});
        let refs = || vec!["#/components/schemas/Owner".to_owned()];
        let mut shared = Defs::new(
            &document,
            SchemaDialect::V31,
            &ReadOptions::default().shared_defs(true),
        );
        let sent = shared.gather(refs(), Direction::Request).unwrap();
        let again = shared.gather(refs(), Direction::Request).unwrap();
        let answered = shared.gather(refs(), Direction::Answer).unwrap();
        assert_eq!(sent.defs, again.defs);
        let mut names: Vec<Value> = sent.defs.unwrap().as_array().unwrap().clone();
        names.sort_by_key(ToString::to_string);
        assert_eq!(
            names,
            [json!("Owner.request"), json!("Pet.request"), json!("Tag")]
        );
        let mut answer_names = answered.defs.unwrap().as_array().unwrap().clone();
        answer_names.sort_by_key(ToString::to_string);
        assert_eq!(answer_names, [json!("Owner"), json!("Pet"), json!("Tag")]);
        let mut root = json!({"$ref": "#/$defs/Owner"});
        sent.directed.apply(&mut root);
        assert_eq!(root, json!({"$ref": "#/$defs/Owner.request"}));
        assert_eq!(
            shared.shared_entry("Owner.request").unwrap()["properties"]["pet"],
            json!({"$ref": "#/$defs/Pet.request"})
        );
        assert_eq!(
            shared.shared_entry("Pet.request"),
            Some(
                &json!({"type": "object", "required": [], "properties": {"name": {"type": "string"}}})
            )
        );
        assert_eq!(shared.into_shared().len(), 5);

        // Copies carry the same variants under the same names.
        let copied = Defs::new(&document, SchemaDialect::V31, &ReadOptions::default())
            .gather(refs(), Direction::Request)
            .unwrap()
            .defs
            .unwrap();
        let mut keys: Vec<&String> = copied.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["Owner.request", "Pet.request", "Tag"]);
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
        let mut defs = Defs::new(&document, SchemaDialect::V31, &ReadOptions::default());
        assert!(matches!(
            defs.gather(
                vec!["#/components/parameters/id".into()],
                Direction::Request
            ),
            Err(SkipReason::NotASchema { .. })
        ));
        assert!(
            defs.gather(
                vec!["#/components/parameters/id/schema".into()],
                Direction::Request
            )
            .is_ok()
        );
        assert!(matches!(
            defs.gather(
                vec!["https://example.com/s.json".into()],
                Direction::Request
            ),
            Err(SkipReason::ExternalReference { .. })
        ));
    }
}

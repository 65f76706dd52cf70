//! `readOnly` and `writeOnly`: which properties each direction carries. OpenAPI says a
//! `readOnly` property is sent only in answers and a `writeOnly` one only in requests, so an
//! input leaves the first out and an answer the second.
//!
//! A property goes with its name in `required`; `additionalProperties: false` stays, so a
//! closed schema stays closed without it (the model cannot send an `id` the API refuses). A
//! property is marked by its own schema, or by the `$defs` entry its `$ref` names (3.0 ignores
//! a `$ref`'s siblings, so documents mark the target).
//!
//! A `$defs` entry that changes in a direction (it has such a property, or reaches an entry
//! that has) is that direction's *variant* of the entry, named apart (`Pet.request`) and made
//! once per document (see `Defs::gather`): the schemas of an operation refer to the variants
//! ([`Directed::apply`]), so entries stay shared however many operations reach them.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

/// A direction of the exchange, and the keyword whose properties it leaves out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Direction {
    /// A request: `readOnly` properties are left out.
    Request = 0,
    /// An answer: `writeOnly` properties are left out.
    Answer = 1,
}

impl Direction {
    /// The keyword that marks a property this direction does not carry.
    pub(crate) fn keyword(self) -> &'static str {
        match self {
            Self::Request => "readOnly",
            Self::Answer => "writeOnly",
        }
    }

    /// The suffix of the names of this direction's variants (`Pet.request`).
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Self::Request => "request",
            Self::Answer => "answer",
        }
    }
}

/// Whether `schema` itself carries `keyword: true` (an entry so marked is never sent in that
/// direction where a property refers to it).
pub(crate) fn is_marked(schema: &Value, keyword: &str) -> bool {
    schema.get(keyword) == Some(&Value::Bool(true))
}

/// Whether `keyword: true` appears anywhere in `schema` (in data too: a cheap test that may
/// say yes where nothing goes, never no where something does).
pub(crate) fn mentions(schema: &Value, keyword: &str) -> bool {
    match schema {
        Value::Object(object) => object.iter().any(|(key, value)| {
            (key == keyword && value == &Value::Bool(true)) || mentions(value, keyword)
        }),
        Value::Array(items) => items.iter().any(|item| mentions(item, keyword)),
        _ => false,
    }
}

/// Keywords whose values are data, not schemas: never walked.
const DATA: &[&str] = &["examples", "example", "default", "enum", "const"];

/// Keywords whose values map names to schemas: each schema is walked, the names are no
/// keywords (a property may be called `default`).
const MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "dependentSchemas",
    "$defs",
    "definitions",
];

/// How one direction changes the schemas of one operation: which properties go, and which
/// references lead to a variant instead of the entry they name.
#[derive(Debug)]
pub(crate) struct Directed {
    keyword: &'static str,
    /// The `$defs` entries marked themselves: a property referring to one goes.
    marked: HashSet<String>,
    /// The entries that change in this direction, each with the name of its variant.
    renamed: HashMap<String, String>,
}

impl Directed {
    /// The changes of `direction`, where `marked` names the entries marked themselves and
    /// `renamed` the variant of each entry that changes.
    pub(crate) fn new(
        direction: Direction,
        marked: HashSet<String>,
        renamed: HashMap<String, String>,
    ) -> Self {
        Self {
            keyword: direction.keyword(),
            marked,
            renamed,
        }
    }

    /// Whether no entry changes (the schema's own properties still may).
    pub(crate) fn renames_nothing(&self) -> bool {
        self.renamed.is_empty()
    }

    /// The name of the variant of the entry `name`, when it changes.
    pub(crate) fn variant(&self, name: &str) -> Option<&str> {
        self.renamed.get(name).map(String::as_str)
    }

    /// Whether a property with schema `property` goes.
    fn goes(&self, property: &Value) -> bool {
        is_marked(property, self.keyword)
            || defs_name(property).is_some_and(|name| self.marked.contains(name))
    }

    /// Whether applying this to `schema` leaves some property out of it (its references
    /// aside).
    pub(crate) fn removes(&self, schema: &Value) -> bool {
        match schema {
            Value::Object(object) => {
                matches!(object.get("properties"), Some(Value::Object(properties))
                    if properties.values().any(|property| self.goes(property)))
                    || object.iter().any(|(key, value)| match value {
                        Value::Object(map) if MAPS.contains(&key.as_str()) => {
                            map.values().any(|schema| self.removes(schema))
                        }
                        _ => !DATA.contains(&key.as_str()) && self.removes(value),
                    })
            }
            Value::Array(items) => items.iter().any(|item| self.removes(item)),
            _ => false,
        }
    }

    /// Removes from `schema`, and every schema inside it, the properties this direction does
    /// not carry (and their names from `required`), and points each reference to an entry that
    /// changes at the entry's variant.
    pub(crate) fn apply(&self, schema: &mut Value) {
        match schema {
            Value::Object(object) => {
                let mut left_out = Vec::new();
                if let Some(Value::Object(properties)) = object.get_mut("properties") {
                    properties.retain(|name, property| {
                        let keep = !self.goes(property);
                        if !keep {
                            left_out.push(name.clone());
                        }
                        keep
                    });
                }
                if !left_out.is_empty()
                    && let Some(Value::Array(required)) = object.get_mut("required")
                {
                    required.retain(|name| {
                        !name
                            .as_str()
                            .is_some_and(|n| left_out.iter().any(|l| l == n))
                    });
                }
                if let Some(Value::String(reference)) = object.get_mut("$ref")
                    && let Some(variant) = reference
                        .strip_prefix(DEFS)
                        .and_then(|name| self.renamed.get(name))
                {
                    *reference = format!("{DEFS}{variant}");
                }
                for (key, value) in object.iter_mut() {
                    match value {
                        Value::Object(map) if MAPS.contains(&key.as_str()) => {
                            map.values_mut().for_each(|schema| self.apply(schema));
                        }
                        _ if DATA.contains(&key.as_str()) => {}
                        _ => self.apply(value),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.apply(item)),
            _ => {}
        }
    }
}

const DEFS: &str = "#/$defs/";

/// The `$defs` entry `schema`'s `$ref` names.
fn defs_name(schema: &Value) -> Option<&str> {
    schema.get("$ref")?.as_str()?.strip_prefix(DEFS)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_request_leaves_read_only_properties_out_and_stays_closed() {
        let pet = json!({
            "type": "object",
            "required": ["id", "name", "secret"],
            "additionalProperties": false,
            "properties": {
                "id": {"type": "integer", "readOnly": true},
                "created": {"$ref": "#/$defs/Stamp"},
                "name": {"type": "string", "examples": [{"properties": {"x": {"readOnly": true}}}]},
                "secret": {"type": "string", "writeOnly": true},
                "tags": {"type": "array", "items": {"type": "object", "properties": {"etag": {"readOnly": true}, "v": {}}}},
                "default": {"type": "object", "properties": {"at": {"readOnly": true}}},
                "owner": {"$ref": "#/$defs/Owner"}
            }
        });
        let marked = HashSet::from(["Stamp".to_owned()]);
        let renamed = HashMap::from([("Owner".to_owned(), "Owner.request".to_owned())]);
        let request = Directed::new(Direction::Request, marked, renamed);
        assert!(request.removes(&pet));
        let mut sent = pet.clone();
        request.apply(&mut sent);
        assert_eq!(
            sent,
            json!({
                "type": "object",
                "required": ["name", "secret"],
                "additionalProperties": false,
                "properties": {
                    "name": {"type": "string", "examples": [{"properties": {"x": {"readOnly": true}}}]},
                    "secret": {"type": "string", "writeOnly": true},
                    "tags": {"type": "array", "items": {"type": "object", "properties": {"v": {}}}},
                    "default": {"type": "object", "properties": {}},
                    "owner": {"$ref": "#/$defs/Owner.request"}
                }
            })
        );
        assert!(!request.removes(&sent));

        let answer = Directed::new(Direction::Answer, HashSet::new(), HashMap::new());
        let mut answered = pet;
        answer.apply(&mut answered);
        assert_eq!(answered["required"], json!(["id", "name"]));
        assert!(answered["properties"].get("secret").is_none());
        assert!(answered["properties"].get("id").is_some());
        assert!(answered["properties"].get("created").is_some());
        assert_eq!(
            answered["properties"]["owner"],
            json!({"$ref": "#/$defs/Owner"})
        );
    }
}

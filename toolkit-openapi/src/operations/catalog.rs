//! Operations as one JSON text that holds each `$defs` entry once: what a generated source
//! embeds ([`encode_operations`]) and what [`HttpSourceBuilder::operations_json`] reads
//! ([`decode_operations`]).
//!
//! An OpenAPI reader gives every operation's input (and answer) schema its own copy of each
//! document schema it reaches, so that it stands alone: on GitHub's description, 1,221
//! operations carry the same few hundred schemas again and again, most of a generated module's
//! bytes. The catalog keeps each entry once, at its top:
//!
//! ```text
//! {"$defs": {
//! "Pet": {...},
//! "Tag": {...}
//! },
//! "operations": [
//! {"definition": {"name": "getPet", "inputSchema": {..., "$defs": ["Pet", "Tag"]}, ...}, ...},
//! ...
//! ]}
//! ```
//!
//! A schema's `$defs` object becomes the list of its entries' names, in their order, and a
//! schema that is one of its entries (an answer that is a document schema, written out at the
//! root by the reader) is `{"$root": name, "$defs": [...]}`; reading the catalog puts each entry
//! back, so the definitions read are the ones written, key order
//! included: what a model or an MCP client sees does not change. A schema whose entries differ
//! from the catalog's of the same name (two documents merged by hand) keeps its `$defs` as it is.
//! One entry and one operation a line: a document's change is a readable diff.
//!
//! A JSON array of operations (the older form, and what a host writes by hand) reads too.
//!
//! [`HttpSourceBuilder::operations_json`]: super::HttpSourceBuilder::operations_json

use std::collections::HashSet;
use std::fmt;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::Operation;
use toolkit_core::JsonObject;

/// The key of a schema's named subschemas, and of the catalog's shared ones.
const DEFS: &str = "$defs";

/// The key of a catalog schema that is its `$defs` entry of this name.
const ROOT: &str = "$root";

/// Why a catalog of operations did not read.
#[derive(Debug)]
pub enum OperationsError {
    /// The text is not a JSON array of operations, nor a catalog object.
    Json(serde_json::Error),
    /// An operation's schema lists a `$defs` entry the catalog does not hold.
    MissingDefinition {
        /// The operation's name.
        operation: String,
        /// The entry's name.
        name: String,
    },
}

impl fmt::Display for OperationsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Json(error) => error.fmt(f),
            Self::MissingDefinition { operation, name } => write!(
                f,
                "the operation `{operation}` names the `$defs` entry `{name}`, which the catalog \
                 does not hold"
            ),
        }
    }
}

impl std::error::Error for OperationsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Json(error) => Some(error),
            Self::MissingDefinition { .. } => None,
        }
    }
}

/// Writes `operations` as a catalog that holds each `$defs` entry once (see the module's
/// documentation); [`decode_operations`] reads back the same operations.
///
/// ```
/// use serde_json::json;
/// use toolkit_core::ToolDefinition;
/// use toolkit_openapi::operations::{Operation, RequestTemplate, decode_operations, encode_operations};
///
/// let schema = json!({
///     "type": "object",
///     "properties": { "pet": { "$ref": "#/$defs/Pet" } },
///     "$defs": { "Pet": { "type": "object", "properties": { "name": { "type": "string" } } } }
/// });
/// let operation = |name: &str| {
///     let definition = ToolDefinition::new(name, schema.as_object().cloned().unwrap_or_default())?;
///     Ok::<_, toolkit_core::definition::DefinitionError>(Operation::new(definition, RequestTemplate::new("POST", "/pets")))
/// };
/// let operations = vec![operation("add_pet")?, operation("update_pet")?];
/// let text = encode_operations(&operations);
/// assert_eq!(text.matches("\"Pet\":{").count(), 1);
/// assert_eq!(decode_operations(&text)?, operations);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn encode_operations(operations: &[Operation]) -> String {
    let mut shared = Map::new();
    let lines = operation_lines(operations, |schema| share(schema, &mut shared));
    write_catalog(shared.iter(), &lines)
}

/// Writes `operations` whose schemas name their `$defs` entries (`"$defs": ["Pet", "Tag"]`),
/// the entries being `defs` (as the OpenAPI reader reads them with `shared_defs`), as the same
/// catalog [`encode_operations`] writes for them standing alone, without making the copies:
/// its cost grows with the text written, not with the operations times the entries each
/// names. A name `defs` does not hold stays in its schema, which then does not read back.
///
/// ```
/// use serde_json::json;
/// use toolkit_core::ToolDefinition;
/// use toolkit_openapi::operations::{
///     Operation, RequestTemplate, encode_operations, encode_shared_operations,
/// };
///
/// let pet = json!({ "type": "object" });
/// let operation = |defs: serde_json::Value| {
///     let schema = json!({ "properties": { "pet": { "$ref": "#/$defs/Pet" } }, "$defs": defs });
///     let definition = ToolDefinition::new("add_pet", schema.as_object().cloned().unwrap_or_default())?;
///     Ok::<_, toolkit_core::definition::DefinitionError>(vec![Operation::new(definition, RequestTemplate::new("POST", "/pets"))])
/// };
/// let defs = json!({ "Pet": pet }).as_object().cloned().unwrap_or_default();
/// assert_eq!(
///     encode_shared_operations(&operation(json!(["Pet"]))?, &defs),
///     encode_operations(&operation(json!({ "Pet": pet }))?),
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn encode_shared_operations(operations: &[Operation], defs: &JsonObject) -> String {
    let mut order: Vec<&str> = Vec::new();
    let mut met = HashSet::new();
    let lines = operation_lines(operations, |schema| {
        name_shared(schema, defs, &mut order, &mut met);
    });
    let entries = order
        .into_iter()
        .filter_map(|name| defs.get_key_value(name));
    write_catalog(entries, &lines)
}

/// Each operation as one line of JSON, each of its schemas passed through `share` first.
fn operation_lines(
    operations: &[Operation],
    mut share: impl FnMut(&mut JsonObject),
) -> Vec<String> {
    let mut lines = Vec::with_capacity(operations.len());
    for operation in operations {
        let mut value = match serde_json::to_value(operation) {
            Ok(value) => value,
            // An operation is maps of strings: it always serializes.
            Err(_) => continue,
        };
        if let Some(definition) = value.get_mut("definition").and_then(Value::as_object_mut) {
            for key in ["inputSchema", "outputSchema"] {
                if let Some(schema) = definition.get_mut(key).and_then(Value::as_object_mut) {
                    share(schema);
                }
            }
        }
        lines.push(value.to_string());
    }
    lines
}

/// The catalog's text: the shared `entries`, one a line, then the operations' `lines`.
fn write_catalog<'e>(
    entries: impl Iterator<Item = (&'e String, &'e Value)>,
    lines: &[String],
) -> String {
    let mut out = String::from("{\"$defs\":{");
    for (index, (name, schema)) in entries.enumerate() {
        out.push_str(if index == 0 { "\n" } else { ",\n" });
        out.push_str(&Value::String(name.clone()).to_string());
        out.push(':');
        out.push_str(&schema.to_string());
    }
    out.push_str("\n},\n\"operations\":[");
    for (index, line) in lines.iter().enumerate() {
        out.push_str(if index == 0 { "\n" } else { ",\n" });
        out.push_str(line);
    }
    out.push_str("\n]}");
    out
}

/// Records in `order` the names `schema`'s `$defs` lists (those of `defs`) not met before,
/// and makes a schema that is one of its entries `{"$defs": [...], "$root": name}`, as
/// [`share`] does with the entries themselves.
fn name_shared<'d>(
    schema: &mut JsonObject,
    defs: &'d JsonObject,
    order: &mut Vec<&'d str>,
    met: &mut HashSet<&'d str>,
) {
    let Some(Value::Array(names)) = schema.get(DEFS) else {
        return;
    };
    let entries: Option<Vec<(&'d String, &'d Value)>> = names
        .iter()
        .map(|name| defs.get_key_value(name.as_str()?))
        .collect();
    let Some(entries) = entries.filter(|entries| !entries.is_empty()) else {
        return;
    };
    for (name, _) in &entries {
        if met.insert(name.as_str()) {
            order.push(name.as_str());
        }
    }
    let root = entries
        .iter()
        .find(|(_, entry)| same_text(entry, schema))
        .map(|(name, _)| (*name).clone());
    // As `share` does: taken out and put back last, so that both write the same text.
    let Some(names) = schema.remove(DEFS) else {
        return;
    };
    if let Some(root) = root {
        schema.clear();
        schema.insert(ROOT.to_owned(), Value::String(root));
    }
    schema.insert(DEFS.to_owned(), names);
}

/// Moves the entries of `schema`'s `$defs` into `shared`, leaving their names, when each is new
/// to `shared` or equal to its entry of that name; otherwise leaves `schema` as it is. A schema
/// that is one of its entries with `$defs` after it (an answer whose schema is a document
/// schema, which the reader writes out at the root) becomes `{"$defs": [...], "$root": name}`.
fn share(schema: &mut JsonObject, shared: &mut Map<String, Value>) {
    let Some(Value::Object(defs)) = schema.get(DEFS) else {
        return;
    };
    if defs.is_empty()
        || defs
            .iter()
            .any(|(name, entry)| shared.get(name).is_some_and(|known| known != entry))
    {
        return;
    }
    let root = defs
        .iter()
        .find(|(_, entry)| same_text(entry, schema))
        .map(|(name, _)| name.clone());
    let Some(Value::Object(defs)) = schema.remove(DEFS) else {
        return;
    };
    let names = defs.keys().cloned().map(Value::String).collect();
    for (name, entry) in defs {
        shared.entry(name).or_insert(entry);
    }
    if let Some(root) = root {
        schema.clear();
        schema.insert(ROOT.to_owned(), Value::String(root));
    }
    schema.insert(DEFS.to_owned(), Value::Array(names));
}

/// Whether `entry` is an object of the same keys, in the same order, and values as `schema`
/// without its `$defs` (its last key): what reading the catalog writes back is the same text.
fn same_text(entry: &Value, schema: &JsonObject) -> bool {
    let Some(entry) = entry.as_object() else {
        return false;
    };
    if schema.keys().next_back().map(String::as_str) != Some(DEFS)
        || entry.len() + 1 != schema.len()
    {
        return false;
    }
    entry
        .iter()
        .zip(schema.iter())
        .all(|((key, value), (other_key, other))| key == other_key && value == other)
}

/// The catalog object: the shared entries, then the operations.
#[derive(Deserialize)]
struct Catalog {
    #[serde(default, rename = "$defs")]
    defs: Map<String, Value>,
    operations: Vec<Operation>,
}

/// Reads operations from a catalog [`encode_operations`] wrote, or from a JSON array of
/// operations, each schema's `$defs` entries put back from the catalog's.
///
/// # Errors
///
/// [`OperationsError::Json`] for text that is neither; [`OperationsError::MissingDefinition`]
/// for a schema that lists an entry the catalog does not hold.
pub fn decode_operations(text: &str) -> Result<Vec<Operation>, OperationsError> {
    if text.trim_start().starts_with('[') {
        return serde_json::from_str(text).map_err(OperationsError::Json);
    }
    let Catalog { defs, operations } = serde_json::from_str(text).map_err(OperationsError::Json)?;
    operations
        .into_iter()
        .map(|operation| resolve(operation, &defs))
        .collect()
}

/// `operations` whose schemas name their `$defs` entries (as
/// [`read_operations`](crate::read_operations) writes them with
/// [`ReadOptions::shared_defs`](crate::ReadOptions::shared_defs())), each schema given copies of
/// the entries of `defs` it names, so that it stands alone: what [`decode_operations`] makes of
/// a catalog, without writing one. A host that keeps a few operations of a large document pays
/// for the entries those reach, not for every operation's.
///
/// # Errors
///
/// [`OperationsError::MissingDefinition`] for a schema that names an entry `defs` does not hold.
pub fn standing_alone(
    operations: Vec<Operation>,
    defs: &JsonObject,
) -> Result<Vec<Operation>, OperationsError> {
    operations
        .into_iter()
        .map(|operation| resolve(operation, defs))
        .collect()
}

/// `operation` with the `$defs` names of its schemas replaced by the entries of `defs`.
fn resolve(
    mut operation: Operation,
    defs: &Map<String, Value>,
) -> Result<Operation, OperationsError> {
    let name = operation.name().to_owned();
    let (input, output) = operation.definition.schemas_mut();
    for schema in std::iter::once(input).chain(output) {
        let Some(Value::Array(names)) = schema.get(DEFS) else {
            continue;
        };
        let root = match schema.get(ROOT) {
            Some(Value::String(root)) if schema.len() == 2 => Some(root.clone()),
            _ => None,
        };
        let mut entries = Map::new();
        for entry in names {
            let found = entry
                .as_str()
                .and_then(|entry| Some((entry, defs.get(entry)?)));
            let Some((entry, schema)) = found else {
                return Err(OperationsError::MissingDefinition {
                    operation: name,
                    name: entry
                        .as_str()
                        .map_or_else(|| entry.to_string(), str::to_owned),
                });
            };
            entries.insert(entry.to_owned(), schema.clone());
        }
        if let Some(root) = root {
            let Some(Value::Object(entry)) = entries.get(&root) else {
                return Err(OperationsError::MissingDefinition {
                    operation: name,
                    name: root,
                });
            };
            *schema = entry.clone();
        }
        schema.insert(DEFS.to_owned(), Value::Object(entries));
    }
    Ok(operation)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::operations::RequestTemplate;
    use toolkit_core::ToolDefinition;

    fn operation(name: &str, input: Value, output: Option<Value>) -> Operation {
        let mut definition =
            ToolDefinition::new(name, input.as_object().cloned().unwrap_or_default()).unwrap();
        if let Some(output) = output {
            definition = definition.with_output_schema(output.as_object().cloned().unwrap());
        }
        Operation::new(definition, RequestTemplate::new("GET", "/x"))
    }

    #[test]
    fn entries_are_held_once_and_read_back_in_their_order() {
        let pet = json!({ "type": "object", "properties": { "tag": { "$ref": "#/$defs/Tag" } } });
        let tag = json!({ "type": "string" });
        let operations = vec![
            operation(
                "a",
                json!({ "type": "object", "$defs": { "Tag": tag, "Pet": pet } }),
                Some(json!({ "$ref": "#/$defs/Pet", "$defs": { "Pet": pet, "Tag": tag } })),
            ),
            operation(
                "b",
                json!({ "type": "object", "$defs": { "Pet": pet, "Tag": tag } }),
                None,
            ),
            operation("c", json!({ "type": "object" }), None),
            // An answer that is `Pet`, written out at its root.
            operation(
                "d",
                json!({ "type": "object" }),
                Some(json!({
                    "type": "object",
                    "properties": { "tag": { "$ref": "#/$defs/Tag" } },
                    "$defs": { "Pet": pet, "Tag": tag }
                })),
            ),
        ];
        let text = encode_operations(&operations);
        assert_eq!(text.matches("\"Pet\":{").count(), 1, "{text}");
        assert_eq!(text.lines().count(), 1 + 2 + 2 + 4 + 1, "{text}");
        assert!(
            text.contains(r#""outputSchema":{"$root":"Pet","$defs":["Pet","Tag"]}"#),
            "{text}"
        );
        let back = decode_operations(&text).unwrap();
        assert_eq!(back, operations);
        // Key order too: what a client is shown is the same text.
        for (back, operation) in back.iter().zip(&operations) {
            assert_eq!(
                serde_json::to_string(back).unwrap(),
                serde_json::to_string(operation).unwrap()
            );
        }
    }

    /// `operation` with each schema's `$defs` object as the list of its names, its entries
    /// moved into `defs`.
    fn named(mut operation: Operation, defs: &mut JsonObject) -> Operation {
        let (input, output) = operation.definition.schemas_mut();
        for schema in std::iter::once(input).chain(output) {
            if let Some(Value::Object(entries)) = schema.remove(DEFS) {
                let names = entries.keys().cloned().map(Value::String).collect();
                defs.extend(entries);
                schema.insert(DEFS.to_owned(), Value::Array(names));
            }
        }
        operation
    }

    #[test]
    fn named_entries_write_the_catalog_their_copies_write() {
        let pet = json!({ "type": "object", "properties": { "tag": { "$ref": "#/$defs/Tag" } } });
        let tag = json!({ "type": "string" });
        let operations = vec![
            operation(
                "a",
                json!({ "type": "object", "$defs": { "Tag": tag, "Pet": pet } }),
                Some(json!({
                    "type": "object",
                    "properties": { "tag": { "$ref": "#/$defs/Tag" } },
                    "$defs": { "Pet": pet, "Tag": tag }
                })),
            ),
            operation("b", json!({ "type": "object" }), None),
            operation("c", json!({ "$defs": { "Pet": pet, "Tag": tag } }), None),
        ];
        let mut defs = JsonObject::new();
        let shared: Vec<Operation> = operations
            .iter()
            .cloned()
            .map(|operation| named(operation, &mut defs))
            .collect();
        let text = encode_operations(&operations);
        assert!(text.contains(r#""$root":"Pet""#), "{text}");
        assert_eq!(encode_shared_operations(&shared, &defs), text);
        assert_eq!(decode_operations(&text).unwrap(), operations);
        // A name the entries do not hold stays in its schema.
        let text = encode_shared_operations(&shared, &JsonObject::new());
        assert!(decode_operations(&text).is_err(), "{text}");
    }

    #[test]
    fn an_entry_that_differs_from_the_shared_one_stays_in_its_schema() {
        let operations = vec![
            operation("a", json!({ "$defs": { "X": { "type": "string" } } }), None),
            operation(
                "b",
                json!({ "$defs": { "X": { "type": "integer" } } }),
                None,
            ),
        ];
        let text = encode_operations(&operations);
        assert!(
            text.contains(r#""$defs":{"X":{"type":"integer"}}"#),
            "{text}"
        );
        assert_eq!(decode_operations(&text).unwrap(), operations);
    }

    #[test]
    fn an_array_of_operations_reads_as_before() {
        let operations = vec![operation("a", json!({ "type": "object" }), None)];
        let text = serde_json::to_string(&operations).unwrap();
        assert_eq!(decode_operations(&text).unwrap(), operations);
    }

    #[test]
    fn a_name_the_catalog_does_not_hold_is_an_error_naming_it() {
        let text = r#"{"$defs": {}, "operations": [
            {"definition": {"name": "a", "inputSchema": {"$defs": ["Gone"]}},
             "request": {"method": "GET", "path": "/"}}
        ]}"#;
        let error = decode_operations(text).unwrap_err();
        assert!(matches!(error, OperationsError::MissingDefinition { .. }));
        assert_eq!(
            error.to_string(),
            "the operation `a` names the `$defs` entry `Gone`, which the catalog does not hold"
        );
        let not_json = decode_operations("{").unwrap_err();
        assert!(matches!(not_json, OperationsError::Json(_)));
    }
}

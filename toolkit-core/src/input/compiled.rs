//! The compiled check of a tool's input schema (the `jsonschema` crate), and the report of what
//! it refuses: every problem with its path, and what each level with an unknown key accepts.

use std::fmt::Write as _;

use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::Location;
use jsonschema::{Keyword, ValidationError, Validator};
use serde_json::{Map, Value};

use super::{InvalidInput, MAX_INPUT_DEPTH, kind_of};
use crate::JsonObject;
use crate::text::cut_for_echo;

/// A schema compiled into a check, beside the schema (for the `Accepted params` lines).
#[derive(Debug)]
pub(super) struct Compiled {
    schema: Value,
    validator: Validator,
}

impl Compiled {
    /// The check of `schema`, or `None` when it cannot be compiled.
    pub(super) fn new(schema: &JsonObject) -> Option<Self> {
        let mut schema = Value::Object(schema.clone());
        let mut compiled = compile(&schema);
        // Real servers still write draft-04's boolean bounds (`"exclusiveMinimum": true` beside
        // `minimum`), which later drafts refuse: read them as the numbers they mean.
        if compiled.is_err() && modernize_bounds(&mut schema, 0) {
            compiled = compile(&schema);
        }
        let validator = compiled
            .inspect_err(|error| {
                tracing::debug!(%error, "a tool's input schema could not be compiled; only an object is required");
            })
            .ok();
        Some(Self {
            schema,
            validator: validator?,
        })
    }

    /// Whether `input` is accepted.
    pub(super) fn is_valid(&self, input: &Value) -> bool {
        self.validator.is_valid(input)
    }

    /// The report of every problem of `input`, which the check refused.
    pub(super) fn report(&self, input: &Value) -> InvalidInput {
        let validator = &self.validator;
        let mut problems = Vec::new();
        let mut accepted = Vec::new();
        for error in validator.iter_errors(input) {
            let at = describe_location(error.instance_path());
            let depth = error.instance_path().into_iter().count();
            let mut unknown = |keys: &mut dyn Iterator<Item = &String>| {
                for key in keys {
                    problems.push((depth, format!("unknown property {} at {at}", quoted(key))));
                }
                let line = self.accepted_line(&error, &at);
                if !accepted.iter().any(|(_, known)| known == &line) {
                    accepted.push((depth, line));
                }
            };
            match error.kind() {
                ValidationErrorKind::AdditionalProperties { unexpected }
                | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                    unknown(&mut unexpected.iter());
                }
                // `additionalProperties: false` beside no `properties` is compiled to a check
                // that reports the first value of the object: every key of it is unknown.
                ValidationErrorKind::FalseSchema
                    if error
                        .evaluation_path()
                        .as_str()
                        .ends_with("/additionalProperties") =>
                {
                    let object = input.pointer(error.instance_path().as_str());
                    let keys = object.and_then(Value::as_object).map(Map::keys);
                    unknown(&mut keys.into_iter().flatten());
                }
                ValidationErrorKind::Required { property } => {
                    let name = property
                        .as_str()
                        .map_or_else(|| property.to_string(), quoted);
                    problems.push((depth, format!("missing required property {name} at {at}")));
                }
                ValidationErrorKind::Type { kind } => {
                    let expected = match kind {
                        jsonschema::error::TypeKind::Single(one) => one.to_string(),
                        jsonschema::error::TypeKind::Multiple(set) => set
                            .iter()
                            .map(|t| t.to_string())
                            .collect::<Vec<_>>()
                            .join(" or "),
                    };
                    let got = kind_of(error.instance());
                    problems.push((depth, format!("expected {expected}, got {got} at {at}")));
                }
                _ => {
                    // The library's message without the instance, which may be large; the value
                    // the model gave is echoed cut.
                    let value = cut_for_echo(&error.instance().to_string());
                    problems.push((depth, format!("{} ({value}) at {at}", error.masked())));
                }
            }
        }
        if problems.is_empty() {
            // `is_valid` and `iter_errors` disagree only on a library defect; say so plainly.
            problems.push((
                0,
                "the input does not match the tool's parameters".to_owned(),
            ));
        }
        // Outer levels first; within a level, in the order the schema checks them.
        problems.sort_by_key(|(depth, _)| *depth);
        accepted.sort_by_key(|(depth, _)| *depth);
        InvalidInput {
            problems: problems.into_iter().map(|(_, problem)| problem).collect(),
            accepted: accepted.into_iter().map(|(_, line)| line).collect(),
        }
    }

    /// The line naming what the object level of an unknown key accepts.
    fn accepted_line(&self, error: &ValidationError<'_>, at: &str) -> String {
        let level = resolve_parent(&self.schema, error.evaluation_path());
        let mut names: Vec<String> = Vec::new();
        let mut patterns: Vec<String> = Vec::new();
        if let Some(level) = level {
            collect_accepted(&self.schema, level, &mut names, &mut patterns, 0);
        }
        if names.is_empty() && patterns.is_empty() {
            return if at == "the root" {
                "This tool accepts no params.".to_owned()
            } else {
                format!("Accepted params at {at}: none.")
            };
        }
        let mut line = format!("Accepted params at {at}: {}", names.join(", "));
        if !patterns.is_empty() {
            if !names.is_empty() {
                line.push_str("; ");
            }
            let _ = write!(line, "keys matching {}", patterns.join(", "));
        }
        line.push('.');
        line
    }
}

/// A schema compiled as tools' schemas are: formats and patterns not checked.
#[doc(hidden)]
pub fn compile(schema: &Value) -> Result<Validator, ValidationError<'static>> {
    jsonschema::options()
        .should_validate_formats(false)
        .with_keyword("pattern", |_, _, _| Ok(Box::new(Unchecked)))
        .build(schema)
}

/// Rewrites draft-04 boolean `exclusiveMinimum`/`exclusiveMaximum` into the numeric form of
/// later drafts (`{"minimum": 0, "exclusiveMinimum": true}` → `{"exclusiveMinimum": 0}`), in
/// every schema of `schema`. Says whether it changed anything. Keys under `properties` and the
/// like are names, not keywords, and are left alone.
fn modernize_bounds(schema: &mut Value, depth: usize) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    if depth > MAX_INPUT_DEPTH {
        return false;
    }
    let mut changed = false;
    for (exclusive, inclusive) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        match map.get(exclusive) {
            Some(Value::Bool(true)) => {
                match map.remove(inclusive) {
                    Some(bound) => map.insert(exclusive.to_owned(), bound),
                    None => map.remove(exclusive),
                };
                changed = true;
            }
            Some(Value::Bool(false)) => {
                map.remove(exclusive);
                changed = true;
            }
            _ => {}
        }
    }
    for (key, value) in map.iter_mut() {
        let named = matches!(
            key.as_str(),
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas"
        );
        changed |= match value {
            Value::Object(children) if named => {
                children.values_mut().fold(false, |changed, child| {
                    modernize_bounds(child, depth + 1) | changed
                })
            }
            Value::Array(items) => items.iter_mut().fold(false, |changed, item| {
                modernize_bounds(item, depth + 1) | changed
            }),
            Value::Object(_) => modernize_bounds(value, depth + 1),
            _ => false,
        };
    }
    changed
}

/// The `pattern` keyword, accepted unchecked: a pattern from a source is not run here.
struct Unchecked;

impl<'i> Keyword<'i> for Unchecked {
    fn validate(&self, _: &'i Value) -> Result<(), ValidationError<'i>> {
        Ok(())
    }

    fn is_valid(&self, _: &'i Value) -> bool {
        true
    }
}

fn describe_location(location: &Location) -> String {
    let pointer = location.as_str();
    if pointer.is_empty() {
        "the root".to_owned()
    } else {
        cut_for_echo(pointer)
    }
}

/// The schema object that holds the keyword at `path` (an evaluation path, whose `$ref`
/// segments are followed within the document).
fn resolve_parent<'s>(root: &'s Value, path: &Location) -> Option<&'s Map<String, Value>> {
    let segments: Vec<String> = path
        .as_str()
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect();
    let (_keyword, parents) = segments.split_last()?;
    let mut current = root;
    for segment in parents {
        current = match current {
            Value::Object(map) if segment == "$ref" => {
                let target = map.get("$ref")?.as_str()?;
                root.pointer(target.strip_prefix('#')?)?
            }
            Value::Object(map) => map.get(segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    current.as_object()
}

/// The property names and patterns an object schema accepts, with those of its `allOf`
/// members and its local `$ref`.
fn collect_accepted(
    root: &Value,
    level: &Map<String, Value>,
    names: &mut Vec<String>,
    patterns: &mut Vec<String>,
    depth: usize,
) {
    if depth > 8 {
        return;
    }
    if let Some(Value::Object(properties)) = level.get("properties") {
        for name in properties.keys() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    if let Some(Value::Object(pattern_properties)) = level.get("patternProperties") {
        patterns.extend(pattern_properties.keys().cloned());
    }
    let members = level.get("allOf").and_then(Value::as_array);
    for member in members.into_iter().flatten() {
        if let Some(member) = member.as_object() {
            collect_accepted(root, member, names, patterns, depth + 1);
        }
    }
    let target = level
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
        .and_then(Value::as_object);
    if let Some(target) = target {
        collect_accepted(root, target, names, patterns, depth + 1);
    }
}

fn quoted(key: &str) -> String {
    format!("{:?}", cut_for_echo(key))
}

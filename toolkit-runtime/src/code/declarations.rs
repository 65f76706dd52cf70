//! Tools declared as TypeScript, written from their JSON Schemas, for the model that writes code.
//!
//! Written by hand: no crate turns JSON Schema into TypeScript *declarations for a reader* (the
//! generators that exist emit files of named interfaces, resolve remote references, or add an
//! index signature to every object). The rules: an object's properties with `?` for the ones it
//! does not require and their descriptions as comments; an enum or `const` as literals; `anyOf`
//! and `oneOf` as unions, `allOf` as an intersection; `prefixItems` as a tuple; local `$ref`s
//! resolved; a union inside an array parenthesised; a name that is no identifier quoted; and
//! `unknown` where a type cannot say: a cyclic schema, or one nested deeper than six levels.
//!
//! A tool that declares an `outputSchema` promises its structured answer, so its declaration
//! returns `Promise<` that type `>`; any other tool returns `Promise<unknown>`.

use std::fmt::Write as _;

use serde_json::Value;

use toolkit_core::Tool;

/// How deep a type is written before it is `unknown`.
const MAX_DEPTH: usize = 6;

/// The declaration of `tools` for these tools:
///
/// ```text
/// declare const tools: {
///   /** Finds notes that mention a word. */
///   notes__find(input: {
///     /** The word to look for. */
///     word: string;
///   }): Promise<unknown>;
///   /** Counts the notes. */
///   notes__count(input: Record<string, unknown>): Promise<{
///     count: number;
///   }>;
/// };
/// ```
///
/// A tool's output type is written from its `outputSchema` when it has one (the schema's own
/// `$ref`s resolved against it), else it is `unknown`.
pub fn declare_tools<'a>(tools: impl IntoIterator<Item = &'a Tool>) -> String {
    let mut out = String::from("declare const tools: {\n");
    for tool in tools {
        let definition = tool.definition();
        if let Some(description) = &definition.description {
            comment(&mut out, description, 1);
        }
        let root = Value::Object(definition.input_schema().clone());
        let input = Writer { root: &root }.write(&root, 1, &mut Vec::new());
        let output = match definition.output_schema() {
            Some(schema) => {
                let root = Value::Object(schema.clone());
                Writer { root: &root }.write(&root, 1, &mut Vec::new())
            }
            None => "unknown".to_owned(),
        };
        let _ = writeln!(
            out,
            "  {}(input: {input}): Promise<{output}>;",
            property_name(definition.name())
        );
    }
    out.push_str("};");
    out
}

struct Writer<'s> {
    root: &'s Value,
}

impl<'s> Writer<'s> {
    /// The type of `schema`, at `depth` (for indentation and the depth cap), with the `$ref`s
    /// being followed in `visiting`.
    fn write(&self, schema: &'s Value, depth: usize, visiting: &mut Vec<&'s str>) -> String {
        let schema = match schema {
            Value::Bool(true) => return "unknown".to_owned(),
            Value::Bool(false) => return "never".to_owned(),
            Value::Object(schema) => schema,
            _ => return "unknown".to_owned(),
        };
        if depth > MAX_DEPTH {
            return "unknown".to_owned();
        }
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let target = reference
                .strip_prefix('#')
                .and_then(|pointer| self.root.pointer(pointer));
            return match target {
                Some(target) if !visiting.contains(&reference) => {
                    visiting.push(reference);
                    let written = self.write(target, depth, visiting);
                    visiting.pop();
                    written
                }
                _ => "unknown".to_owned(),
            };
        }
        if let Some(value) = schema.get("const") {
            return literal(value);
        }
        if let Some(Value::Array(values)) = schema.get("enum") {
            return union(values.iter().map(literal));
        }
        for combinator in ["anyOf", "oneOf"] {
            if let Some(Value::Array(members)) = schema.get(combinator) {
                return union(members.iter().map(|m| self.write(m, depth, visiting)));
            }
        }
        if let Some(Value::Array(members)) = schema.get("allOf") {
            let parts: Vec<String> = members
                .iter()
                .map(|m| parenthesise(self.write(m, depth, visiting)))
                .collect();
            return if parts.is_empty() {
                "unknown".to_owned()
            } else {
                parts.join(" & ")
            };
        }
        match schema.get("type") {
            Some(Value::String(kind)) => self.of_type(kind, schema, depth, visiting),
            Some(Value::Array(kinds)) => union(
                kinds
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|kind| self.of_type(kind, schema, depth, visiting)),
            ),
            _ if schema.contains_key("properties") => {
                self.of_type("object", schema, depth, visiting)
            }
            _ if schema.contains_key("items") || schema.contains_key("prefixItems") => {
                self.of_type("array", schema, depth, visiting)
            }
            _ => "unknown".to_owned(),
        }
    }

    fn of_type(
        &self,
        kind: &str,
        schema: &'s serde_json::Map<String, Value>,
        depth: usize,
        visiting: &mut Vec<&'s str>,
    ) -> String {
        match kind {
            "string" => "string".to_owned(),
            "integer" | "number" => "number".to_owned(),
            "boolean" => "boolean".to_owned(),
            "null" => "null".to_owned(),
            "array" => {
                let items = schema.get("items");
                if let Some(Value::Array(prefix)) = schema.get("prefixItems") {
                    let mut parts: Vec<String> = prefix
                        .iter()
                        .map(|p| self.write(p, depth + 1, visiting))
                        .collect();
                    if let Some(rest) = items.filter(|i| i.is_object()) {
                        parts.push(format!(
                            "...{}[]",
                            parenthesise(self.write(rest, depth + 1, visiting))
                        ));
                    }
                    return format!("[{}]", parts.join(", "));
                }
                match items {
                    // Draft-07's tuple form.
                    Some(Value::Array(prefix)) => {
                        let parts: Vec<String> = prefix
                            .iter()
                            .map(|p| self.write(p, depth + 1, visiting))
                            .collect();
                        format!("[{}]", parts.join(", "))
                    }
                    Some(items) => {
                        format!("{}[]", parenthesise(self.write(items, depth + 1, visiting)))
                    }
                    None => "unknown[]".to_owned(),
                }
            }
            "object" => self.object(schema, depth, visiting),
            _ => "unknown".to_owned(),
        }
    }

    fn object(
        &self,
        schema: &'s serde_json::Map<String, Value>,
        depth: usize,
        visiting: &mut Vec<&'s str>,
    ) -> String {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let properties = schema.get("properties").and_then(Value::as_object);
        let extra = schema
            .get("additionalProperties")
            .filter(|extra| extra.is_object());
        if properties.is_none_or(serde_json::Map::is_empty) && extra.is_none() {
            return if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
                "{}".to_owned()
            } else {
                "Record<string, unknown>".to_owned()
            };
        }
        let mut out = String::from("{\n");
        let indent = "  ".repeat(depth + 1);
        for (name, property) in properties.into_iter().flatten() {
            if let Some(description) = property.get("description").and_then(Value::as_str) {
                comment(&mut out, description, depth + 1);
            }
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            let kind = self.write(property, depth + 1, visiting);
            let _ = writeln!(out, "{indent}{}{optional}: {kind};", property_name(name));
        }
        if let Some(extra) = extra {
            // TypeScript wants every named property (an optional one is `T | undefined`)
            // assignable to the index type: beside named properties it is `unknown`.
            let kind = if properties.is_some_and(|properties| !properties.is_empty()) {
                "unknown".to_owned()
            } else {
                self.write(extra, depth + 1, visiting)
            };
            let _ = writeln!(out, "{indent}[key: string]: {kind};");
        }
        let _ = write!(out, "{}}}", "  ".repeat(depth));
        out
    }
}

fn union(parts: impl Iterator<Item = String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for part in parts {
        if !seen.contains(&part) {
            seen.push(part);
        }
    }
    if seen.is_empty() {
        return "never".to_owned();
    }
    seen.join(" | ")
}

/// A union or intersection in parentheses, where an array or intersection needs them.
fn parenthesise(kind: String) -> String {
    if (kind.contains(" | ") || kind.contains(" & ")) && !kind.starts_with('{') {
        format!("({kind})")
    } else {
        kind
    }
}

fn literal(value: &Value) -> String {
    match value {
        Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => value.to_string(),
        _ => "unknown".to_owned(),
    }
}

/// `name` as a property of a TypeScript type: as it is when it is an identifier, else quoted.
fn property_name(name: &str) -> String {
    let identifier = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if identifier {
        name.to_owned()
    } else {
        Value::from(name).to_string()
    }
}

fn comment(out: &mut String, text: &str, depth: usize) {
    let indent = "  ".repeat(depth);
    let text = text.replace("*/", "*\\/");
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    if lines.len() <= 1 {
        let _ = writeln!(
            out,
            "{indent}/** {} */",
            lines.first().copied().unwrap_or_default()
        );
    } else {
        let _ = writeln!(out, "{indent}/**");
        for line in lines {
            let _ = writeln!(out, "{indent} * {line}");
        }
        let _ = writeln!(out, "{indent} */");
    }
}

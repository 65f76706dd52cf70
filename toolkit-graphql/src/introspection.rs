//! An introspection result (`{"data": {"__schema": …}}` or `{"__schema": …}`) written as SDL, so
//! that one parser and validator (apollo-compiler's) reads both kinds of schema. Written by hand:
//! apollo-compiler 1.x builds no schema from an introspection result.

use std::fmt::Write as _;

use serde_json::Value;

/// The built-in scalars, which SDL does not declare.
const BUILT_IN_SCALARS: &[&str] = &["String", "Int", "Float", "Boolean", "ID"];

/// How deep a type reference (`[[Int!]!]!`) may nest before it is refused.
const MAX_TYPE_DEPTH: usize = 16;

/// The SDL of the introspection result `json`.
///
/// # Errors
///
/// A sentence for people when `json` is no introspection result.
pub(crate) fn to_sdl(json: &Value) -> Result<String, String> {
    let schema = json
        .get("data")
        .unwrap_or(json)
        .get("__schema")
        .ok_or("the JSON has no __schema (nor data.__schema): it is no introspection result")?;
    let types = schema
        .get("types")
        .and_then(Value::as_array)
        .ok_or("__schema.types is not a list")?;
    let mut sdl = String::new();
    sdl.push_str("schema {\n");
    for (key, operation) in [
        ("queryType", "query"),
        ("mutationType", "mutation"),
        ("subscriptionType", "subscription"),
    ] {
        if let Some(name) = schema
            .get(key)
            .and_then(|root| root.get("name"))
            .and_then(Value::as_str)
        {
            let _ = writeln!(sdl, "  {operation}: {}", name_of(name)?);
        }
    }
    sdl.push_str("}\n\n");
    for definition in types {
        let name = definition
            .get("name")
            .and_then(Value::as_str)
            .ok_or("a type has no name")?;
        if name.starts_with("__") || BUILT_IN_SCALARS.contains(&name) {
            continue;
        }
        let name = name_of(name)?;
        description(&mut sdl, definition, "");
        let kind = definition
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match kind {
            "SCALAR" => {
                let _ = writeln!(sdl, "scalar {name}\n");
            }
            "OBJECT" | "INTERFACE" => {
                let keyword = if kind == "OBJECT" {
                    "type"
                } else {
                    "interface"
                };
                let _ = write!(sdl, "{keyword} {name}");
                let interfaces = names(definition.get("interfaces"))?;
                if !interfaces.is_empty() {
                    let _ = write!(sdl, " implements {}", interfaces.join(" & "));
                }
                sdl.push_str(" {\n");
                for field in list(definition.get("fields")) {
                    description(&mut sdl, field, "  ");
                    let _ = write!(sdl, "  {}", name_of(field_name(field)?)?);
                    let arguments = list(field.get("args"));
                    if !arguments.is_empty() {
                        sdl.push('(');
                        for (index, argument) in arguments.iter().enumerate() {
                            if index > 0 {
                                sdl.push_str(", ");
                            }
                            input_value(&mut sdl, argument)?;
                        }
                        sdl.push(')');
                    }
                    let _ = write!(sdl, ": {}", type_ref(field.get("type"), 0)?);
                    deprecated(&mut sdl, field);
                    sdl.push('\n');
                }
                sdl.push_str("}\n\n");
            }
            "UNION" => {
                let members = names(definition.get("possibleTypes"))?;
                let _ = writeln!(sdl, "union {name} = {}\n", members.join(" | "));
            }
            "ENUM" => {
                let _ = writeln!(sdl, "enum {name} {{");
                for value in list(definition.get("enumValues")) {
                    description(&mut sdl, value, "  ");
                    let _ = write!(sdl, "  {}", name_of(field_name(value)?)?);
                    deprecated(&mut sdl, value);
                    sdl.push('\n');
                }
                sdl.push_str("}\n\n");
            }
            "INPUT_OBJECT" => {
                let _ = writeln!(sdl, "input {name} {{");
                for field in list(definition.get("inputFields")) {
                    description(&mut sdl, field, "  ");
                    sdl.push_str("  ");
                    input_value(&mut sdl, field)?;
                    sdl.push('\n');
                }
                sdl.push_str("}\n\n");
            }
            other => return Err(format!("the type {name} is of no kind SDL has ({other:?})")),
        }
    }
    Ok(sdl)
}

/// The list under `value`, or none.
fn list(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn field_name(value: &Value) -> Result<&str, String> {
    value
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| "a field, argument or enum value has no name".to_owned())
}

/// The names of a list of type references (`interfaces`, `possibleTypes`).
fn names(value: Option<&Value>) -> Result<Vec<&str>, String> {
    list(value)
        .iter()
        .map(|item| name_of(field_name(item)?))
        .collect()
}

/// `name` when it is a GraphQL name, so that nothing the JSON holds writes more SDL than a name.
fn name_of(name: &str) -> Result<&str, String> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic());
    if first_ok && chars.all(|c| c == '_' || c.is_ascii_alphanumeric()) {
        Ok(name)
    } else {
        Err(format!("{name:?} is no GraphQL name"))
    }
}

/// An argument or input field: `name: Type = default`, deprecated or not.
fn input_value(sdl: &mut String, value: &Value) -> Result<(), String> {
    let _ = write!(
        sdl,
        "{}: {}",
        name_of(field_name(value)?)?,
        type_ref(value.get("type"), 0)?
    );
    if let Some(default) = value.get("defaultValue").and_then(Value::as_str) {
        let _ = write!(sdl, " = {default}");
    }
    deprecated(sdl, value);
    Ok(())
}

/// A type reference: `Name`, `Name!`, `[Name]`, nested.
fn type_ref(value: Option<&Value>, depth: usize) -> Result<String, String> {
    let value = value.ok_or("a field or argument has no type")?;
    if depth > MAX_TYPE_DEPTH {
        return Err("a type reference nests too deep".to_owned());
    }
    let of_type = || type_ref(value.get("ofType"), depth + 1);
    match value.get("kind").and_then(Value::as_str) {
        Some("NON_NULL") => Ok(format!("{}!", of_type()?)),
        Some("LIST") => Ok(format!("[{}]", of_type()?)),
        _ => Ok(name_of(field_name(value)?)?.to_owned()),
    }
}

/// The description of `value` as a GraphQL string before it, when it has one. JSON's string
/// escapes are GraphQL's, so serde_json writes it.
fn description(sdl: &mut String, value: &Value, indent: &str) {
    if let Some(text) = value.get("description").and_then(Value::as_str)
        && let Ok(quoted) = serde_json::to_string(text)
    {
        let _ = writeln!(sdl, "{indent}{quoted}");
    }
}

/// ` @deprecated(reason: "…")` when `value` is deprecated.
fn deprecated(sdl: &mut String, value: &Value) {
    if value.get("isDeprecated").and_then(Value::as_bool) == Some(true) {
        match value
            .get("deprecationReason")
            .and_then(Value::as_str)
            .and_then(|reason| serde_json::to_string(reason).ok())
        {
            Some(reason) => {
                let _ = write!(sdl, " @deprecated(reason: {reason})");
            }
            None => sdl.push_str(" @deprecated"),
        }
    }
}

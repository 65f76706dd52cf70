//! Reading the generator's inputs — OpenAPI documents, GraphQL schemas and MCP `tools/list`
//! snapshots — as the runtime reads them, every problem located by file and JSON pointer. The
//! builder reads through here, and the command line through the builder
//! ([`crate::builder::read_openapi`], [`crate::builder::read_mcp_snapshot`]).

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;
use toolkit_core::ToolDefinition;
use toolkit_openapi::{ReadOperations, ReadOptions, decode_document, read_operations};

use crate::problem::Problem;

#[cfg(feature = "internals")]
/// Reads an OpenAPI document and its operations as the runtime reads them.
///
/// # Errors
///
/// The file cannot be read or decoded, or is no OpenAPI 3 document.
pub fn read_openapi(path: &Path) -> Result<(Value, ReadOperations), Vec<Problem>> {
    read_openapi_with(path, &ReadOptions::default())
}

/// Reads an OpenAPI document and its operations for generating a module: as [`read_openapi`],
/// the schemas naming their `$defs` entries, held once in [`ReadOperations::defs`]
/// ([`ReadOptions::shared_defs`](ReadOptions::shared_defs())), so that reading and generating
/// cost what the document is, not its operations times the schemas each reaches.
///
/// # Errors
///
/// As [`read_openapi`].
pub fn read_openapi_for_module(path: &Path) -> Result<(Value, ReadOperations), Vec<Problem>> {
    read_openapi_with(path, &ReadOptions::default().shared_defs(true))
}

fn read_openapi_with(
    path: &Path,
    options: &ReadOptions,
) -> Result<(Value, ReadOperations), Vec<Problem>> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| vec![Problem::new(path, "#", format!("cannot read: {error}"))])?;
    let document =
        decode_document(&text).map_err(|error| vec![Problem::new(path, "#", error.to_string())])?;
    let read = read_operations(&document, options)
        .map_err(|error| vec![Problem::new(path, "#", error.to_string())])?;
    Ok((document, read))
}

/// Reads a GraphQL schema's root query and mutation fields as operations, as
/// `toolkit_graphql::read_schema_tools` reads them, with the fields that are no tool.
///
/// # Errors
///
/// The file cannot be read, or the schema does not validate: each problem at its
/// `line:column`.
#[cfg(feature = "graphql")]
pub fn read_graphql(
    path: &Path,
) -> Result<(ReadOperations, Vec<toolkit_graphql::Skipped>), Vec<Problem>> {
    use toolkit_graphql::{GraphqlSchema, ReadOptions, read_schema_tools};
    let text = std::fs::read_to_string(path)
        .map_err(|error| vec![Problem::new(path, "#", format!("cannot read: {error}"))])?;
    let schema = GraphqlSchema::read(&text, &path.display().to_string()).map_err(|error| {
        error
            .problems
            .iter()
            .map(|problem| {
                Problem::new(
                    path,
                    &format!("{}:{}", problem.line, problem.column),
                    problem.message.clone(),
                )
            })
            .collect::<Vec<_>>()
    })?;
    let tools = read_schema_tools(&schema, &ReadOptions::default());
    let read = ReadOperations {
        operations: tools.operations,
        ..ReadOperations::default()
    };
    Ok((read, tools.skipped))
}

/// The tools of `read` whose operations `document` marks `deprecated`, by tool name: what
/// [`SourceOptions::deprecated`](crate::emit::SourceOptions::deprecated) takes.
pub fn deprecated_tools(document: &Value, read: &ReadOperations) -> BTreeSet<String> {
    read.operations
        .iter()
        .filter(|operation| {
            let request = &operation.request;
            let path = request.path.split('?').next().unwrap_or_default();
            document
                .get("paths")
                .and_then(|paths| paths.get(path))
                .and_then(|item| item.get(request.method.to_ascii_lowercase()))
                .and_then(|operation| operation.get("deprecated"))
                == Some(&Value::Bool(true))
        })
        .map(|operation| operation.name().to_owned())
        .collect()
}

/// Reads the tools of a snapshot: `{"tools": [...]}` (with or without `server`), or an array;
/// every tool that is no definition is a problem located by its pointer.
///
/// # Errors
///
/// The file cannot be read, is no snapshot, or holds tools that are no definitions.
pub fn read_snapshot(path: &Path) -> Result<Vec<ToolDefinition>, Vec<Problem>> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| vec![Problem::new(path, "#", format!("cannot read: {error}"))])?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|error| vec![Problem::new(path, "#", error.to_string())])?;
    let (tools, prefix) = match &value {
        Value::Array(tools) => (tools, "#"),
        Value::Object(map) => match map.get("tools") {
            Some(Value::Array(tools)) => (tools, "#/tools"),
            _ => return Err(vec![Problem::new(path, "#", "no `tools` array")]),
        },
        _ => {
            return Err(vec![Problem::new(
                path,
                "#",
                "neither a snapshot nor an array of tools",
            )]);
        }
    };
    let mut definitions = Vec::with_capacity(tools.len());
    let mut problems = Vec::new();
    for (index, tool) in tools.iter().enumerate() {
        match toolkit_core::mcp::tool_definition(tool) {
            Ok(definition) => definitions.push(definition),
            Err(problem) => {
                problems.push(Problem::new(path, &format!("{prefix}/{index}"), problem));
            }
        }
    }
    if problems.is_empty() {
        Ok(definitions)
    } else {
        Err(problems)
    }
}

/// The source name made of a file's stem: `petstore-v3.yaml` → `petstore_v3`; never empty, never
/// a keyword (`type.yaml` → `type_api`), nor `lib` or `main`, so that it can name a module.
pub fn source_name(file: &Path) -> String {
    let stem = file
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut name = String::with_capacity(stem.len());
    for c in stem.chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c.to_ascii_lowercase());
        } else if !name.ends_with('_') && !name.is_empty() {
            name.push('_');
        }
    }
    let name = name.trim_end_matches('_').to_owned();
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        return format!("api_{name}");
    }
    if name.is_empty() {
        return "api".to_owned();
    }
    // A keyword (`type.yaml`) cannot name a module, and in a generated crate `lib` and `main`
    // would be written over `src/lib.rs` or become a binary.
    if crate::emit::is_keyword(&name) || name == "lib" || name == "main" {
        return format!("{name}_api");
    }
    name
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;
    use toolkit_openapi::{ReadOptions, read_operations};

    use super::*;

    #[test]
    fn source_names_can_name_modules() {
        for (file, name) in [
            ("specs/petstore-v3.yaml", "petstore_v3"),
            ("Swagger Petstore.json", "swagger_petstore"),
            ("3d.json", "api_3d"),
            ("type.yaml", "type_api"),
            ("lib.yaml", "lib_api"),
            ("main.json", "main_api"),
            ("---.json", "api"),
        ] {
            assert_eq!(source_name(Path::new(file)), name, "{file}");
        }
    }

    #[test]
    fn the_operations_a_document_marks_deprecated_are_named() {
        let document = json!({
            "openapi": "3.0.3",
            "info": { "title": "t", "version": "1" },
            "paths": {
                "/old": {
                    "get": { "operationId": "old", "deprecated": true, "responses": { "200": { "description": "ok" } } },
                    "post": { "operationId": "kept", "responses": { "200": { "description": "ok" } } }
                }
            }
        });
        let read = read_operations(&document, &ReadOptions::default()).unwrap();
        assert_eq!(read.operations.len(), 2);
        assert_eq!(
            deprecated_tools(&document, &read)
                .into_iter()
                .collect::<Vec<_>>(),
            ["old"]
        );
    }
}

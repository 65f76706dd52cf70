//! How typed each tool's input is in the code the [`Builder`](super::Builder) writes, without
//! writing it: [`openapi_typing`] and [`snapshot_typing`], what `toolkit-gen report` prints.

use serde_json::Value;
use toolkit_core::ToolDefinition;
use toolkit_openapi::ReadOperations;

use crate::emit::{EmitOptions, ToolTypes, input_types, module_typing};

/// What each operation's input of `read` (as [`read_openapi`](super::read_openapi) reads a
/// document) becomes in the module a [`Builder`](super::Builder) with default options writes:
/// its type, and the places that fell back to `serde_json::Value`. One [`ToolTypes`] per
/// operation, in their order; `typed` is told each tool's name once its types are made (a
/// progress bar's step). No code is written, so a report of a large document costs its types
/// alone.
///
/// # Examples
///
/// ```
/// # let petstore_yaml = toolkit_gen::builder::EXAMPLE_PETSTORE;
/// let read = toolkit_gen::builder::read_openapi(petstore_yaml.as_ref())?;
/// let types = toolkit_gen::builder::openapi_typing(&read, |_| {});
/// assert_eq!(types.len(), read.operations.len());
/// assert!(types.iter().any(|tool| tool.root_type == "ListPetsInput" && tool.is_typed()));
/// # Ok::<(), toolkit_gen::builder::ReadError>(())
/// ```
pub fn openapi_typing(read: &ReadOperations, typed: impl FnMut(&str)) -> Vec<ToolTypes> {
    let definitions: Vec<&ToolDefinition> = read
        .operations
        .iter()
        .map(|operation| &operation.definition)
        .collect();
    module_typing(&definitions, &read.defs, &EmitOptions::default(), typed)
}

/// What each tool's input of a snapshot (as [`read_mcp_snapshot`](super::read_mcp_snapshot)
/// reads it) becomes under default options, each tool's input typed on its own: its type, and
/// the places that fell back to `serde_json::Value`. One [`ToolTypes`] per tool, in their order;
/// `typed` is told each tool's name once its types are made.
///
/// # Examples
///
/// ```
/// # let tasks_json = toolkit_gen::builder::EXAMPLE_TASKS;
/// let tools = toolkit_gen::builder::read_mcp_snapshot(tasks_json.as_ref())?;
/// let types = toolkit_gen::builder::snapshot_typing(&tools, |_| {});
/// assert!(types.iter().any(|tool| tool.tool == "add_task" && tool.root_type == "AddTaskInput"));
/// # Ok::<(), toolkit_gen::builder::ReadError>(())
/// ```
pub fn snapshot_typing(
    definitions: &[ToolDefinition],
    mut typed: impl FnMut(&str),
) -> Vec<ToolTypes> {
    let options = EmitOptions::default();
    definitions
        .iter()
        .map(|definition| {
            let schema = Value::Object(definition.input_schema().clone());
            let emitted = input_types(definition.name(), &schema, &options);
            typed(definition.name());
            ToolTypes {
                tool: definition.name().to_owned(),
                root_type: emitted.root_type,
                untyped: emitted.untyped,
            }
        })
        .collect()
}

//! MCP tool listings read into definitions, with no transport and no SDK: what the MCP source
//! (`toolkit-mcp`) and the generator (`toolkit-gen`, from a `tools/list` snapshot) share.
//!
//! - `tool.rs`: [`tool_definition`], an MCP `Tool` object as a [`ToolDefinition`](crate::ToolDefinition).
//! - `header_marks.rs`: [`header_marks`] and [`mark_problems`], the `x-mcp-header` marks.

mod header_marks;
mod tool;

pub use header_marks::{HeaderMark, MarkProblem, header_marks, mark_problems};
pub use tool::{ListedTool, listed_tool, tool_definition};

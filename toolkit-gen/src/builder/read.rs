//! An input read as the [`Builder`](super::Builder) reads it, without generating anything:
//! [`read_openapi`] and [`read_mcp_snapshot`], failing with a [`ReadError`].

use std::fmt;
use std::path::{Path, PathBuf};

use toolkit_core::ToolDefinition;
use toolkit_openapi::ReadOperations;

use crate::inputs::{read_openapi_for_module, read_snapshot};
use crate::problem::Problem;

/// Why an input could not be read: its file and every problem found in it, located.
///
/// Its `Display` is one sentence for people, the file named once:
/// `FILE: POINTER: MESSAGE; POINTER: MESSAGE` (a pointer left out where it is the whole file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    file: PathBuf,
    problems: Vec<Problem>,
}

impl ReadError {
    fn new(file: &Path, problems: Vec<Problem>) -> Self {
        Self {
            file: file.to_path_buf(),
            problems,
        }
    }

    /// The file that could not be read.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Each problem, located.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.file.display())?;
        for (index, problem) in self.problems.iter().enumerate() {
            if index > 0 {
                write!(f, "; ")?;
            }
            if problem.pointer == "#" {
                write!(f, "{}", problem.message)?;
            } else {
                write!(f, "{}: {}", problem.pointer, problem.message)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ReadError {}

/// Reads the operations of an OpenAPI 3.x, Swagger 2.0 or Google Discovery document (JSON or
/// YAML) as [`Builder::openapi`](super::Builder::openapi) reads them — with the runtime's own
/// reader, so that they are the operations a host gets — before any filter: the schemas name
/// their `$defs` entries, held once in [`ReadOperations::defs`], so that reading a large document
/// costs what the document is, not its operations times the schemas each reaches.
///
/// An operation that stands alone, with the entries it names copied in, is what
/// `toolkit_http::standing_alone` makes of them.
///
/// # Errors
///
/// The file cannot be read or decoded, or is no document of those kinds.
///
/// # Examples
///
/// ```
/// # let petstore_yaml = toolkit_gen::builder::EXAMPLE_PETSTORE;
/// let read = toolkit_gen::builder::read_openapi(petstore_yaml.as_ref())?;
/// assert!(read.operations.iter().any(|operation| operation.name() == "listPets"));
/// # Ok::<(), toolkit_gen::builder::ReadError>(())
/// ```
pub fn read_openapi(path: &Path) -> Result<ReadOperations, ReadError> {
    read_openapi_for_module(path)
        .map(|(_, read)| read)
        .map_err(|problems| ReadError::new(path, problems))
}

/// Reads the tools of an MCP `tools/list` snapshot as
/// [`Builder::mcp_snapshot`](super::Builder::mcp_snapshot) reads them: as `toolkit-gen snapshot`
/// writes it, a bare `{"tools": [...]}` result, or a bare array of tools.
///
/// # Errors
///
/// The file cannot be read or is no snapshot, or tools are no definitions (each located by its
/// pointer, `#/tools/3`).
///
/// # Examples
///
/// ```
/// # let tasks_json = toolkit_gen::builder::EXAMPLE_TASKS;
/// let tools = toolkit_gen::builder::read_mcp_snapshot(tasks_json.as_ref())?;
/// assert!(tools.iter().any(|tool| tool.name() == "add_task"));
/// # Ok::<(), toolkit_gen::builder::ReadError>(())
/// ```
pub fn read_mcp_snapshot(path: &Path) -> Result<Vec<ToolDefinition>, ReadError> {
    read_snapshot(path).map_err(|problems| ReadError::new(path, problems))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_error_is_one_sentence_naming_the_file_once() {
        let file = Path::new("tools.json");
        let whole = ReadError::new(file, vec![Problem::new(file, "#", "no `tools` array")]);
        assert_eq!(whole.to_string(), "tools.json: no `tools` array");
        let tools = ReadError::new(
            file,
            vec![
                Problem::new(file, "#/tools/0", "no name"),
                Problem::new(file, "#/tools/2", "no inputSchema"),
            ],
        );
        assert_eq!(
            tools.to_string(),
            "tools.json: #/tools/0: no name; #/tools/2: no inputSchema"
        );
        assert_eq!(tools.file(), file);
        assert_eq!(tools.problems().len(), 2);
    }
}

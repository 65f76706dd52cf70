//! The checks of tool names: MCP's charset and length, what model APIs take, duplicates, and
//! names that become one once renamed for a model.

use std::collections::HashMap;

use toolkit_core::naming::{DEFAULT_MAX_NAME_LENGTH, tool_name};

use super::{Check, Severity, ToolFindings};

/// The longest name MCP advises.
const MCP_MAX_NAME_LENGTH: usize = 128;

/// The names seen so far in a listing: as the server wrote them, and as renamed for a model.
#[derive(Default)]
pub(super) struct Names {
    seen: HashMap<String, usize>,
    renamed: HashMap<String, String>,
}

impl Names {
    /// Checks `name` (not empty) of the tool `at`, and remembers it.
    pub(super) fn check(&mut self, name: &str, at: &mut ToolFindings<'_>) {
        if let Some(first) = self.seen.get(name) {
            at.push(
                Severity::Error,
                Check::DuplicateName,
                "#/name",
                format!(
                    "tool #{first} has this name too: a client keeps one of them, or refuses the listing"
                ),
            );
            return;
        }
        self.seen.insert(name.to_owned(), at.index);
        let outside: String = unique(name.chars().filter(|c| !is_mcp_char(*c)));
        let length = name.chars().count();
        if !outside.is_empty() || length > MCP_MAX_NAME_LENGTH {
            let mut problems = Vec::new();
            if !outside.is_empty() {
                problems.push(format!("holds {outside:?}"));
            }
            if length > MCP_MAX_NAME_LENGTH {
                problems.push(format!("is {length} characters long"));
            }
            at.push(
                Severity::Warning,
                Check::ToolName,
                "#/name",
                format!(
                    "the name {}: MCP names should be 1 to 128 of [A-Za-z0-9_.-]",
                    problems.join(" and ")
                ),
            );
        } else if let Some(problem) = model_problem(name) {
            at.push(
                Severity::Info,
                Check::ModelName,
                "#/name",
                format!(
                    "model APIs refuse the name as it is ({problem}; OpenAI and Anthropic take [A-Za-z0-9_-]{{1,64}}, Gemini a first letter or `_`): a toolkit renames it, so the model calls it by another name"
                ),
            );
        }
        // The same source name for every tool: two names that clash once renamed clash under
        // any source name.
        let renamed = tool_name("s", name, DEFAULT_MAX_NAME_LENGTH);
        match self.renamed.get(&renamed) {
            Some(other) => at.push(
                Severity::Warning,
                Check::NameClash,
                "#/name",
                format!(
                    "renamed for model APIs, the name is the same as that of tool {other:?}: an assembly refuses one of them"
                ),
            ),
            None => {
                self.renamed.insert(renamed, name.to_owned());
            }
        }
    }
}

fn is_mcp_char(character: char) -> bool {
    character.is_ascii_alphanumeric() || matches!(character, '_' | '.' | '-')
}

/// Why model APIs refuse `name` (a name MCP accepts), if they do.
fn model_problem(name: &str) -> Option<String> {
    let outside: String = unique(
        name.chars()
            .filter(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))),
    );
    if !outside.is_empty() {
        return Some(format!("it holds {outside:?}"));
    }
    let length = name.chars().count();
    if length > DEFAULT_MAX_NAME_LENGTH {
        return Some(format!("it is {length} characters long"));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return Some("it does not start with a letter or `_`".to_owned());
    }
    None
}

/// The characters of `chars`, each once, in the order first seen.
fn unique(chars: impl Iterator<Item = char>) -> String {
    let mut seen = String::new();
    for character in chars {
        if !seen.contains(character) {
            seen.push(character);
        }
    }
    seen
}

//! A located problem of a GraphQL input: the file, the line and column, and what is wrong.

use std::fmt;

use apollo_compiler::validation::DiagnosticList;
use serde::{Deserialize, Serialize};

/// A problem of a schema or an operation document, where it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// The file as the caller named it.
    pub file: String,
    /// The line, from 1; 0 when the problem is about the whole file.
    pub line: usize,
    /// The column, from 1 (characters); 0 when the problem is about the whole file.
    pub column: usize,
    /// What is wrong, a sentence for people.
    pub message: String,
}

impl Problem {
    /// A problem of the whole `file`.
    pub fn whole(file: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            line: 0,
            column: 0,
            message: message.into(),
        }
    }

    /// A problem at `line` and `column` of `file`.
    pub fn at(
        file: impl Into<String>,
        line: usize,
        column: usize,
        message: impl Into<String>,
    ) -> Self {
        Self {
            file: file.into(),
            line,
            column,
            message: message.into(),
        }
    }

    /// The problems apollo-compiler found, each where its diagnostic points.
    pub(crate) fn from_diagnostics(file: &str, diagnostics: &DiagnosticList) -> Vec<Self> {
        diagnostics
            .iter()
            .map(|diagnostic| {
                let (line, column) = diagnostic
                    .line_column_range()
                    .map_or((0, 0), |range| (range.start.line, range.start.column));
                Self::at(file, line, column, diagnostic.error.to_string())
            })
            .collect()
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.column, self.message
            )
        }
    }
}

/// A schema that could not be read, with every problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    /// Each problem, located.
    pub problems: Vec<Problem>,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the GraphQL schema cannot be read: ")?;
        for (index, problem) in self.problems.iter().enumerate() {
            if index > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SchemaError {}

//! What both modes take and give: [`ReadOptions`] and [`ReadTools`].

use serde::{Deserialize, Serialize};
use toolkit_openapi::operations::Operation;

use crate::problem::Problem;
use crate::skipped::Skipped;

/// How a schema or its operations become tools.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadOptions {
    /// How many levels of object fields a root field's default selection answers: 2 (its own
    /// scalars and enums, and those of the objects under it).
    pub depth: usize,
    /// Whether schema-mode tools take a `selection` (a selection set the model writes).
    pub selection: bool,
    /// The path of the GraphQL endpoint below the source's base URL: `/` when the base URL is
    /// the endpoint itself (`https://api.github.com/graphql`).
    pub endpoint_path: String,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            depth: 2,
            selection: true,
            endpoint_path: "/".to_owned(),
        }
    }
}

impl ReadOptions {
    /// These options with default selections `depth` levels deep.
    #[must_use]
    pub fn depth(mut self, depth: usize) -> Self {
        self.depth = depth;
        self
    }

    /// These options with or without the `selection` property.
    #[must_use]
    pub fn selection(mut self, selection: bool) -> Self {
        self.selection = selection;
        self
    }
}

/// The tools read, what is no tool, and the problems of operation documents.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReadTools {
    /// The tools, as HTTP operations that are GraphQL requests.
    pub operations: Vec<Operation>,
    /// Root fields or operations that are no tool, and why.
    pub skipped: Vec<Skipped>,
    /// Operation documents (or operations in them) that are invalid or anonymous, located.
    pub problems: Vec<Problem>,
}

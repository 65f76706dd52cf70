//! A root field or an operation that is no tool, and why.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A root field or operation that is no tool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Where it is: `Subscription.issueUpdated`, or `file.graphql:3:1`.
    pub location: String,
    /// Why it is no tool.
    pub reason: SkipReason,
}

/// Why a root field or an operation is no tool. Its [`Display`](fmt::Display) is a sentence for
/// people; its serde form a stable `kind`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[non_exhaustive]
pub enum SkipReason {
    /// A subscription: a stream of answers, which one request does not make.
    Subscription,
    /// Another tool already has the name.
    DuplicateName {
        /// The name.
        name: String,
    },
    /// The name is no tool name (longer than 64 characters).
    BadName {
        /// Why.
        problem: String,
    },
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Subscription => {
                f.write_str("a subscription, which one HTTP request does not make")
            }
            Self::DuplicateName { name } => write!(f, "another tool is already named {name:?}"),
            Self::BadName { problem } => write!(f, "no tool name: {problem}"),
        }
    }
}

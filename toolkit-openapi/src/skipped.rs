//! What the reader could not make a tool of, and why: [`Skipped`] and [`SkipReason`].

use std::fmt;

use serde::{Deserialize, Serialize};

/// An operation of the document that is no tool, with where it is and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Where it is in the document, as a JSON pointer: `#/paths/~1pets~1{id}/post`.
    pub location: String,
    /// The method, upper case (empty when a whole path was skipped).
    pub method: String,
    /// The path as the document writes it.
    pub path: String,
    /// Why it is no tool.
    pub reason: SkipReason,
}

/// Why an operation is no tool. Its [`Display`](fmt::Display) is a sentence for people; its
/// [`kind`](SkipReason::kind) a stable word for scripts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[non_exhaustive]
pub enum SkipReason {
    /// The request body is neither JSON nor a form (multipart, octet-stream, text, …).
    BodyNotJson {
        /// The media types the document offers for the body.
        media_types: Vec<String>,
    },
    /// A parameter is written in a style no request here writes: `label` or `matrix`, a list in
    /// the path, a `deepObject` that is not exploded.
    ParameterStyle {
        /// The parameter's name.
        name: String,
        /// Its style (or `explode` setting) as the document writes it.
        style: String,
    },
    /// A parameter's value is an object (or a list of objects or lists) in a style that cannot
    /// write it: a path's, a header's, or an exploded `form`'s, whose keys would spread over
    /// the query.
    ObjectParameter {
        /// The parameter's name.
        name: String,
    },
    /// A parameter is described by a media type (`content`) rather than a schema.
    ParameterContent {
        /// The parameter's name.
        name: String,
    },
    /// The operation needs a cookie, which is the client's to send.
    Cookie {
        /// The cookie's name.
        name: String,
    },
    /// The path's `{names}` and the path parameters do not match.
    PathMismatch {
        /// What does not match.
        detail: String,
    },
    /// A reference to another document or address, which the reader never fetches.
    ExternalReference {
        /// The reference.
        reference: String,
    },
    /// A reference to a place of the document that does not exist.
    BrokenReference {
        /// The reference.
        reference: String,
    },
    /// A schema refers to something that is not a schema.
    NotASchema {
        /// The reference.
        reference: String,
    },
    /// Another operation has the name (as a model reads names).
    DuplicateName {
        /// The name.
        name: String,
        /// Where the operation that has it is.
        taken_by: String,
    },
    /// Standing alone, the operation's schemas would take the document's copies of its schemas
    /// past [`ReadOptions::copy_budget`](super::ReadOptions::copy_budget) (each operation holds
    /// every schema it reaches: operations times schemas).
    OverBudget {
        /// The budget, in bytes of JSON.
        budget: usize,
    },
    /// The operation is not what OpenAPI says it should be.
    Malformed {
        /// What is wrong.
        detail: String,
    },
}

impl SkipReason {
    /// A stable word for the reason, as its JSON form's `kind` has it.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::BodyNotJson { .. } => "bodyNotJson",
            Self::ParameterStyle { .. } => "parameterStyle",
            Self::ObjectParameter { .. } => "objectParameter",
            Self::ParameterContent { .. } => "parameterContent",
            Self::Cookie { .. } => "cookie",
            Self::PathMismatch { .. } => "pathMismatch",
            Self::ExternalReference { .. } => "externalReference",
            Self::BrokenReference { .. } => "brokenReference",
            Self::NotASchema { .. } => "notASchema",
            Self::DuplicateName { .. } => "duplicateName",
            Self::OverBudget { .. } => "overBudget",
            Self::Malformed { .. } => "malformed",
        }
    }

    pub(crate) fn malformed(detail: impl Into<String>) -> Self {
        Self::Malformed {
            detail: detail.into(),
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BodyNotJson { media_types } => write!(
                f,
                "the request body is neither JSON nor a form: {}",
                media_types.join(", ")
            ),
            Self::ParameterStyle { name, style } => write!(
                f,
                "the parameter {name:?} is written in a style no request here writes ({style})"
            ),
            Self::ObjectParameter { name } => {
                write!(
                    f,
                    "the parameter {name:?} is an object, which has no place in a request"
                )
            }
            Self::ParameterContent { name } => write!(
                f,
                "the parameter {name:?} is described by a media type, not a schema"
            ),
            Self::Cookie { name } => write!(f, "the operation needs the cookie {name:?}"),
            Self::PathMismatch { detail } => {
                write!(f, "the path and its parameters do not match: {detail}")
            }
            Self::ExternalReference { reference } => write!(
                f,
                "{reference:?} refers outside the document, which is never fetched"
            ),
            Self::BrokenReference { reference } => {
                write!(f, "{reference:?} refers to nothing in the document")
            }
            Self::NotASchema { reference } => {
                write!(f, "{reference:?} is used as a schema but is no schema")
            }
            Self::DuplicateName { name, taken_by } => {
                write!(
                    f,
                    "the name {name:?} is taken by the operation at {taken_by}"
                )
            }
            Self::OverBudget { budget } => write!(
                f,
                "standing alone, its schemas would take the copies of the document's schemas \
                 past {budget} bytes of JSON (each operation holds every schema it reaches); \
                 read the document with shared `$defs`, as `toolkit-gen openapi` does"
            ),
            Self::Malformed { detail } => write!(f, "{detail}"),
        }
    }
}

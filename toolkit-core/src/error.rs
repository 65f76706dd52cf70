//! How a source fails ([`ToolSourceError`], [`Reason`]) and what a model reads of it ([`Failure`]).
//!
//! A source's error names the source and holds a reason. A host recovers from it by matching the
//! reason (`Reason::Authentication { .. }` to ask for a connection again); a model reads only
//! [`ToolSourceError::model_message`], which never carries an address, a credential or another
//! internal unless the reason is one written for the model.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A failure of a tool source: which source, and why.
///
/// ```
/// use toolkit_core::{Reason, ToolSourceError};
///
/// let error = ToolSourceError::new("github", Reason::unavailable("connect to 10.0.0.7:443 refused"));
/// assert!(error.is_retryable());
/// // The model never reads the address.
/// assert_eq!(error.model_message(), "The source is unavailable at the moment. Try again later.");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSourceError {
    /// The name of the source that failed.
    pub source: String,
    /// Why it failed.
    pub reason: Reason,
}

/// Why a source failed. Each reason carries a description for logs and people; only
/// [`Reason::InvalidInput`] and [`Reason::CallFailed`] carry one written for a model.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    /// The source refused the credentials the host gave its client.
    Authentication {
        /// What happened, for people.
        description: String,
    },
    /// The source has no such tool (or no longer has it).
    NotFound {
        /// What happened, for people.
        description: String,
    },
    /// The input is not what the tool takes; written for the model.
    InvalidInput {
        /// What is wrong with the input, for the model.
        description: String,
    },
    /// The tool ran and said it failed, or answered more than a tool can return; written for
    /// the model.
    CallFailed {
        /// What the tool said, for the model.
        description: String,
    },
    /// The source is down, overloaded or unreachable: the only reason worth trying again.
    Unavailable {
        /// What happened, for people.
        description: String,
        /// How long the source asked to be left alone, when it said (as `Retry-After` does).
        retry_after: Option<Duration>,
    },
    /// The source answered in a way that could not be read.
    InvalidResponse {
        /// What happened, for people.
        description: String,
    },
    /// The source needs something this runtime does not do.
    Unsupported {
        /// What happened, for people.
        description: String,
    },
    /// Anything else, such as a source that panicked.
    Unknown {
        /// What happened, for people.
        description: String,
    },
}

impl Reason {
    /// [`Reason::Authentication`] with `description`.
    pub fn authentication(description: impl Into<String>) -> Self {
        Self::Authentication {
            description: description.into(),
        }
    }

    /// [`Reason::NotFound`] with `description`.
    pub fn not_found(description: impl Into<String>) -> Self {
        Self::NotFound {
            description: description.into(),
        }
    }

    /// [`Reason::InvalidInput`] with `description`, which the model reads.
    pub fn invalid_input(description: impl Into<String>) -> Self {
        Self::InvalidInput {
            description: description.into(),
        }
    }

    /// [`Reason::CallFailed`] with `description`, which the model reads.
    pub fn call_failed(description: impl Into<String>) -> Self {
        Self::CallFailed {
            description: description.into(),
        }
    }

    /// [`Reason::Unavailable`] with `description` and no retry-after.
    pub fn unavailable(description: impl Into<String>) -> Self {
        Self::Unavailable {
            description: description.into(),
            retry_after: None,
        }
    }

    /// [`Reason::InvalidResponse`] with `description`.
    pub fn invalid_response(description: impl Into<String>) -> Self {
        Self::InvalidResponse {
            description: description.into(),
        }
    }

    /// [`Reason::Unsupported`] with `description`.
    pub fn unsupported(description: impl Into<String>) -> Self {
        Self::Unsupported {
            description: description.into(),
        }
    }

    /// [`Reason::Unknown`] with `description`.
    pub fn unknown(description: impl Into<String>) -> Self {
        Self::Unknown {
            description: description.into(),
        }
    }

    /// The reason's code, as a [`Failure`] carries it: `AuthenticationError`, `NotFoundError`,
    /// `InvalidInputError`, `CallFailedError`, `UnavailableError`, `InvalidResponseError`,
    /// `UnsupportedError` or `UnknownError`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Authentication { .. } => "AuthenticationError",
            Self::NotFound { .. } => "NotFoundError",
            Self::InvalidInput { .. } => "InvalidInputError",
            Self::CallFailed { .. } => "CallFailedError",
            Self::Unavailable { .. } => "UnavailableError",
            Self::InvalidResponse { .. } => "InvalidResponseError",
            Self::Unsupported { .. } => "UnsupportedError",
            Self::Unknown { .. } => "UnknownError",
        }
    }

    /// The description, for logs and people (it may name an address: never show it to a model).
    pub fn description(&self) -> &str {
        match self {
            Self::Authentication { description }
            | Self::NotFound { description }
            | Self::InvalidInput { description }
            | Self::CallFailed { description }
            | Self::Unavailable { description, .. }
            | Self::InvalidResponse { description }
            | Self::Unsupported { description }
            | Self::Unknown { description } => description,
        }
    }

    /// Whether trying again may help: only for [`Reason::Unavailable`].
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Unavailable { .. })
    }

    /// What a model reads: the description of [`Reason::InvalidInput`] and
    /// [`Reason::CallFailed`], which is written for it, and the reason's default message
    /// otherwise.
    pub fn model_message(&self) -> &str {
        match self {
            Self::InvalidInput { description } | Self::CallFailed { description } => description,
            Self::Authentication { .. } => {
                "The source refused its credentials. The host has to connect it again."
            }
            Self::NotFound { .. } => "The source has no such tool.",
            Self::Unavailable { .. } => "The source is unavailable at the moment. Try again later.",
            Self::InvalidResponse { .. } => "The source gave an answer that could not be read.",
            Self::Unsupported { .. } => "The source asked for something that is not supported.",
            Self::Unknown { .. } => "The source failed.",
        }
    }
}

impl ToolSourceError {
    /// An error of the source `source` for `reason`.
    pub fn new(source: impl Into<String>, reason: Reason) -> Self {
        Self {
            source: source.into(),
            reason,
        }
    }

    /// Whether trying again may help: only when the source is unavailable.
    pub fn is_retryable(&self) -> bool {
        self.reason.is_retryable()
    }

    /// What a model reads of this error; see [`Reason::model_message`].
    pub fn model_message(&self) -> &str {
        self.reason.model_message()
    }

    /// What a model reads of this error, as data.
    pub fn to_failure(&self) -> Failure {
        Failure::new(
            self.reason.code(),
            self.model_message(),
            self.is_retryable(),
        )
    }
}

impl fmt::Display for ToolSourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of source {:?}: {}",
            self.reason.code(),
            self.source,
            self.reason.description()
        )
    }
}

impl std::error::Error for ToolSourceError {}

/// What a model reads of a call that failed: the code of the failure, what the model is told,
/// and whether trying again may help.
///
/// Its JSON form is `{"code": .., "message": .., "retryable": .., "isFailure": true}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    /// The failure's code, such as `NotFoundError`.
    pub code: String,
    /// What the model is told.
    pub message: String,
    /// Whether trying the same call again may help.
    pub retryable: bool,
    /// Always `true`: marks the JSON as a failure among results.
    #[serde(default = "always_true")]
    pub is_failure: bool,
}

fn always_true() -> bool {
    true
}

impl Failure {
    /// A failure with this code and message.
    pub fn new(code: impl Into<String>, message: impl Into<String>, retryable: bool) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            retryable,
            is_failure: true,
        }
    }

    /// The failure of a call whose input the tool does not take.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::new("InvalidInputError", message, false)
    }

    /// The failure of a call of a tool that does not exist.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new("NotFoundError", message, false)
    }

    /// The failure as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
            "isFailure": true,
        })
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Failure {}

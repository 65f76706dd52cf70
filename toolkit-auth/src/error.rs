//! [`AuthError`]: why a request could not be authorized.

use std::fmt;

use toolkit_core::Reason;

/// Why a request could not be authorized. The description names no secret (no token, code,
/// verifier or client secret) and no address; a source fails with it as
/// [`Reason::Authentication`] or [`Reason::Unavailable`], whose model message is the default one.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthError {
    /// The authorization did not succeed: metadata that is malformed or names another resource
    /// or issuer, a registration or token request refused, a redirect with a wrong `state`, the
    /// user gone. A source fails with [`Reason::Authentication`].
    Refused(String),
    /// An authorization server or a metadata endpoint could not be reached, or failed (5xx, no
    /// answer in time). A source fails with [`Reason::Unavailable`].
    Unavailable(String),
    /// The token store failed. A source fails with [`Reason::Authentication`].
    Store(String),
}

impl AuthError {
    pub(crate) fn refused(description: impl Into<String>) -> Self {
        Self::Refused(description.into())
    }

    pub(crate) fn unavailable(description: impl Into<String>) -> Self {
        Self::Unavailable(description.into())
    }

    /// What happened, in words that name no secret.
    pub fn description(&self) -> &str {
        match self {
            Self::Refused(description)
            | Self::Unavailable(description)
            | Self::Store(description) => description,
        }
    }
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Refused(description) => write!(f, "authorization refused: {description}"),
            Self::Unavailable(description) => {
                write!(f, "authorization unavailable: {description}")
            }
            Self::Store(description) => write!(f, "token store: {description}"),
        }
    }
}

impl std::error::Error for AuthError {}

impl From<AuthError> for Reason {
    fn from(error: AuthError) -> Self {
        match error {
            AuthError::Unavailable(description) => Reason::unavailable(description),
            AuthError::Refused(description) | AuthError::Store(description) => {
                Reason::authentication(description)
            }
        }
    }
}

/// At most `max` characters of words an authorization server wrote, with control characters
/// dropped: what of them a description may carry.
pub(crate) fn server_words(words: &str, max: usize) -> String {
    words
        .chars()
        .filter(|c| !c.is_control())
        .take(max)
        .collect()
}

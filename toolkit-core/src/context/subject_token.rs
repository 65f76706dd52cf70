//! The bearer token a person presented to the server serving their call: [`SubjectToken`].

use std::fmt;
use std::sync::Arc;

/// The bearer token the person behind a call presented to the server that serves it (the
/// gateway), for a source that acts on their behalf: one that exchanges it for a token of its
/// own audience (RFC 8693), or passes it on where its audience is that source. Its `Debug` never
/// shows it. Put in a call's [`CallContext`](crate::CallContext) only by a server that checked
/// it.
///
/// ```
/// use toolkit_core::context::SubjectToken;
///
/// let token = SubjectToken::new("eyJhbGciOi…");
/// assert_eq!(token.secret(), "eyJhbGciOi…");
/// assert_eq!(format!("{token:?}"), "SubjectToken(…)");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct SubjectToken(Arc<str>);

impl SubjectToken {
    /// The token as presented.
    pub fn new(token: &str) -> Self {
        Self(Arc::from(token))
    }

    /// The token, to send where the person's credential goes (never to a log or a model).
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SubjectToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SubjectToken(…)")
    }
}

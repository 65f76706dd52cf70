//! Which MCP session a request came in: [`Session`].

use std::fmt;
use std::sync::Arc;

/// The MCP session a request came in, by the id the server gave it (the `Mcp-Session-Id` of
/// Streamable HTTP). A server that serves sessions puts it in the
/// [`CallContext`](crate::CallContext) of each call it serves
/// ([`CallContext::session`](crate::CallContext::session)), so that an audit record can say
/// which session a call was of; a stateless request and stdio have none. Cheap to clone.
///
/// ```
/// use toolkit_core::CallContext;
/// use toolkit_core::context::Session;
///
/// let context = CallContext::new().with_extension(Session::new("3f2a"));
/// assert_eq!(context.session().map(Session::id), Some("3f2a"));
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Session(Arc<str>);

impl Session {
    /// The session of id `id`.
    pub fn new(id: impl Into<Arc<str>>) -> Self {
        Self(id.into())
    }

    /// The session's id, as the server gave it.
    pub fn id(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Session").field(&&*self.0).finish()
    }
}

impl fmt::Display for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

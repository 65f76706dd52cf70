//! When a session ends: [`SessionEnd`], a token cancelled once the last handle on a session's
//! handler is dropped (its client went away, its HTTP session was deleted or expired, stdin
//! ended), so that what the session started in the background stops with it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::sync::{CancellationToken, DropGuard};

/// Cancels its token when dropped: held (in an `Arc`) by one session's handler.
#[derive(Debug)]
pub(crate) struct SessionEnd {
    token: CancellationToken,
    _guard: DropGuard,
}

impl Default for SessionEnd {
    fn default() -> Self {
        let token = CancellationToken::new();
        Self {
            _guard: token.clone().drop_guard(),
            token,
        }
    }
}

impl SessionEnd {
    /// A token cancelled when the session ends.
    pub(crate) fn token(&self) -> CancellationToken {
        self.token.clone()
    }
}

/// Removes `session`'s entry from `kept` once `ended` is cancelled (the session ended): what a
/// layer keeps per session lives no longer than the session.
pub(crate) fn forget_at_end<V: Send + 'static>(
    kept: &Arc<Mutex<HashMap<String, V>>>,
    session: String,
    ended: CancellationToken,
) {
    let kept = Arc::clone(kept);
    tokio::spawn(async move {
        ended.cancelled().await;
        kept.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&session);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_cancelled_when_the_session_end_is_dropped() {
        let end = SessionEnd::default();
        let token = end.token();
        assert!(!token.is_cancelled());
        drop(end);
        assert!(token.is_cancelled());
    }
}

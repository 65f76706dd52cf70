//! Which served session a task request comes from: [`TaskSession`], an extension of the
//! [`CallContext`](toolkit_core::CallContext) a host's [`Tasks`](crate::Tasks) is given, so
//! that the host keeps each session's tasks apart (a cap of its own, ids no other session
//! reaches) and forgets them when the session ends.

use std::sync::atomic::{AtomicU64, Ordering};

use tokio_util::sync::CancellationToken;

/// The served session of a task request: an id no other session of the process has, and a
/// token cancelled when the session ends.
#[derive(Clone, Debug)]
pub struct TaskSession {
    id: u64,
    ended: CancellationToken,
}

impl TaskSession {
    /// The session `id` (from [`TaskSession::next_id`]), ending when `ended` is cancelled.
    #[must_use]
    pub fn new(id: u64, ended: CancellationToken) -> Self {
        Self { id, ended }
    }

    /// An id no session of this process had before.
    pub fn next_id() -> u64 {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        NEXT.fetch_add(1, Ordering::Relaxed)
    }

    /// The session's id.
    #[must_use]
    pub fn id(&self) -> u64 {
        self.id
    }

    /// A token cancelled when the session ends.
    #[must_use]
    pub fn ended(&self) -> CancellationToken {
        self.ended.clone()
    }
}

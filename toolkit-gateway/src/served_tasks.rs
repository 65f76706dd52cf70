//! The task ids the gateway serves, kept per session: [`ServedTasks`]. Each served session (a
//! [`TaskSession`]) keeps the tasks its client created, at most a cap of them (a session at its
//! cap is refused a new task, and never takes the room of another's: only its own ended tasks
//! are forgotten to make room), and they are forgotten when the session ends.
//!
//! A served id is `source/nonce/id`: the source, a nonce drawn for the session (128 random
//! bits), and the source's own id, at most [`MAX_UPSTREAM_ID_BYTES`] of it. An upstream task
//! (source and id) is served under one id at a time, the one of its latest creation: a source
//! that restarted and handed out an id again gives it to the session whose call created it
//! this time, and the session that held it before no longer reaches it (the id is unknown
//! there), so one principal's id never reaches another's task. Each task is kept with the
//! source's connection that made it ([`Mcp::connection`]): once the source is connected to
//! again (its process started again, its session negotiated again), the ids of before are
//! unknown, even before any is handed out again.
//!
//! [`Mcp::connection`]: toolkit_mcp::Mcp::connection

use std::collections::HashMap;
use std::hash::{BuildHasher as _, RandomState};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use toolkit_serve::failure::echo;
use toolkit_serve::{Refusal, TaskSession, TaskStatusSink};

/// How many tasks one session keeps at most (a new one past it is refused).
pub const MAX_TASKS_PER_SESSION: usize = 1024;

/// How many bytes a source's task id may have (a task with a longer one is refused).
pub const MAX_UPSTREAM_ID_BYTES: usize = 256;

/// The tasks of every served session.
#[derive(Debug)]
pub(crate) struct ServedTasks {
    inner: Arc<Mutex<Inner>>,
    cap: usize,
}

#[derive(Debug, Default)]
struct Inner {
    sessions: HashMap<u64, Session>,
    /// Each upstream task (source, id): the served id it has, that of its latest creation.
    current: HashMap<(String, String), Current>,
    /// The order of the next task kept.
    next: u64,
}

#[derive(Debug)]
struct Current {
    served: String,
    session: u64,
}

/// One session's tasks, by served id, and how many are being created.
#[derive(Debug)]
struct Session {
    nonce: String,
    tasks: HashMap<String, Task>,
    pending: usize,
}

#[derive(Debug)]
struct Task {
    source: String,
    id: String,
    /// The source's connection that created it ([`Mcp::connection`]).
    ///
    /// [`Mcp::connection`]: toolkit_mcp::Mcp::connection
    connection: u64,
    order: u64,
    ended: bool,
    /// Where its statuses are told (the session's client), while they are.
    sink: Option<TaskStatusSink>,
}

/// Room held for one task of a session while its source creates it: given back when dropped
/// unkept.
#[derive(Debug)]
pub(crate) struct Slot<'a> {
    tasks: &'a ServedTasks,
    session: u64,
    kept: bool,
}

/// A task's status names its end.
pub(crate) fn is_end(status: Option<&str>) -> bool {
    matches!(status, Some("completed" | "failed" | "cancelled"))
}

/// 128 random bits from the system, in hex; without the system's randomness, two of the
/// process's hash keys (unpredictable from outside, though not fresh).
fn nonce() -> String {
    toolkit_core::random::hex_128().unwrap_or_else(|| {
        let high = RandomState::new().hash_one(0u8);
        let low = RandomState::new().hash_one(1u8);
        format!("{high:016x}{low:016x}")
    })
}

impl ServedTasks {
    /// The tasks of every session, at most `cap` per session.
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            inner: Arc::default(),
            cap: cap.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        lock(&self.inner)
    }

    /// Room for one more task of `session`, held until the task is kept
    /// ([`Slot::keep`]): at the cap, the session's own oldest ended task is forgotten, and
    /// without one the new task is refused. A session first seen is forgotten when it ends.
    pub(crate) fn reserve(&self, session: &TaskSession) -> Result<Slot<'_>, Refusal> {
        let cap = self.cap;
        let mut inner = self.lock();
        let first = !inner.sessions.contains_key(&session.id());
        let kept = inner
            .sessions
            .entry(session.id())
            .or_insert_with(|| Session {
                nonce: nonce(),
                tasks: HashMap::new(),
                pending: 0,
            });
        if kept.tasks.len() + kept.pending >= cap {
            let oldest = kept
                .tasks
                .iter()
                .filter(|(_, task)| task.ended)
                .min_by_key(|(_, task)| task.order)
                .map(|(served, _)| served.clone());
            let Some(oldest) = oldest else {
                return Err(Refusal::Failed(format!(
                    "This session has {cap} tasks, at most {cap} tasks at once are kept for one \
                     session: wait for one to end, or cancel one, before making another."
                )));
            };
            if let Some(task) = kept.tasks.remove(&oldest) {
                inner.forget_current(&task, &oldest);
            }
        }
        if let Some(kept) = inner.sessions.get_mut(&session.id()) {
            kept.pending += 1;
        }
        drop(inner);
        if first {
            self.forget_at_end(session);
        }
        Ok(Slot {
            tasks: self,
            session: session.id(),
            kept: false,
        })
    }

    /// Forgets `session`'s tasks once it ends (with a runtime to wait on; without one, they are
    /// kept).
    fn forget_at_end(&self, session: &TaskSession) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let inner = Arc::clone(&self.inner);
        let (id, ended) = (session.id(), session.ended());
        runtime.spawn(async move {
            ended.cancelled().await;
            lock(&inner).forget(id);
        });
    }

    /// Forgets every task of the session `id` (it ended).
    #[cfg(test)]
    pub(crate) fn forget(&self, id: u64) {
        self.lock().forget(id);
    }

    /// The source, its id and the source's connection that created it of `served`, when the
    /// session `id` holds it.
    pub(crate) fn route(&self, session: u64, served: &str) -> Option<(String, String, u64)> {
        let inner = self.lock();
        let task = inner.sessions.get(&session)?.tasks.get(served)?;
        Some((task.source.clone(), task.id.clone(), task.connection))
    }

    /// The served id of `source`'s task `id` on its connection `connection`, when the session
    /// `id` holds it.
    pub(crate) fn served_of(
        &self,
        session: u64,
        (source, id, connection): (&str, &str, u64),
    ) -> Option<String> {
        let inner = self.lock();
        let current = inner.current.get(&(source.to_owned(), id.to_owned()))?;
        let task = inner
            .sessions
            .get(&current.session)?
            .tasks
            .get(&current.served)?;
        (current.session == session && task.connection == connection)
            .then(|| current.served.clone())
    }

    /// Forgets every task of `source`, in every session (it was removed or made anew).
    pub(crate) fn forget_source(&self, source: &str) {
        let mut inner = self.lock();
        for session in inner.sessions.values_mut() {
            session.tasks.retain(|_, task| task.source != source);
        }
        inner.current.retain(|(of, _), _| of != source);
    }

    /// The task `served` of the session `id` ended (its client was told so).
    pub(crate) fn ended(&self, session: u64, served: &str) {
        if let Some(task) = self
            .lock()
            .sessions
            .get_mut(&session)
            .and_then(|kept| kept.tasks.get_mut(served))
        {
            task.ended = true;
        }
    }

    /// The served id of `source`'s task `id` on its connection `connection`, and where its
    /// statuses are told, if they are.
    pub(crate) fn sink_of(
        &self,
        (source, id, connection): (&str, &str, u64),
    ) -> Option<(String, TaskStatusSink)> {
        let inner = self.lock();
        let current = inner.current.get(&(source.to_owned(), id.to_owned()))?;
        let task = inner
            .sessions
            .get(&current.session)?
            .tasks
            .get(&current.served)?;
        if task.connection != connection {
            return None;
        }
        Some((current.served.clone(), task.sink.clone()?))
    }

    /// Nothing more is told of `source`'s task `id`; `ended`, its status named its end.
    pub(crate) fn untold(&self, source: &str, id: &str, ended: bool) {
        let mut inner = self.lock();
        let Some(current) = inner.current.get(&(source.to_owned(), id.to_owned())) else {
            return;
        };
        let (session, served) = (current.session, current.served.clone());
        if let Some(task) = inner
            .sessions
            .get_mut(&session)
            .and_then(|kept| kept.tasks.get_mut(&served))
        {
            task.sink = None;
            task.ended |= ended;
        }
    }

    /// How many tasks the session `id` holds.
    #[cfg(test)]
    pub(crate) fn len(&self, session: u64) -> usize {
        self.lock()
            .sessions
            .get(&session)
            .map_or(0, |kept| kept.tasks.len())
    }
}

impl Slot<'_> {
    /// Keeps `source`'s new task `id`, made on its connection `connection`, for the session,
    /// its statuses told to `sink`: its served id. Refused for an id over
    /// [`MAX_UPSTREAM_ID_BYTES`], or when the session ended meanwhile.
    pub(crate) fn keep(
        mut self,
        (source, id, connection): (&str, &str, u64),
        sink: Option<TaskStatusSink>,
    ) -> Result<String, Refusal> {
        if id.len() > MAX_UPSTREAM_ID_BYTES {
            return Err(Refusal::Failed(format!(
                "The source {:?} gave a task id of {} bytes; a task id may have at most \
                 {MAX_UPSTREAM_ID_BYTES} bytes here.",
                echo(source),
                id.len()
            )));
        }
        let mut inner = self.tasks.lock();
        let order = inner.next;
        inner.next += 1;
        let Some(kept) = inner.sessions.get_mut(&self.session) else {
            return Err(Refusal::Failed("The session ended.".into()));
        };
        kept.pending = kept.pending.saturating_sub(1);
        self.kept = true;
        let served = format!("{source}/{}/{id}", kept.nonce);
        kept.tasks.insert(
            served.clone(),
            Task {
                source: source.to_owned(),
                id: id.to_owned(),
                connection,
                order,
                ended: false,
                sink,
            },
        );
        let now = Current {
            served: served.clone(),
            session: self.session,
        };
        if let Some(before) = inner
            .current
            .insert((source.to_owned(), id.to_owned()), now)
            && before.served != served
            && let Some(holder) = inner.sessions.get_mut(&before.session)
        {
            // The source handed out the id again: the session that held it reaches it no more.
            holder.tasks.remove(&before.served);
        }
        Ok(served)
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if self.kept {
            return;
        }
        if let Some(kept) = self.tasks.lock().sessions.get_mut(&self.session) {
            kept.pending = kept.pending.saturating_sub(1);
        }
    }
}

impl Inner {
    fn forget(&mut self, session: u64) {
        let Some(kept) = self.sessions.remove(&session) else {
            return;
        };
        for (served, task) in &kept.tasks {
            self.forget_current(task, served);
        }
    }

    /// Forgets that `task` is served as `served`, if it still is.
    fn forget_current(&mut self, task: &Task, served: &str) {
        let key = (task.source.clone(), task.id.clone());
        if self
            .current
            .get(&key)
            .is_some_and(|current| current.served == served)
        {
            self.current.remove(&key);
        }
    }
}

fn lock(inner: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    inner.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use toolkit_serve::CancellationToken;

    use super::*;

    fn session() -> TaskSession {
        TaskSession::new(TaskSession::next_id(), CancellationToken::new())
    }

    /// A source removed or made anew by a reload: its tasks are forgotten in every session (a
    /// new connection may hand out the same ids), the other sources' kept.
    #[test]
    fn a_reloaded_sources_tasks_are_forgotten_in_every_session_and_no_other_sources() {
        let tasks = ServedTasks::new(4);
        let (alice, bob) = (session(), session());
        let keep = |session: &TaskSession, source: &str, id: &str| {
            tasks
                .reserve(session)
                .unwrap()
                .keep((source, id, 1), None)
                .unwrap()
        };
        let hers = keep(&alice, "reloaded", "t1");
        let his = keep(&bob, "reloaded", "t2");
        let other = keep(&bob, "kept", "t1");
        tasks.forget_source("reloaded");
        assert_eq!(tasks.route(alice.id(), &hers), None);
        assert_eq!(tasks.route(bob.id(), &his), None);
        assert_eq!(tasks.served_of(alice.id(), ("reloaded", "t1", 1)), None);
        assert_eq!(
            tasks.route(bob.id(), &other),
            Some(("kept".into(), "t1".into(), 1))
        );
        assert_eq!((tasks.len(alice.id()), tasks.len(bob.id())), (0, 1));
    }

    #[test]
    fn a_session_at_its_cap_is_refused_and_makes_room_only_from_its_own_ended_tasks() {
        let tasks = ServedTasks::new(2);
        let (alice, bob) = (session(), session());
        let hers = tasks
            .reserve(&alice)
            .unwrap()
            .keep(("s", "a1", 0), None)
            .unwrap();
        for id in ["b1", "b2"] {
            tasks
                .reserve(&bob)
                .unwrap()
                .keep(("s", id, 0), None)
                .unwrap();
        }
        let refused = tasks.reserve(&bob).unwrap_err();
        assert!(
            matches!(&refused, Refusal::Failed(words) if words.contains("at most 2 tasks")),
            "{refused:?}"
        );
        assert_eq!(
            tasks.route(alice.id(), &hers),
            Some(("s".into(), "a1".into(), 0))
        );
        // Bob's own ended task makes room for his next; alice's stays.
        let his = tasks.served_of(bob.id(), ("s", "b1", 0)).unwrap();
        tasks.ended(bob.id(), &his);
        tasks
            .reserve(&bob)
            .unwrap()
            .keep(("s", "b3", 0), None)
            .unwrap();
        assert_eq!(tasks.route(bob.id(), &his), None);
        assert_eq!(tasks.len(bob.id()), 2);
        assert_eq!(tasks.len(alice.id()), 1);
        // A slot given back unkept frees its room.
        let slot = tasks.reserve(&alice).unwrap();
        drop(slot);
        tasks
            .reserve(&alice)
            .unwrap()
            .keep(("s", "a2", 0), None)
            .unwrap();
        // The session ends: its tasks are forgotten.
        tasks.forget(alice.id());
        assert_eq!(tasks.route(alice.id(), &hers), None);
        assert_eq!(tasks.served_of(alice.id(), ("s", "a1", 0)), None);
    }

    #[test]
    fn served_ids_carry_a_session_nonce_and_a_reused_upstream_id_reaches_only_its_new_holder() {
        let tasks = ServedTasks::new(8);
        let (alice, bob) = (session(), session());
        let hers = tasks
            .reserve(&alice)
            .unwrap()
            .keep(("s", "1", 0), None)
            .unwrap();
        // The source restarted and hands out "1" again, to bob's call.
        let his = tasks
            .reserve(&bob)
            .unwrap()
            .keep(("s", "1", 0), None)
            .unwrap();
        assert_ne!(hers, his);
        let nonce = |served: &str| served.split('/').nth(1).map(str::len);
        assert_eq!(nonce(&hers), Some(32));
        assert_eq!(
            tasks.route(alice.id(), &hers),
            None,
            "alice reaches bob's task"
        );
        assert_eq!(tasks.route(alice.id(), &his), None);
        assert_eq!(
            tasks.route(bob.id(), &his),
            Some(("s".into(), "1".into(), 0))
        );
        assert_eq!(tasks.served_of(alice.id(), ("s", "1", 0)), None);
        assert_eq!(tasks.served_of(bob.id(), ("s", "1", 0)), Some(his.clone()));
        // The source connected to again: the task of the connection before is not listed.
        assert_eq!(tasks.served_of(bob.id(), ("s", "1", 1)), None);
        assert!(tasks.sink_of(("s", "1", 1)).is_none());
    }

    #[test]
    fn a_source_task_id_over_the_bound_is_refused_and_frees_its_room() {
        let tasks = ServedTasks::new(1);
        let alice = session();
        let long = "x".repeat(MAX_UPSTREAM_ID_BYTES + 1);
        let refused = tasks
            .reserve(&alice)
            .unwrap()
            .keep(("s", &long, 0), None)
            .unwrap_err();
        assert!(
            matches!(&refused, Refusal::Failed(words) if words.contains("257 bytes")),
            "{refused:?}"
        );
        tasks
            .reserve(&alice)
            .unwrap()
            .keep(("s", "short", 0), None)
            .unwrap();
    }

    #[tokio::test]
    async fn a_sessions_tasks_are_forgotten_when_it_ends() {
        let tasks = ServedTasks::new(4);
        let ended = CancellationToken::new();
        let alice = TaskSession::new(TaskSession::next_id(), ended.clone());
        let hers = tasks
            .reserve(&alice)
            .unwrap()
            .keep(("s", "1", 0), None)
            .unwrap();
        ended.cancel();
        for _ in 0..1000 {
            if tasks.len(alice.id()) == 0 {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(tasks.route(alice.id(), &hers), None);
        assert!(tasks.lock().current.is_empty());
    }

    #[test]
    fn two_sessions_making_tasks_at_once_each_keep_their_own_and_neither_starves() {
        let tasks = Arc::new(ServedTasks::new(64));
        let sessions: Vec<TaskSession> = (0..2).map(|_| session()).collect();
        let threads: Vec<_> = (0..8)
            .map(|thread| {
                let tasks = Arc::clone(&tasks);
                let session = sessions[thread % 2].clone();
                std::thread::spawn(move || {
                    let mut kept = Vec::new();
                    for n in 0..200 {
                        if let Ok(slot) = tasks.reserve(&session) {
                            // Upstream ids shared by both sessions, as a restarted source's.
                            kept.push(slot.keep(("s", &format!("{thread}-{n}"), 0), None).unwrap());
                        }
                    }
                    (session.id(), kept)
                })
            })
            .collect();
        let mut kept: HashMap<u64, Vec<String>> = HashMap::new();
        for thread in threads {
            let (session, ids) = thread.join().unwrap();
            kept.entry(session).or_default().extend(ids);
        }
        for (at, session) in sessions.iter().enumerate() {
            let other = &sessions[1 - at];
            // Each took exactly its cap, whatever the other did.
            assert_eq!(kept[&session.id()].len(), 64);
            assert_eq!(tasks.len(session.id()), 64);
            for served in &kept[&session.id()] {
                assert!(tasks.route(session.id(), served).is_some());
                assert!(
                    tasks.route(other.id(), served).is_none(),
                    "one reaches another's"
                );
            }
        }
    }
}

//! The audit record of every call through the gateway (`[audit]`): one JSON object a line for
//! each tool call, resource read and prompt get that the policy let through to a source, saying
//! who asked (the principal, the session), what (the source, the tool, URI or prompt), what the
//! policy decided and who approved, the input's SHA-256 and size, how it ended and how long it
//! took ([`AuditRecord`]; the schema, versioned, in `docs/audit.md`). Never an input's value
//! (unless `include_inputs`, and then with every credential the gateway holds redacted), a
//! result, or a credential.
//!
//! Where: `Audited` around each source (as `Metered` is, `metrics.rs`), and the resources'
//! and prompts' path (`resources.rs`). Each record is a `tracing` event of target [`TARGET`] too,
//! in the call's span, so an OpenTelemetry log export carries it beside the spans.
//!
//! Nothing is lost: a record goes on an unbounded channel to a thread of its own
//! (`audit/writer.rs`), which writes each batch and flushes it; a call waits only when
//! [`MAX_UNWRITTEN`] records are not written yet (a file that fails: they are kept, tried again
//! every second, and `/readyz` answers 503 meanwhile). At shutdown [`Audit::finish`] waits for the
//! calls still running to be recorded (a call cut short is recorded `cancelled`, one still
//! running after the wait `unfinished`) and for every record to be written; what still cannot be
//! written by then goes to standard error. A file that
//! cannot be opened at the start stops the start, naming it.

mod audited;
mod file;
mod record;
mod writer;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::{Semaphore, oneshot};
use toolkit_core::{CallContext, JsonObject};
use toolkit_http::Redactor;

pub(crate) use self::audited::{Audited, outcome_label};
pub use self::record::{ApprovalRecord, AuditDecision, AuditRecord, Kind, SCHEMA_VERSION};
use self::writer::{Message, Sink, Writer};
use super::Readiness;
use super::config::AuditConfig;

/// The `tracing` target of the audit's events.
pub const TARGET: &str = "toolkit::audit";

/// The most records not written yet (a failing file's): one more call waits for room.
pub const MAX_UNWRITTEN: usize = 100_000;

/// The gateway's audit: where records are sent. Cheap to clone.
#[derive(Clone)]
pub struct Audit {
    inner: Arc<Inner>,
}

struct Inner {
    sender: mpsc::Sender<Message>,
    /// Room for records not written yet ([`MAX_UNWRITTEN`]).
    room: Arc<Semaphore>,
    /// With `include_inputs`: what redacts the inputs recorded.
    redactor: Option<Redactor>,
    /// The records begun and not sent yet (calls running), by a number of their own, with when
    /// each began: sent by whoever takes it out first, the call's end or [`Audit::finish`].
    open: Mutex<HashMap<u64, (AuditRecord, Instant)>>,
    /// The number of the next record begun.
    next: AtomicU64,
}

impl std::fmt::Debug for Audit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Audit")
            .field("open", &self.open().len())
            .finish_non_exhaustive()
    }
}

impl Audit {
    /// Starts the audit `config` describes: opens its file (creating it, mode 0600) and starts
    /// its writer, which says in `readiness` when the records cannot be written. `secrets` are
    /// redacted from the inputs recorded (`include_inputs`).
    ///
    /// # Errors
    ///
    /// The file cannot be opened (naming it), or the writer's thread cannot start.
    pub fn start(
        config: &AuditConfig,
        secrets: &[String],
        readiness: Readiness,
    ) -> Result<Self, String> {
        let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
        if let Some(path) = &config.file {
            sinks.push(Box::new(open(path, config.max_bytes, config.keep)?));
        }
        if config.stdout {
            sinks.push(Box::new(writer::Stdout));
        }
        let redactor = config.include_inputs.then(|| Redactor::new(secrets));
        Self::with_sinks(sinks, redactor, readiness)
    }

    fn with_sinks(
        sinks: Vec<Box<dyn Sink>>,
        redactor: Option<Redactor>,
        readiness: Readiness,
    ) -> Result<Self, String> {
        let (sender, receiver) = mpsc::channel();
        let room = Arc::new(Semaphore::new(MAX_UNWRITTEN));
        let writer = Writer::new(sinks, Arc::clone(&room), readiness);
        std::thread::Builder::new()
            .name("toolkit-audit".to_owned())
            .spawn(move || writer.run(&receiver))
            .map_err(|error| format!("the audit's writer cannot start: {error}"))?;
        Ok(Self {
            inner: Arc::new(Inner {
                sender,
                room,
                redactor,
                open: Mutex::default(),
                next: AtomicU64::new(0),
            }),
        })
    }

    /// Begins the record of a request `context` describes (who asks) of `kind` to `source` for
    /// `name` (a tool, URI or prompt) with `input`, allowed or approved as its context says:
    /// waits for room when [`MAX_UNWRITTEN`] records are not written yet. The record is sent when
    /// it is [ended](Open::end), or `cancelled` when dropped first.
    pub(crate) async fn begin(&self, entry: Entry<'_>) -> Open {
        if let Ok(permit) = self.inner.room.acquire().await {
            permit.forget();
        }
        let bytes = serde_json::to_vec(entry.input).unwrap_or_default();
        let name = Some(entry.name.to_owned());
        let (tool, uri, prompt) = match entry.kind {
            Kind::ToolCall => (name, None, None),
            Kind::ResourceRead => (None, name, None),
            Kind::PromptGet => (None, None, name),
        };
        // A call reaching its source was allowed, or asked about and approved: the core says
        // which in the context it runs with.
        let approved = entry
            .context
            .extension::<toolkit_core::approval::Approved>()
            .copied();
        let decision = match approved {
            Some(_) => AuditDecision::Approve,
            None => AuditDecision::Allow,
        };
        let approval = approved.map(|approved| {
            entry
                .context
                .extension::<ApprovalRecord>()
                .cloned()
                .unwrap_or_else(|| ApprovalRecord::of(approved.edited))
        });
        let record = AuditRecord {
            v: SCHEMA_VERSION,
            time: record::now(),
            principal: entry.context.principal().map(|who| who.id().to_owned()),
            session: entry
                .context
                .session()
                .map(|session| session.id().to_owned()),
            kind: entry.kind,
            source: entry.source.to_owned(),
            tool,
            uri,
            prompt,
            decision,
            approval,
            input_sha256: record::sha256_hex(&bytes),
            input_bytes: bytes.len(),
            input: self
                .inner
                .redactor
                .as_ref()
                .map(|redactor| redactor.value(Value::Object(entry.input.clone()))),
            outcome: String::new(),
            answered_by: None,
            duration_ms: 0.0,
            upstream_status: None,
        };
        let number = self.inner.next.fetch_add(1, Ordering::Relaxed);
        self.open().insert(number, (record, Instant::now()));
        Open {
            audit: self.clone(),
            number,
        }
    }

    /// Records a call of `tool` of `source` with `input` that was asked about and declined (by
    /// `by`, when known): it reached policy, and no source.
    pub(crate) async fn declined(
        &self,
        context: &CallContext,
        (source, tool): (&str, &str),
        input: &JsonObject,
        by: Option<String>,
    ) {
        let open = self
            .begin(Entry {
                context,
                kind: Kind::ToolCall,
                source,
                name: tool,
                input,
            })
            .await;
        if let Some((record, _)) = self.open().get_mut(&open.number) {
            record.decision = AuditDecision::Approve;
            record.approval = Some(ApprovalRecord {
                verdict: "declined".to_owned(),
                by,
            });
        }
        open.end("declined");
    }

    /// The records begun and not sent yet.
    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<u64, (AuditRecord, Instant)>> {
        self.inner
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Ends the open record `number` with `outcome` and sends it, unless it was sent already.
    fn end(&self, number: u64, outcome: &str, answered_by: Option<&'static str>) {
        let taken = self.open().remove(&number);
        if let Some((mut record, start)) = taken {
            record.outcome = outcome.to_owned();
            record.answered_by = answered_by;
            let micros = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
            #[allow(clippy::cast_precision_loss)] // microseconds: exact below 2^53
            let ms = micros as f64 / 1_000.0;
            record.duration_ms = ms;
            self.send(&record);
        }
    }

    /// Sends `record`: its JSON line to the writer, and the `tracing` event.
    fn send(&self, record: &AuditRecord) {
        match serde_json::to_string(record) {
            Ok(line) => {
                tracing::info!(target: TARGET, record = %line, "audit");
                if self.inner.sender.send(Message::Line(line.into())).is_err() {
                    // The writer's thread is gone (it panicked): the record goes to the log.
                    tracing::error!(record = %record_line(record), "the audit's writer is gone");
                }
            }
            Err(error) => tracing::error!(%error, "an audit record cannot be written as JSON"),
        }
    }

    /// Waits, for up to `wait`, until the calls running are recorded (one still running then is
    /// recorded `unfinished`) and every record is written and synced; what cannot be written by
    /// then goes to standard error. How many records could not be written to a sink (0: none).
    pub async fn finish(&self, wait: Duration) -> usize {
        let deadline = Instant::now() + wait;
        while !self.open().is_empty() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let running: Vec<u64> = self.open().keys().copied().collect();
        if !running.is_empty() {
            tracing::warn!(
                running = running.len(),
                "calls still running as the gateway stops are recorded unfinished"
            );
        }
        for number in running {
            self.end(number, "unfinished", None);
        }
        let (answer, answered) = oneshot::channel();
        let finish = Message::Finish {
            deadline: Instant::now().max(deadline),
            answer,
        };
        if self.inner.sender.send(finish).is_err() {
            return 0;
        }
        answered.await.unwrap_or(0)
    }
}

/// `record` as JSON, or nothing.
fn record_line(record: &AuditRecord) -> String {
    serde_json::to_string(record).unwrap_or_default()
}

/// Opens the audit file at `path`.
fn open(path: &Path, max_bytes: u64, keep: usize) -> Result<file::RotatingFile, String> {
    file::RotatingFile::open(path, max_bytes, keep).map_err(|error| {
        format!(
            "audit.file {}: cannot be opened for appending: {error}",
            path.display()
        )
    })
}

/// What a record begins with.
pub(crate) struct Entry<'a> {
    pub(crate) context: &'a CallContext,
    pub(crate) kind: Kind,
    pub(crate) source: &'a str,
    pub(crate) name: &'a str,
    pub(crate) input: &'a JsonObject,
}

/// A record begun: sent when ended, or as `cancelled` when dropped first (or `unfinished` by
/// [`Audit::finish`], if the gateway stops first: whichever comes first sends it, once).
pub(crate) struct Open {
    audit: Audit,
    number: u64,
}

impl Open {
    /// Ends the record with `outcome` (`ok`, or the failure's reason).
    pub(crate) fn end(self, outcome: &str) {
        self.audit.end(self.number, outcome, None);
    }

    /// Ends the record with `outcome`, which the resilience layer `layer` gave in the source's
    /// stead when there is one.
    pub(crate) fn end_answered(self, outcome: &str, layer: Option<&'static str>) {
        self.audit.end(self.number, outcome, layer);
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        // Nothing, when ended already.
        self.audit.end(self.number, "cancelled", None);
    }
}

#[cfg(test)]
mod tests;

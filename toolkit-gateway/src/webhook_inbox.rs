//! Webhooks the gateway receives itself, and serves as events ([`Inbox`]): each webhook of an
//! OpenAPI source's document (`webhooks`, or 3.0's `x-webhooks`) that its `[sources.webhooks]`
//! names a secret for is an event type, `SOURCE__NAME`, delivered by poll and push like an MCP
//! source's. The API POSTs each delivery to `/webhooks/SOURCE/NAME`, signed as Standard
//! Webhooks sign (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,BASE64`, an
//! HMAC-SHA256 of `ID.TIMESTAMP.BODY` under the secret). A delivery is refused, and nothing of
//! it kept, when its signature is missing or wrong, its timestamp more than five minutes from
//! now, its body over 1 MiB or not JSON, or its payload outside its webhook's schema; one whose
//! id was already taken is answered as taken and not kept twice. Each webhook keeps its last
//! `keep` deliveries for a poll to read from its cursor (the delivery's number); an older cursor
//! reads from the oldest kept, with `truncated`.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde_json::{Value, json};
use tokio::sync::broadcast;
use toolkit_runtime::JsonObject;
use toolkit_runtime::input::InputCheck;
use toolkit_runtime::serve::{EventFeed, Refusal};

/// The most bytes a delivery's body may have.
pub(crate) const MAX_BODY_BYTES: usize = 1024 * 1024;

/// How far a delivery's timestamp may be from now.
const TOLERANCE: Duration = Duration::from_secs(300);

/// How many delivery ids are remembered per webhook, to take each once.
const SEEN_IDS: usize = 10_000;

/// What a receipt answers the sender: its status and words.
pub(crate) type Receipt = (u16, String);

/// One webhook's deliveries.
struct Hook {
    /// Its type, as served (`SOURCE__NAME`, poll and push).
    served: Value,
    check: InputCheck,
    state: Mutex<Kept>,
    pushed: broadcast::Sender<(u64, Value)>,
}

/// What one webhook keeps.
#[derive(Default)]
struct Kept {
    /// The deliveries kept, by number.
    events: VecDeque<(u64, Value)>,
    /// The number of the last delivery taken.
    last: u64,
    seen: HashSet<String>,
    seen_order: VecDeque<String>,
}

/// One source's webhooks and the key its deliveries are signed with.
struct Source {
    key: Vec<u8>,
    keep: usize,
    hooks: HashMap<String, Arc<Hook>>,
}

/// Every source's webhooks the gateway receives.
#[derive(Default)]
pub(crate) struct Inbox {
    sources: HashMap<String, Source>,
}

impl std::fmt::Debug for Inbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbox")
            .field("sources", &self.sources.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The key of a Standard Webhooks secret: `whsec_` and base64, or the secret's own bytes.
fn key_of(secret: &str) -> Vec<u8> {
    secret
        .strip_prefix("whsec_")
        .and_then(|encoded| {
            base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok()
        })
        .unwrap_or_else(|| secret.as_bytes().to_vec())
}

/// The signature of `id.timestamp.body` under `key`, as `webhook-signature` writes it.
pub(crate) fn signature(key: &[u8], id: &str, timestamp: &str, body: &[u8]) -> String {
    let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, key);
    let mut context = aws_lc_rs::hmac::Context::with_key(&key);
    context.update(id.as_bytes());
    context.update(b".");
    context.update(timestamp.as_bytes());
    context.update(b".");
    context.update(body);
    let tag = context.sign();
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(tag.as_ref())
    )
}

fn now_seconds() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |now| i64::try_from(now.as_secs()).unwrap_or(i64::MAX))
}

impl Inbox {
    /// The webhooks of every source of `sources` with `webhooks`: its document's, signed with
    /// the secret its variable holds.
    ///
    /// # Errors
    ///
    /// Every problem: a document that cannot be read, an unset variable.
    pub(crate) fn read(sources: &[crate::config::SourceConfig]) -> Result<Self, Vec<String>> {
        let mut inbox = Self::default();
        let mut problems = Vec::new();
        for source in sources {
            let (Some(webhooks), Some(document)) = (&source.webhooks, &source.openapi) else {
                continue;
            };
            let read = std::fs::read_to_string(document)
                .map_err(|error| format!("cannot read {}: {error}", document.display()))
                .and_then(|text| {
                    toolkit_runtime::openapi::decode_document(&text)
                        .map_err(|error| error.to_string())
                })
                .and_then(|document| {
                    toolkit_runtime::openapi::read_webhooks(&document, &Default::default())
                        .map_err(|error| error.to_string())
                });
            let secret = crate::config::read_env(&source.name, &webhooks.secret_env);
            match (read, secret) {
                (Ok(hooks), Ok(secret)) if !hooks.is_empty() => {
                    inbox.add(&source.name, &secret, webhooks.keep, hooks);
                }
                (Ok(_), Ok(_)) => problems.push(format!(
                    "source {:?}: `webhooks`, and its document describes none",
                    source.name
                )),
                (Err(problem), _) => {
                    problems.push(format!("source {:?}: {problem}", source.name));
                }
                (_, Err(error)) => problems.push(error.0),
            }
        }
        if problems.is_empty() {
            Ok(inbox)
        } else {
            Err(problems)
        }
    }

    /// Receives the webhooks `hooks` (name, description, payload schema) of `source`, signed
    /// with `secret`, keeping `keep` deliveries of each.
    pub(crate) fn add(
        &mut self,
        source: &str,
        secret: &str,
        keep: usize,
        hooks: Vec<toolkit_runtime::openapi::Webhook>,
    ) {
        let hooks = hooks
            .into_iter()
            .map(|hook| {
                let served = json!({
                    "name": format!("{source}__{}", hook.name),
                    "description": hook.description,
                    "delivery": ["poll", "push"],
                    "inputSchema": { "type": "object", "additionalProperties": false },
                    "payloadSchema": hook.payload_schema,
                });
                let check = InputCheck::new(&hook.payload_schema);
                let hook_state = Hook {
                    served,
                    check,
                    state: Mutex::new(Kept::default()),
                    pushed: broadcast::channel(64).0,
                };
                (hook.name, Arc::new(hook_state))
            })
            .collect();
        self.sources.insert(
            source.to_owned(),
            Source {
                key: key_of(secret),
                keep,
                hooks,
            },
        );
    }

    /// Whether it receives any webhook.
    pub(crate) fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// Every webhook's event type, as served.
    pub(crate) fn event_types(&self) -> Vec<Value> {
        let mut types: Vec<Value> = self
            .sources
            .values()
            .flat_map(|source| source.hooks.values().map(|hook| hook.served.clone()))
            .collect();
        types.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        types
    }

    /// The webhook served as `served` (`SOURCE__NAME`).
    fn hook(&self, served: &str) -> Option<(&Source, &Arc<Hook>)> {
        let (source, name) = served.split_once("__")?;
        let source = self.sources.get(source)?;
        Some((source, source.hooks.get(name)?))
    }

    /// Whether `served` names one of its webhooks.
    pub(crate) fn serves(&self, served: &str) -> bool {
        self.hook(served).is_some()
    }

    /// Takes a delivery of `source`'s webhook `name`: what to answer its sender.
    pub(crate) fn receive(
        &self,
        source: &str,
        name: &str,
        headers: &axum::http::HeaderMap,
        body: &[u8],
    ) -> Receipt {
        let Some((source_state, hook)) = self
            .sources
            .get(source)
            .and_then(|state| Some((state, state.hooks.get(name)?)))
        else {
            return (404, "No such webhook is received here.".into());
        };
        let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
        let (Some(id), Some(timestamp), Some(signatures)) = (
            header("webhook-id"),
            header("webhook-timestamp"),
            header("webhook-signature"),
        ) else {
            return (
                401,
                "A delivery is signed: webhook-id, webhook-timestamp and webhook-signature.".into(),
            );
        };
        let fresh = timestamp
            .parse::<i64>()
            .is_ok_and(|at| now_seconds().abs_diff(at) <= TOLERANCE.as_secs());
        if !fresh {
            return (
                401,
                "The delivery's timestamp is more than five minutes from now.".into(),
            );
        }
        let expected = signature(&source_state.key, id, timestamp, body);
        let signed = signatures.split_whitespace().any(|given| {
            aws_lc_rs::constant_time::verify_slices_are_equal(given.as_bytes(), expected.as_bytes())
                .is_ok()
        });
        if !signed {
            return (401, "The delivery's signature is not the secret's.".into());
        }
        if body.len() > MAX_BODY_BYTES {
            return (
                413,
                format!("A delivery has at most {MAX_BODY_BYTES} bytes."),
            );
        }
        let Ok(payload) = serde_json::from_slice::<Value>(body) else {
            return (400, "The delivery's body is not JSON.".into());
        };
        if let Err(invalid) = hook.check.check(&payload) {
            return (
                400,
                format!(
                    "The payload does not fit the webhook's schema: {}",
                    invalid.problems().join("; ")
                ),
            );
        }
        let mut kept = hook.state.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.seen.contains(id) {
            return (200, "Taken before.".into());
        }
        kept.seen.insert(id.to_owned());
        kept.seen_order.push_back(id.to_owned());
        if kept.seen_order.len() > SEEN_IDS
            && let Some(oldest) = kept.seen_order.pop_front()
        {
            kept.seen.remove(&oldest);
        }
        kept.last += 1;
        let number = kept.last;
        let timestamp = time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let event = json!({
            "eventId": id,
            "name": hook.served["name"],
            "timestamp": timestamp,
            "data": payload,
            "cursor": number.to_string(),
        });
        kept.events.push_back((number, event.clone()));
        while kept.events.len() > source_state.keep {
            kept.events.pop_front();
        }
        drop(kept);
        let _ = hook.pushed.send((number, event));
        (204, String::new())
    }

    /// `events/poll` of the webhook `served` from `cursor` (a delivery's number; none: from
    /// now).
    pub(crate) fn poll(&self, served: &str, cursor: Option<&str>) -> Result<JsonObject, Refusal> {
        let (_, hook) = self.hook(served).ok_or_else(|| unknown(served))?;
        let from = parse_cursor(cursor)?;
        let kept = hook.state.lock().unwrap_or_else(PoisonError::into_inner);
        let (events, truncated) = match from {
            None => (Vec::new(), false),
            Some(from) => since(&kept, from),
        };
        let result = json!({
            "events": events,
            "cursor": kept.last.to_string(),
            "truncated": truncated,
            "hasMore": false,
            "resultType": "complete",
        });
        match result {
            Value::Object(result) => Ok(result),
            _ => Err(Refusal::Failed("the poll's answer is no object".into())),
        }
    }

    /// `events/stream` of the webhook `served` from `cursor`: the kept deliveries after it, then
    /// each new one as it is taken.
    pub(crate) fn stream(&self, served: &str, cursor: Option<&str>) -> Result<EventFeed, Refusal> {
        let (_, hook) = self.hook(served).ok_or_else(|| unknown(served))?;
        let from = parse_cursor(cursor)?;
        let mut pushed = hook.pushed.subscribe();
        let (replay, truncated, last) = {
            let kept = hook.state.lock().unwrap_or_else(PoisonError::into_inner);
            let (events, truncated) = from.map_or((Vec::new(), false), |from| since(&kept, from));
            (events, truncated, kept.last)
        };
        let (sender, feed) = tokio::sync::mpsc::channel(64);
        tokio::spawn(async move {
            let told = |method: &str, params: Value| match params {
                Value::Object(params) => Some((method.to_owned(), params)),
                _ => None,
            };
            let mut first = vec![told(
                "notifications/events/active",
                json!({ "cursor": from.map_or(last, |from| from.max(last)).to_string(), "truncated": truncated }),
            )];
            first.extend(
                replay
                    .into_iter()
                    .map(|event| told("notifications/events/event", event)),
            );
            let mut sent = last;
            for message in first.into_iter().flatten() {
                if sender.send(message).await.is_err() {
                    return;
                }
            }
            loop {
                tokio::select! {
                    () = sender.closed() => return,
                    next = pushed.recv() => match next {
                        Ok((number, event)) if number > sent => {
                            sent = number;
                            if let Some(message) = told("notifications/events/event", event)
                                && sender.send(message).await.is_err()
                            {
                                return;
                            }
                        }
                        Ok(_) => {}
                        Err(broadcast::error::RecvError::Lagged(_)) => {
                            let gap = told(
                                "notifications/events/active",
                                json!({ "cursor": sent.to_string(), "truncated": true }),
                            );
                            if let Some(message) = gap
                                && sender.send(message).await.is_err()
                            {
                                return;
                            }
                        }
                        Err(broadcast::error::RecvError::Closed) => return,
                    },
                }
            }
        });
        Ok(feed)
    }
}

/// The deliveries kept after `from`, and whether some after it are no longer kept.
fn since(kept: &Kept, from: u64) -> (Vec<Value>, bool) {
    let oldest = kept
        .events
        .front()
        .map_or(kept.last + 1, |(number, _)| *number);
    let truncated = from + 1 < oldest && from < kept.last;
    let events = kept
        .events
        .iter()
        .filter(|(number, _)| *number > from)
        .map(|(_, event)| event.clone())
        .collect();
    (events, truncated)
}

fn parse_cursor(cursor: Option<&str>) -> Result<Option<u64>, Refusal> {
    cursor
        .map(|cursor| {
            cursor.parse::<u64>().map_err(|_| {
                Refusal::InvalidParams(
                    "The cursor is not one of this webhook's: poll from null to start anew.".into(),
                )
            })
        })
        .transpose()
}

fn unknown(served: &str) -> Refusal {
    Refusal::NotFound(format!(
        "No event type {} is served.",
        toolkit_runtime::serve::failure::echo(served)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_standard_webhooks_secret_is_its_base64_key() {
        let key = key_of("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
        assert_eq!(key.len(), 24);
        assert_eq!(key_of("plain"), b"plain");
        // The example of the Standard Webhooks specification.
        let signed = signature(
            &key,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            "1614265330",
            br#"{"test": 2432232314}"#,
        );
        assert_eq!(signed, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }
}

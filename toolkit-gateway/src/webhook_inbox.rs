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

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};
use toolkit_core::JsonObject;
use toolkit_core::input::InputCheck;
use toolkit_serve::{EventFeed, Refusal};

use crate::event_log::EventLog;
use crate::standard_webhooks::{Receipt, key_of, verified};

/// The most bytes a delivery's body may have.
pub(crate) const MAX_BODY_BYTES: usize = 1024 * 1024;

/// One webhook's deliveries.
struct Hook {
    /// Its type, as served (`SOURCE__NAME`, poll and push).
    served: Value,
    check: InputCheck,
    log: EventLog,
}

/// One source's webhooks and the key its deliveries are signed with.
struct Source {
    key: Vec<u8>,
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
                    toolkit_openapi::decode_document(&text).map_err(|error| error.to_string())
                })
                .and_then(|document| {
                    toolkit_openapi::read_webhooks(&document, &Default::default())
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
        hooks: Vec<toolkit_openapi::Webhook>,
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
                    log: EventLog::new(keep, ""),
                };
                (hook.name, Arc::new(hook_state))
            })
            .collect();
        self.sources.insert(
            source.to_owned(),
            Source {
                key: key_of(secret),
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
        let id = match verified(&source_state.key, headers, body) {
            Ok(id) => id,
            Err(receipt) => return receipt,
        };
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
        let timestamp = time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let taken = hook.log.take(id, |cursor| {
            json!({
                "eventId": id,
                "name": hook.served["name"],
                "timestamp": timestamp,
                "data": payload,
                "cursor": cursor,
            })
        });
        if taken {
            (204, String::new())
        } else {
            (200, "Taken before.".into())
        }
    }

    /// `events/poll` of the webhook `served` from `cursor` (a delivery's number; none: from
    /// now).
    pub(crate) fn poll(&self, served: &str, cursor: Option<&str>) -> Result<JsonObject, Refusal> {
        let (_, hook) = self.hook(served).ok_or_else(|| unknown(served))?;
        hook.log.poll(cursor)
    }

    /// `events/stream` of the webhook `served` from `cursor`: the kept deliveries after it, then
    /// each new one as it is taken.
    pub(crate) fn stream(&self, served: &str, cursor: Option<&str>) -> Result<EventFeed, Refusal> {
        let (_, hook) = self.hook(served).ok_or_else(|| unknown(served))?;
        hook.log.stream(cursor)
    }
}

fn unknown(served: &str) -> Refusal {
    Refusal::NotFound(format!(
        "No event type {} is served.",
        toolkit_serve::failure::echo(served)
    ))
}

//! Approval asked of the calling client ([`McpServer::approval_by_client`]): a call of a tool that
//! needs approval runs only once the client that made it says so, asked through MCP elicitation
//! in form mode on the call's own stream.
//!
//! The client is sent `elicitation/create` with a message naming the tool and showing its input
//! (JSON, cut to [`MAX_SHOWN_INPUT`]) and a form of three fields: `decision` (`approve` or
//! `decline`), `reason` (for the model, when declining) and `input` (the input to run with
//! instead, as JSON text). Its answer is the [`Verdict`]:
//!
//! - `accept` with `decision = "approve"`: [`Verdict::Approve`]; with an `input` too,
//!   [`Verdict::Edit`] of that input (checked again against the tool's parameters before it
//!   runs); an `input` that is no JSON object declines the call, saying why;
//! - `accept` with `decision = "decline"`, `decline` and `cancel`: [`Verdict::Decline`], with the
//!   person's reason when there is one.
//!
//! Whenever nobody can be asked, the call is declined, never run, and the model reads why: the
//! client declared no form elicitation, the request is stateless (2026-07-28, which has no
//! stream for the server to ask on), the client refused the question, or the call ended first.
//!
//! [`McpServer::approval_by_client`]: crate::McpServer::approval_by_client

use std::fmt::Write as _;

use rmcp::model::{ClientCapabilities, ProtocolVersion};
use serde_json::{Value, json};

use toolkit_core::context::{ELICITATION_CREATE, Relayed};
use toolkit_core::text::cut_utf16;
use toolkit_core::{ApprovalRequest, BoxFuture, Verdict};

/// The most UTF-16 code units of a call's input (as JSON) shown in the question.
pub(crate) const MAX_SHOWN_INPUT: usize = 4_000;

/// The most UTF-16 code units of a client's error quoted in a refusal.
const MAX_QUOTED_ERROR: usize = 300;

/// What the client of one call can be asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Askable {
    /// A client of a session revision that takes form elicitation; `mode`: its revision writes
    /// `mode: "form"` (2025-11-25 on).
    Form { mode: bool },
    /// A stateless request (2026-07-28 on): the server has no stream to ask on.
    Stateless,
    /// A client that declared no elicitation in form mode.
    NoForm,
}

impl Askable {
    /// What the client of a call made in `version` with `capabilities` can be asked.
    pub(crate) fn of(
        version: Option<&ProtocolVersion>,
        capabilities: Option<&ClientCapabilities>,
    ) -> Self {
        let at_least = |least: &ProtocolVersion| {
            version.is_some_and(|version| version.as_str() >= least.as_str())
        };
        if at_least(&ProtocolVersion::V_2026_07_28) {
            return Self::Stateless;
        }
        // An empty `elicitation` object is form mode (as before modes were named).
        let form = capabilities
            .and_then(|capabilities| capabilities.elicitation.as_ref())
            .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none());
        if form {
            Self::Form {
                mode: at_least(&ProtocolVersion::V_2025_11_25),
            }
        } else {
            Self::NoForm
        }
    }
}

/// The approver of one call that asks its client (see the module's docs).
#[derive(Debug)]
pub(crate) struct ClientApproval {
    pub(crate) askable: Askable,
}

impl toolkit_core::Approver for ClientApproval {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, Verdict> {
        Box::pin(self.asked(request))
    }
}

impl ClientApproval {
    async fn asked(&self, request: ApprovalRequest) -> Verdict {
        let mode = match self.askable {
            Askable::Form { mode } => mode,
            Askable::Stateless => {
                return unasked(
                    "this request is stateless (MCP 2026-07-28), and a stateless request gives \
                     the server no way to ask the client's person",
                );
            }
            Askable::NoForm => {
                return unasked(
                    "the client of this call did not declare elicitation (form mode), through \
                     which this server asks a person",
                );
            }
        };
        let Some(relay) = request.context().relay() else {
            return unasked("this call has no client to ask");
        };
        if !relay.takes(ELICITATION_CREATE) {
            return unasked(
                "the client of this call did not declare elicitation (form mode), through which \
                 this server asks a person",
            );
        }
        let relayed = relay
            .ask(ELICITATION_CREATE, Some(question(&request, mode)))
            .await;
        match relayed {
            Relayed::Answer(answer) => verdict(&answer),
            Relayed::Refused(error) => {
                let said = error
                    .get("message")
                    .and_then(Value::as_str)
                    .map(|message| cut_utf16(message.trim(), MAX_QUOTED_ERROR))
                    .unwrap_or_default();
                tracing::info!(tool = request.tool_name(), error = %said, "the client refused to ask for approval");
                unasked(&format!(
                    "the client of this call refused the question ({})",
                    if said.is_empty() {
                        "no reason given"
                    } else {
                        &said
                    }
                ))
            }
            _ => unasked("the call ended before anyone answered"),
        }
    }
}

/// A decline saying nobody could be asked, and why.
fn unasked(why: &str) -> Verdict {
    Verdict::decline(format!(
        "no person could be asked, so the tool did not run: {why}. Do not try it again through \
         this client."
    ))
}

/// The `elicitation/create` params asking about `request`.
fn question(request: &ApprovalRequest, mode: bool) -> Value {
    let shown = serde_json::to_string_pretty(request.input()).unwrap_or_default();
    let cut = cut_utf16(&shown, MAX_SHOWN_INPUT);
    let mut message = format!("The tool `{}`", request.tool_name());
    if let Some((source, tool)) = request.origin() {
        let _ = write!(message, " (`{tool}` of `{source}`)");
    }
    let _ = write!(message, " asks to run with this input:\n\n{cut}");
    if cut != shown {
        let _ = write!(message, "\n(cut to {MAX_SHOWN_INPUT} characters)");
    }
    message.push_str(
        "\n\nApprove it, decline it (with a reason the model reads), or approve it with an \
         edited input.",
    );
    let mut params = json!({
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {
                "decision": {
                    "type": "string",
                    "title": "Decision",
                    "description": "Whether the call runs.",
                    "enum": ["approve", "decline"],
                },
                "reason": {
                    "type": "string",
                    "title": "Reason",
                    "description": "Why, for the model (when declining).",
                },
                "input": {
                    "type": "string",
                    "title": "Edited input",
                    "description": "The input to run with instead, as a JSON object; empty to \
                                    run the input shown.",
                },
            },
            "required": ["decision"],
        },
    });
    if mode && let Some(params) = params.as_object_mut() {
        params.insert("mode".to_owned(), json!("form"));
    }
    params
}

/// The verdict an `elicitation/create` result says.
fn verdict(answer: &Value) -> Verdict {
    let content = answer.get("content").and_then(Value::as_object);
    let field = |name: &str| {
        content
            .and_then(|content| content.get(name))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|text| !text.is_empty())
    };
    let reason = field("reason").map(str::to_owned);
    match answer.get("action").and_then(Value::as_str) {
        Some("accept") => match field("decision") {
            Some("approve") => match field("input") {
                None => Verdict::Approve,
                Some(text) => edited(text),
            },
            Some("decline") => Verdict::Decline { reason },
            _ => Verdict::decline(
                "the person's answer held no decision (approve or decline), so the tool did not \
                 run",
            ),
        },
        Some("decline") => Verdict::Decline { reason },
        Some("cancel") => Verdict::Decline {
            reason: reason
                .or_else(|| Some("the person dismissed the question without answering".to_owned())),
        },
        _ => Verdict::decline(
            "the client's answer to the question was not one of accept, decline or cancel, so \
             the tool did not run",
        ),
    }
}

/// The verdict of an approval with the edited input `text`.
fn edited(text: &str) -> Verdict {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(input)) => Verdict::Edit(input),
        Ok(_) => Verdict::decline(
            "the person approved the call with an edited input that is not a JSON object, so \
             the tool did not run",
        ),
        Err(error) => Verdict::decline(format!(
            "the person approved the call with an edited input that is not JSON ({error}), so \
             the tool did not run"
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use std::sync::{Arc, Mutex};

    use toolkit_core::context::Relay;
    use toolkit_core::{Approver as _, CallContext, ToolDefinition};

    use super::*;

    /// A client that answers every question with `answer`, and keeps what it was asked.
    #[derive(Debug)]
    struct Client {
        takes: bool,
        answer: Mutex<Option<Relayed>>,
        asked: Mutex<Vec<Value>>,
    }

    impl Relay for Client {
        fn takes(&self, method: &str) -> bool {
            self.takes && method == ELICITATION_CREATE
        }

        fn ask<'a>(&'a self, _method: &'a str, params: Option<Value>) -> BoxFuture<'a, Relayed> {
            self.asked.lock().unwrap().extend(params);
            let answer = self
                .answer
                .lock()
                .unwrap()
                .take()
                .unwrap_or(Relayed::Stopped);
            Box::pin(async move { answer })
        }
    }

    fn client(answer: Relayed) -> Arc<Client> {
        Arc::new(Client {
            takes: true,
            answer: Mutex::new(Some(answer)),
            asked: Mutex::default(),
        })
    }

    fn request(relay: Option<Arc<Client>>) -> ApprovalRequest {
        let schema = json!({"type": "object"}).as_object().cloned().unwrap();
        let definition = ToolDefinition::new("files__write_file", schema).unwrap();
        let input = json!({"path": "/tmp/a", "content": "x"})
            .as_object()
            .cloned()
            .unwrap();
        let mut context = CallContext::new();
        if let Some(relay) = relay {
            let relay: Arc<dyn Relay> = relay;
            context = context.with_extension(relay);
        }
        ApprovalRequest::new(
            definition,
            Some(("files".into(), "write_file".into())),
            input,
            context,
        )
    }

    async fn asked(askable: Askable, relay: Option<Arc<Client>>) -> Verdict {
        ClientApproval { askable }.approve(request(relay)).await
    }

    async fn answered(answer: Value) -> Verdict {
        asked(
            Askable::Form { mode: true },
            Some(client(Relayed::Answer(answer))),
        )
        .await
    }

    fn reason(verdict: &Verdict) -> &str {
        match verdict {
            Verdict::Decline {
                reason: Some(reason),
            } => reason,
            other => panic!("not a decline with a reason: {other:?}"),
        }
    }

    #[tokio::test]
    async fn the_question_names_the_tool_shows_its_input_and_asks_in_form_mode() {
        let approving = client(Relayed::Answer(
            json!({"action": "accept", "content": {"decision": "approve"}}),
        ));
        let verdict = asked_with(Askable::Form { mode: true }, &approving).await;
        assert_eq!(verdict, Verdict::Approve);
        let asked = approving.asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0]["mode"], "form");
        let message = asked[0]["message"].as_str().unwrap();
        assert!(message.contains("`files__write_file`"), "{message}");
        assert!(message.contains("\"path\": \"/tmp/a\""), "{message}");
        assert_eq!(
            asked[0]["requestedSchema"]["properties"]["decision"]["enum"],
            json!(["approve", "decline"])
        );
        // A revision before 2025-11-25 writes no mode.
        let cancelling = client(Relayed::Answer(json!({"action": "cancel"})));
        let _ = asked_with(Askable::Form { mode: false }, &cancelling).await;
        assert!(cancelling.asked.lock().unwrap()[0].get("mode").is_none());
    }

    async fn asked_with(askable: Askable, client: &Arc<Client>) -> Verdict {
        asked(askable, Some(Arc::clone(client))).await
    }

    #[tokio::test]
    async fn each_answer_is_its_verdict() {
        let edit = answered(json!({"action": "accept", "content": {
            "decision": "approve", "input": "{\"path\": \"/tmp/b\"}"}}))
        .await;
        assert_eq!(
            edit,
            Verdict::Edit(json!({"path": "/tmp/b"}).as_object().cloned().unwrap())
        );
        let blank = answered(json!({"action": "accept", "content": {
            "decision": "approve", "input": "  "}}))
        .await;
        assert_eq!(blank, Verdict::Approve);
        let declined = answered(json!({"action": "accept", "content": {
            "decision": "decline", "reason": "not that file"}}))
        .await;
        assert_eq!(declined, Verdict::decline("not that file"));
        assert_eq!(
            answered(json!({"action": "decline"})).await,
            Verdict::Decline { reason: None }
        );
        assert!(reason(&answered(json!({"action": "cancel"})).await).contains("dismissed"));
        assert!(
            reason(&answered(json!({"action": "accept", "content": {}})).await)
                .contains("no decision")
        );
        assert!(reason(&answered(json!({"what": 1})).await).contains("not one of"));
    }

    #[tokio::test]
    async fn an_edited_input_that_is_no_json_object_declines() {
        let broken = answered(json!({"action": "accept", "content": {
            "decision": "approve", "input": "{\"path\": "}}))
        .await;
        assert!(reason(&broken).contains("not JSON"), "{broken:?}");
        let array = answered(json!({"action": "accept", "content": {
            "decision": "approve", "input": "[1]"}}))
        .await;
        assert!(reason(&array).contains("not a JSON object"), "{array:?}");
    }

    #[tokio::test]
    async fn nobody_to_ask_declines_saying_so() {
        let stateless = asked(Askable::Stateless, Some(client(Relayed::Stopped))).await;
        assert!(reason(&stateless).contains("stateless"), "{stateless:?}");
        let no_form = asked(Askable::NoForm, Some(client(Relayed::Stopped))).await;
        assert!(reason(&no_form).contains("no person could be asked"));
        let no_relay = asked(Askable::Form { mode: true }, None).await;
        assert!(reason(&no_relay).contains("no client"));
        let not_taken = Arc::new(Client {
            takes: false,
            answer: Mutex::default(),
            asked: Mutex::default(),
        });
        let verdict = asked_with(Askable::Form { mode: true }, &not_taken).await;
        assert!(reason(&verdict).contains("did not declare"));
        assert!(not_taken.asked.lock().unwrap().is_empty());
        let refused = answered_by(Relayed::Refused(json!({"code": -1, "message": "no UI"}))).await;
        assert!(reason(&refused).contains("refused the question (no UI)"));
        let stopped = answered_by(Relayed::Stopped).await;
        assert!(reason(&stopped).contains("ended"));
    }

    async fn answered_by(relayed: Relayed) -> Verdict {
        asked(Askable::Form { mode: true }, Some(client(relayed))).await
    }

    #[test]
    fn what_a_client_can_be_asked_follows_its_revision_and_capabilities() {
        let capabilities =
            |value: Value| serde_json::from_value::<ClientCapabilities>(value).unwrap();
        let form = capabilities(json!({"elicitation": {}}));
        let url_only = capabilities(json!({"elicitation": {"url": {}}}));
        let none = capabilities(json!({}));
        let v = |name: &str| {
            ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .find(|version| version.as_str() == name)
                .cloned()
                .unwrap()
        };
        assert_eq!(
            Askable::of(Some(&v("2025-11-25")), Some(&form)),
            Askable::Form { mode: true }
        );
        assert_eq!(
            Askable::of(Some(&v("2025-06-18")), Some(&form)),
            Askable::Form { mode: false }
        );
        assert_eq!(
            Askable::of(Some(&v("2025-11-25")), Some(&url_only)),
            Askable::NoForm
        );
        assert_eq!(
            Askable::of(Some(&v("2025-11-25")), Some(&none)),
            Askable::NoForm
        );
        assert_eq!(Askable::of(Some(&v("2025-11-25")), None), Askable::NoForm);
        assert_eq!(
            Askable::of(Some(&v("2026-07-28")), Some(&form)),
            Askable::Stateless
        );
    }
}

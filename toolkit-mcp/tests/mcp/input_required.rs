//! Input-required results (the stateless revision's multi-round-trip requests) against a server
//! of the Python SDK (`mcp==2.3.0`, `python_asking_peer.py`): what it asks reaches the host's
//! elicitation callback (declined at once without one), the answers go back with the echoed
//! `requestState` and the call completes; a server that asks forever is stopped after
//! `input_required_rounds` (8) rounds.

use std::sync::{Arc, Mutex};

use serde_json::json;
use toolkit_core::{CallContext, Reason, ToolSource};
use toolkit_mcp::{Elicitation, ElicitationAnswer, ElicitationRequest, Mcp, McpOptions};

use super::processes::asking_peer;
use super::quick;
use crate::support::object;

/// A host that accepts each form with its defaults, and keeps what it was asked.
fn accepting(asked: &Arc<Mutex<Vec<String>>>) -> McpOptions {
    let asked = Arc::clone(asked);
    quick().elicitation(Elicitation::new(move |request: ElicitationRequest| {
        asked.lock().unwrap().push(request.message().to_owned());
        async move { ElicitationAnswer::Accept(request.defaults()) }
    }))
}

#[tokio::test]
async fn mcp_input_required_goes_to_the_hosts_elicitation_and_the_call_completes() {
    let server = asking_peer().await;
    let asked = Arc::new(Mutex::new(Vec::new()));
    let source = Mcp::http_with_options(
        "asking",
        server.url("/mcp"),
        reqwest::Client::new(),
        accepting(&asked),
    );
    let snapshot = source.snapshot().await.unwrap();
    assert_eq!(snapshot["protocolVersion"], "2026-07-28");
    let answer = source
        .call("greet", object(json!({})), &CallContext::new())
        .await
        .unwrap();
    // The server's sealed requestState came back as written (it refuses one that did not).
    assert_eq!(answer, json!({"result": r#"accepted {"name": "Ada"}"#}));
    assert_eq!(*asked.lock().unwrap(), ["What is your name?"]);
    // Only a state to send back (load shedding): sent again, nobody asked.
    let answer = source
        .call("busy", object(json!({})), &CallContext::new())
        .await
        .unwrap();
    assert_eq!(answer, json!({"result": "done after a retry"}));
    assert_eq!(asked.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn mcp_input_required_without_a_callback_is_declined_at_once() {
    let server = asking_peer().await;
    let source = Mcp::http_with_options(
        "asking",
        server.url("/mcp"),
        reqwest::Client::new(),
        quick(),
    );
    let answer = source
        .call("greet", object(json!({})), &CallContext::new())
        .await
        .unwrap();
    assert_eq!(answer, json!({"result": "not greeted: decline"}));
    // Sampling is nobody's to answer here: the call fails, saying so.
    let failed = source
        .call("summarize", object(json!({})), &CallContext::new())
        .await
        .unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Unsupported { .. }),
        "{failed}"
    );
    assert!(
        failed.to_string().contains("sampling/createMessage"),
        "{failed}"
    );
}

#[tokio::test]
async fn mcp_input_required_in_a_loop_is_stopped_after_its_rounds() {
    let server = asking_peer().await;
    let asked = Arc::new(Mutex::new(Vec::new()));
    let source = Mcp::http_with_options(
        "asking",
        server.url("/mcp"),
        reqwest::Client::new(),
        accepting(&asked),
    );
    let failed = source
        .call("nag", object(json!({})), &CallContext::new())
        .await
        .unwrap_err();
    assert!(
        matches!(failed.reason, Reason::InvalidResponse { .. }),
        "{failed}"
    );
    assert!(failed.to_string().contains("after 8 rounds"), "{failed}");
    assert_eq!(asked.lock().unwrap().len(), 8, "each round was answered");
}

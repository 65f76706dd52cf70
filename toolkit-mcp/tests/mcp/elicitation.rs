//! A server's elicitations reach the host's callback, on the call's own stream and on the
//! session's standalone stream; a host that gives none declines at once. Against an upstream of
//! the TypeScript SDK (toolkit-serve's `tests/serve/content_peer.cjs`, sessions, SSE answers).

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolkit_core::ToolSource;
use toolkit_mcp::{Elicitation, ElicitationAnswer, ElicitationRequest, Mcp};

use super::quick;
use crate::serving::upstream;
use crate::support::object;

/// The text of a call's only block.
fn text(answer: &Value) -> String {
    answer[0]["text"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn elicitations_reach_the_hosts_callback_on_either_stream() {
    let upstream = upstream().await;
    let asked = Arc::new(Mutex::new(Vec::new()));
    let options = quick().elicitation(Elicitation::new({
        let asked = asked.clone();
        move |request: ElicitationRequest| {
            asked.lock().unwrap().push(request.message().to_owned());
            async move { ElicitationAnswer::Accept(request.defaults()) }
        }
    }));
    let source =
        Mcp::http_with_options("up", upstream.url("/mcp"), reqwest::Client::new(), options);
    // Asked on the session's standalone stream, unrelated to the call.
    let answer = source
        .call(
            "test_client_elicitation_defaults",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    let said = text(&answer);
    assert!(said.contains("action=accept"), "{said}");
    assert!(said.contains(r#""name":"John Doe""#), "{said}");
    assert!(said.contains(r#""verified":true"#), "{said}");
    // Asked on the call's own stream.
    let answer = source
        .call(
            "test_elicitation_sep1034_defaults",
            object(json!({})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap();
    let said = text(&answer);
    assert!(said.contains(r#""age":30"#), "{said}");
    assert_eq!(
        *asked.lock().unwrap(),
        [
            "Test client default value handling - please accept with defaults",
            "Please review and update the form fields with defaults",
        ]
    );
    source.close().await;
}

#[tokio::test]
async fn a_host_without_a_callback_declines_at_once() {
    let upstream = upstream().await;
    // Were the elicitation left unanswered, the call would fail past the timeout.
    let source =
        Mcp::http_with_options("up", upstream.url("/mcp"), reqwest::Client::new(), quick());
    for tool in ["test_elicitation", "test_client_elicitation_defaults"] {
        let answer = source
            .call(
                tool,
                object(json!({"message": "Please provide your information"})),
                &toolkit_core::CallContext::new(),
            )
            .await
            .unwrap();
        let said = text(&answer);
        assert!(said.contains("action=decline"), "{tool}: {said}");
    }
    // Sampling is no capability of the source: refused, which the tool reports as its failure.
    let refused = source
        .call(
            "test_sampling",
            object(json!({"prompt": "hi"})),
            &toolkit_core::CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(
        format!("{:?}", refused.reason).contains("Method not found"),
        "{refused:?}"
    );
    source.close().await;
}

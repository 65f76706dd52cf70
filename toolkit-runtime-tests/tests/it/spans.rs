//! The spans a call leaves (`telemetry`): captured with a subscriber, checked by name and field.

use std::sync::Arc;

use serde_json::json;
use toolkit_runtime::{
    Assembly, CallContext, Decision, Member, ToolDefinition, approval::ApprovalRequest,
    approval::Verdict,
};

use crate::span_capture::{Spans, assert_nothing_secret, capturing};
use crate::support::{Scripted, definition};

fn policy(_: &str, definition: &ToolDefinition) -> Decision {
    if definition.name() == "echo" {
        Decision::Allow
    } else {
        Decision::Approve
    }
}

fn assembled(source: &Arc<Scripted>) -> toolkit_runtime::Toolkit {
    let definitions = vec![
        definition("echo", json!({ "type": "object" })),
        definition("down", json!({ "type": "object" })),
        definition("fail", json!({ "type": "object" })),
    ];
    Assembly::new()
        .toolkit(&[Member::new(Arc::clone(source) as _, definitions)], policy)
        .unwrap()
}

#[test]
fn a_call_is_an_execute_tool_span_with_gen_ai_fields() {
    let spans = Spans::default();
    capturing(&spans, async {
        let source = Scripted::new("s");
        let toolkit = assembled(&source);
        let context = CallContext::new().call_id("call_7");
        let answered = toolkit
            .call_with("s__echo", json!({ "a": 1 }), &context)
            .await;
        assert!(answered.is_ok());
    });
    let calls = spans.named("execute_tool");
    assert_eq!(calls.len(), 1, "{calls:?}");
    let call = &calls[0];
    assert_eq!(call.field("otel.name"), Some("execute_tool s__echo"));
    assert_eq!(call.field("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(call.field("gen_ai.tool.name"), Some("s__echo"));
    assert_eq!(call.field("gen_ai.tool.call.id"), Some("call_7"));
    assert_eq!(call.field("gen_ai.tool.type"), Some("function"));
    assert_eq!(call.field("toolkit.source"), Some("s"));
    assert_eq!(call.field("toolkit.source.tool"), Some("echo"));
    assert_eq!(call.field("toolkit.outcome"), Some("ok"));
    assert_eq!(call.field("error.type"), None);
    let duration: f64 = call.field("toolkit.duration_ms").unwrap().parse().unwrap();
    assert!(duration >= 0.0);
}

#[test]
fn a_failure_records_its_code_and_retryable_and_no_internal() {
    let spans = Spans::default();
    capturing(&spans, async {
        let source = Scripted::new("s");
        let toolkit = assembled(&source);
        let approve = CallContext::new().approver(|_: ApprovalRequest| async { Verdict::Approve });
        // Unavailable: the source's description names an address, which no field carries.
        assert!(
            toolkit
                .call_with("s__down", json!({}), &approve)
                .await
                .is_err()
        );
        // Declined by the person.
        let decline = CallContext::new()
            .approver(|_: ApprovalRequest| async { Verdict::decline("not today") });
        assert!(
            toolkit
                .call_with("s__fail", json!({}), &decline)
                .await
                .is_err()
        );
        // Refused input: no approval asked, no source reached.
        assert!(toolkit.call("s__echo", json!([1])).await.is_err());
    });
    let calls = spans.named("execute_tool");
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert_eq!(calls[0].field("toolkit.outcome"), Some("failure"));
    assert_eq!(calls[0].field("error.type"), Some("UnavailableError"));
    assert_eq!(calls[0].field("toolkit.retryable"), Some("true"));
    assert_eq!(calls[0].field("toolkit.approval"), Some("approved"));
    assert_eq!(calls[1].field("toolkit.approval"), Some("declined"));
    assert_eq!(calls[1].field("error.type"), Some("ApprovalDeclined"));
    assert_eq!(calls[1].field("toolkit.retryable"), Some("false"));
    assert_eq!(calls[2].field("error.type"), Some("InvalidInputError"));
    assert_eq!(calls[2].field("toolkit.approval"), None);
    assert_nothing_secret(&spans, &[]);
}

#[test]
fn a_search_s_tool_call_holds_the_span_of_the_tool_it_reaches() {
    let spans = Spans::default();
    capturing(&spans, async {
        let source = Scripted::new("s");
        let toolkit = assembled(&source);
        let search = toolkit_runtime::search::ToolSearch::toolkit(
            &toolkit,
            &toolkit_runtime::search::SearchOptions::default(),
        );
        let called = search
            .call_with(
                "tool_call",
                json!({ "name": "s__echo", "input": {} }),
                &CallContext::new(),
            )
            .await;
        assert!(called.is_ok());
    });
    let calls = spans.named("execute_tool");
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0].field("gen_ai.tool.name"), Some("tool_call"));
    assert_eq!(calls[0].field("toolkit.source"), None);
    assert_eq!(calls[1].field("gen_ai.tool.name"), Some("s__echo"));
    assert_eq!(calls[1].parent.as_deref(), Some("execute_tool"));
}

#[test]
fn with_no_subscriber_a_call_still_answers() {
    // No subscriber here: the spans are disabled, and the call is what it was.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let source = Scripted::new("s");
    let toolkit = assembled(&source);
    let answered = runtime.block_on(toolkit.call("s__echo", json!({ "x": 1 })));
    assert_eq!(answered, Ok(json!({ "x": 1 })));
}

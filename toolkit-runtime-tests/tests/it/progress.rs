//! Progress told to the host while a call runs: a code-mode run's tool calls (and their spans).

use std::sync::{Arc, Mutex};

use serde_json::json;
use toolkit_runtime::{
    CallContext, Toolkit, ToolkitOptions, code::CodeMode, code::CodeModeOptions, code::QuickJs,
    progress::Progress,
};

use crate::span_capture::{Spans, assert_nothing_secret, capturing};
use crate::support::{Scripted, definition};

fn presented(source: &Arc<Scripted>) -> Toolkit {
    Toolkit::from_source(
        Arc::clone(source) as _,
        vec![
            definition("echo", json!({ "type": "object" })),
            definition("fail", json!({ "type": "object" })),
        ],
        &ToolkitOptions::default(),
    )
    .unwrap()
}

const CODE: &str = "const a = await tools.echo({ n: 1 }); \
                    try { await tools.fail({}); } catch (e) { console.log(e.code); } \
                    return a;";

#[tokio::test]
async fn a_code_mode_run_tells_each_tool_call_it_makes() {
    let source = Scripted::new("s");
    let toolkit = CodeMode::toolkit(
        &presented(&source),
        Arc::new(QuickJs::default()),
        &CodeModeOptions::default(),
    );
    let told: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = Arc::clone(&told);
    let context = CallContext::new().progress(move |progress| sink.lock().unwrap().push(progress));
    let run = toolkit
        .call_with("execute", json!({ "code": CODE }), &context)
        .await;
    assert_eq!(
        run,
        Ok(json!({ "result": { "n": 1 }, "logs": ["CallFailedError"] }))
    );
    let told = told.lock().unwrap().clone();
    let summary: Vec<(String, String, Option<String>)> = told
        .iter()
        .map(|progress| match progress {
            Progress::CallStarted { tool, called } => (tool.clone(), called.clone(), None),
            Progress::CallEnded {
                tool,
                called,
                failure,
                ..
            } => (
                tool.clone(),
                called.clone(),
                Some(failure.clone().unwrap_or_else(|| "ok".to_owned())),
            ),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("execute".to_owned(), "echo".to_owned(), None),
            (
                "execute".to_owned(),
                "echo".to_owned(),
                Some("ok".to_owned())
            ),
            ("execute".to_owned(), "fail".to_owned(), None),
            (
                "execute".to_owned(),
                "fail".to_owned(),
                Some("CallFailedError".to_owned())
            ),
        ]
    );
    // With no callback, the same run tells nothing and answers the same.
    let plain = toolkit.call("execute", json!({ "code": CODE })).await;
    assert_eq!(plain, run);
}

#[test]
fn a_code_mode_run_is_a_span_holding_its_tool_calls() {
    let spans = Spans::default();
    capturing(&spans, async {
        let source = Scripted::new("s");
        let toolkit = CodeMode::toolkit(
            &presented(&source),
            Arc::new(QuickJs::default()),
            &CodeModeOptions::default(),
        );
        let run = toolkit.call("execute", json!({ "code": CODE })).await;
        assert!(run.is_ok(), "{run:?}");
    });
    let runs = spans.named("code_mode.run");
    assert_eq!(runs.len(), 1, "{:?}", spans.all());
    assert_eq!(runs[0].parent.as_deref(), Some("execute_tool"));
    assert_eq!(runs[0].field("toolkit.tool_calls"), Some("2"));
    assert_eq!(runs[0].field("toolkit.outcome"), Some("ok"));
    let calls = spans.named("execute_tool");
    let names: Vec<_> = calls
        .iter()
        .map(|call| (call.field("gen_ai.tool.name"), call.parent.as_deref()))
        .collect();
    assert_eq!(
        names,
        [
            (Some("execute"), None),
            (Some("echo"), Some("code_mode.run")),
            (Some("fail"), Some("code_mode.run")),
        ]
    );
    assert_eq!(calls[2].field("error.type"), Some("CallFailedError"));
    assert_nothing_secret(&spans, &[]);
}

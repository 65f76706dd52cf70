//! Code mode through a pool of worker processes (`toolkit-code-worker`, this crate's test
//! worker): the runtime's glue over toolkit-code's pool, whose own tests are toolkit-code's.

use std::sync::Arc;

use serde_json::json;
use toolkit_runtime::{
    FnSource, FnTool, Toolkit, ToolkitOptions, code::CodeMode, code::CodeModeOptions,
    code::PoolOptions, code::WorkerIsolate, code::WorkerPool,
};

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Text {
    text: String,
}

/// `echo`, which says its text back.
fn echo_toolkit() -> Toolkit {
    let source = FnSource::builder("local")
        .tool(FnTool::new("echo", |input: Text| async move {
            Ok(json!({ "said": input.text }))
        }))
        .build()
        .unwrap();
    let definitions = source.definitions();
    Toolkit::from_source(Arc::new(source), definitions, &ToolkitOptions::default()).unwrap()
}

#[tokio::test]
async fn code_mode_runs_through_the_pool() {
    let pool = WorkerPool::new(
        WorkerIsolate::new(env!("CARGO_BIN_EXE_toolkit-code-worker")),
        PoolOptions::default().size(2).idle(1),
    );
    let presented = echo_toolkit();
    let toolkit = CodeMode::toolkit(&presented, Arc::new(pool), &CodeModeOptions::default());
    for n in 0..5 {
        let code = format!("return (await tools.echo({{ text: '{n}' }})).said;");
        let run = toolkit
            .call("execute", json!({ "code": code }))
            .await
            .unwrap();
        assert_eq!(run["result"], json!(n.to_string()));
    }
}

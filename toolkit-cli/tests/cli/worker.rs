//! The hardened isolate: code mode's runs in `toolkit-gen quickjs-worker` processes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolkit_runtime::{
    FnSource, FnTool, Reason, Toolkit, ToolkitOptions, code::CodeMode, code::CodeModeOptions,
    code::WorkerIsolate,
};

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Text {
    text: String,
}

fn code_mode(timeout: Duration, isolate: WorkerIsolate) -> Toolkit {
    let source = FnSource::builder("local")
        .tool(FnTool::new("echo", |input: Text| async move {
            Ok(json!({ "said": input.text }))
        }))
        .tool(FnTool::new("fail", |_: Text| async {
            Err::<(), _>(Reason::call_failed("no"))
        }))
        .build()
        .unwrap();
    let definitions = source.definitions();
    let presented =
        Toolkit::from_source(Arc::new(source), definitions, &ToolkitOptions::default()).unwrap();
    let options = CodeModeOptions::default().timeout(timeout);
    CodeMode::toolkit(&presented, Arc::new(isolate), &options)
}

fn worker() -> WorkerIsolate {
    WorkerIsolate::new(env!("CARGO_BIN_EXE_toolkit-gen")).arg("quickjs-worker")
}

#[tokio::test]
async fn a_worker_runs_code_that_calls_the_host_s_tools() {
    let toolkit = code_mode(Duration::from_secs(10), worker());
    let code = "const a = await tools.echo({text: 'hi'}); let caught; try { await tools.fail({text: ''}); } \
                catch (e) { caught = e.code; } console.log('done'); return [a, caught];";
    let run = toolkit
        .call("execute", json!({ "code": code }))
        .await
        .unwrap();
    assert_eq!(
        run,
        json!({ "result": [{ "said": "hi" }, "CallFailedError"], "logs": ["done"] })
    );
}

#[tokio::test]
async fn a_worker_spinning_in_heavy_builtins_is_killed_at_the_deadline() {
    let toolkit = code_mode(Duration::from_millis(400), worker());
    let started = Instant::now();
    let code = "const big = new Array(2e5).fill('xxxxxxxx'); while (true) { JSON.stringify(big); big.slice().sort(); }";
    let failure = toolkit
        .call("execute", json!({ "code": code }))
        .await
        .unwrap_err();
    assert_eq!(failure.code, "Timeout");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn a_worker_that_dies_is_a_code_error_and_the_host_goes_on() {
    // `true` exits at once, before it reads the run, as a worker that crashed does.
    let toolkit = code_mode(Duration::from_secs(5), WorkerIsolate::new("true"));
    let failure = toolkit
        .call("execute", json!({ "code": "return 1;" }))
        .await
        .unwrap_err();
    assert_eq!(failure.code, "CodeError");
    assert!(
        failure.message.contains("ended before it read the run"),
        "{}",
        failure.message
    );
    let missing = code_mode(
        Duration::from_secs(5),
        WorkerIsolate::new("/nonexistent/worker"),
    );
    let failure = missing
        .call("execute", json!({ "code": "return 1;" }))
        .await
        .unwrap_err();
    assert!(
        failure.message.contains("could not start"),
        "{}",
        failure.message
    );
    let healthy = code_mode(Duration::from_secs(10), worker());
    let run = healthy
        .call("execute", json!({ "code": "return 1;" }))
        .await
        .unwrap();
    assert_eq!(run["result"], 1);
}

#[tokio::test]
async fn a_worker_s_code_errors_and_oversized_results_come_back_as_such() {
    let toolkit = code_mode(Duration::from_secs(10), worker());
    let thrown = toolkit
        .call("execute", json!({ "code": "throw new TypeError('bad');" }))
        .await
        .unwrap_err();
    assert_eq!(thrown.code, "CodeError");
    assert!(thrown.message.contains("TypeError: bad"));
    let large = toolkit
        .call("execute", json!({ "code": "return 'x'.repeat(60000);" }))
        .await
        .unwrap_err();
    assert_eq!(large.code, "ResultTooLarge");
}

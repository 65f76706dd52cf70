//! A served toolkit whose host asks its own person: the same approver as the model adapters.

use std::sync::{Arc, Mutex};

use serde_json::json;
use toolkit_core::{approval::ApprovalRequest, approval::Verdict};
use toolkit_serve::McpServer;
use toolkit_serve::testing::InProcessClient;

use super::demo;

#[tokio::test]
async fn serve_a_host_approver_is_asked_and_its_reason_served() {
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = Arc::clone(&asked);
    let server = McpServer::new(demo::toolkit()).approver(move |request: ApprovalRequest| {
        record.lock().unwrap().push(request.tool_name().to_owned());
        async { Verdict::decline("The files stay.") }
    });
    let mut client = InProcessClient::start(server);
    client.initialize().await.unwrap();
    // `wipe` needs approval: the host's person declines, and the client reads why.
    let called = client.call("wipe", json!({})).await.unwrap();
    assert_eq!(called["isError"], true);
    assert_eq!(
        called["content"][0]["text"],
        "A person declined this call: The files stay."
    );
    // `echo` needs none: no one is asked.
    let echoed = client.call("echo", json!({ "text": "hi" })).await.unwrap();
    assert_eq!(echoed["isError"], false);
    assert_eq!(*asked.lock().unwrap(), ["wipe"]);
    client.close().await.unwrap();
}

/// A client that gives a progress token is told of each tool a code-mode run calls.
#[tokio::test]
async fn serve_progress_reaches_a_client_that_asked_for_it() {
    use toolkit_runtime::code::{CodeMode, CodeModeOptions, QuickJs};
    let code_mode = CodeMode::toolkit(
        &demo::toolkit(),
        Arc::new(QuickJs::default()),
        &CodeModeOptions::default(),
    );
    let mut client = InProcessClient::start(McpServer::new(code_mode));
    client.initialize().await.unwrap();
    let _ = client.take_seen();
    let answered = client
        .request(
            "tools/call",
            json!({
                "name": "execute",
                "arguments": { "code": "return (await tools.echo({ text: 'hi' }));" },
                "_meta": { "progressToken": "p-1" }
            }),
        )
        .await
        .unwrap();
    assert_eq!(answered["result"]["isError"], false, "{answered}");
    let progress: Vec<(serde_json::Value, serde_json::Value)> = client
        .take_seen()
        .into_iter()
        .filter(|message| message["method"] == "notifications/progress")
        .map(|message| {
            assert_eq!(message["params"]["progressToken"], "p-1");
            (
                message["params"]["progress"].clone(),
                message["params"]["message"].clone(),
            )
        })
        .collect();
    assert_eq!(
        progress,
        [
            (json!(1), json!("calls echo")),
            (json!(2), json!("echo answered")),
        ]
    );
    // Without a token, nothing is told.
    let _ = client
        .call("execute", json!({ "code": "return 1;" }))
        .await
        .unwrap();
    assert!(
        client
            .take_seen()
            .iter()
            .all(|message| message["method"] != "notifications/progress")
    );
    client.close().await.unwrap();
}

//! A served toolkit whose host asks its own person: the same approver as the model adapters.

use std::sync::{Arc, Mutex};

use serde_json::json;
use toolkit_runtime::serve::McpServer;
use toolkit_runtime::serve::testing::InProcessClient;
use toolkit_runtime::{ApprovalRequest, Verdict};

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

//! What an upstream asks while a served call runs it (`sampling/createMessage`,
//! `elicitation/create` on the call's stream) reaches the client of that call and its answer
//! goes back (also what it asks on its session's standalone stream, to the client of the one call
//! in flight): an upstream of the TypeScript SDK (`content_peer.cjs`) behind an MCP source with
//! `relay`, served by `McpServer`, called by rmcp's client. A client without the capability is
//! not asked (elicitation declined, sampling refused), and a question still open when the call is
//! cancelled is cancelled at the client.

#![allow(deprecated)] // sampling: deprecated by SEP-2577, still spoken by the session revisions

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CancelledNotificationParam, ClientCapabilities, ClientConfig,
    ClientRequest, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, SamplingMessage,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt as _};
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};
use toolkit_core::{ToolSource, Toolkit, ToolkitOptions};
use toolkit_mcp::{Mcp, McpOptions};
use toolkit_serve::McpServer;

use super::serving::{Serving, upstream};
use crate::processes::{Listening, asking_peer};

/// A client that declares sampling and elicitation: it answers sampling with a text of its own,
/// accepts a form with what it was asked for, and tells what it saw.
#[derive(Clone)]
struct Asked {
    seen: mpsc::UnboundedSender<Value>,
    /// Never answers an elicitation (to be cancelled), when set.
    hold: bool,
    cancelled: Arc<(Mutex<Vec<CancelledNotificationParam>>, Notify)>,
}

impl ClientHandler for Asked {
    fn get_info(&self) -> ClientConfig {
        let capabilities = ClientCapabilities::builder()
            .enable_sampling()
            .enable_elicitation()
            .build();
        ClientConfig::new(capabilities, Implementation::new("asked", "1.0.0"))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let _ = self.seen.send(serde_json::to_value(&params).unwrap());
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text("from the client"),
            "m".into(),
        )
        .with_stop_reason("endTurn"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let _ = self.seen.send(serde_json::to_value(&request).unwrap());
        if self.hold {
            std::future::pending::<()>().await;
        }
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"response": "yes"})))
    }

    async fn on_cancelled(
        &self,
        params: CancelledNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.cancelled.0.lock().unwrap().push(params);
        self.cancelled.1.notify_waiters();
    }
}

/// The upstream as a source that relays, its tools under their own names, served.
async fn served(upstream: &Listening) -> Serving {
    let options = McpOptions::default()
        .timeout(Duration::from_secs(20))
        .relay(true);
    let source = Arc::new(Mcp::http_with_options(
        "up",
        upstream.url("/mcp"),
        reqwest::Client::new(),
        options,
    ));
    let definitions = source.discover().await.unwrap();
    let toolkit =
        Toolkit::from_source(source, definitions, &ToolkitOptions::default()).expect("names");
    Serving::start(McpServer::new(toolkit).name("gateway")).await
}

async fn call<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    name: &'static str,
    arguments: Value,
) -> Value {
    let params = CallToolRequestParams::new(name)
        .with_arguments(arguments.as_object().cloned().unwrap_or_default());
    serde_json::to_value(client.call_tool(params).await.unwrap()).unwrap()
}

fn asked(hold: bool) -> (Asked, mpsc::UnboundedReceiver<Value>) {
    let (seen, receiver) = mpsc::unbounded_channel();
    let asked = Asked {
        seen,
        hold,
        cancelled: Arc::default(),
    };
    (asked, receiver)
}

#[tokio::test]
async fn serve_relay_sampling_and_elicitation_to_the_calls_client() {
    let upstream = upstream().await;
    let serving = served(&upstream).await;
    let (handler, mut seen) = asked(false);
    let client = handler
        .serve(StreamableHttpClientTransport::from_uri(
            serving.url.to_string(),
        ))
        .await
        .unwrap();

    // Sampling: the upstream's messages reach the client; its answer reaches the upstream.
    let sampled = call(&client, "test_sampling", json!({"prompt": "Say hi"})).await;
    assert_eq!(
        sampled["content"][0]["text"], "LLM response: from the client",
        "{sampled}"
    );
    let request = seen.try_recv().unwrap();
    assert_eq!(request["messages"][0]["content"]["text"], "Say hi");
    assert_eq!(request["maxTokens"], 100);

    // The context of other sources and sessions is not asked for, whatever the upstream asks.
    for asked in ["allServers", "thisServer"] {
        let sampled = call(
            &client,
            "test_sampling",
            json!({"prompt": "Say hi", "includeContext": asked}),
        )
        .await;
        assert_eq!(
            sampled["content"][0]["text"], "LLM response: from the client",
            "{sampled}"
        );
        let request = seen.try_recv().unwrap();
        assert_eq!(request["includeContext"], "none", "{asked}: {request}");
    }

    // Elicitation: the form as the upstream wrote it, the client's content back.
    let elicited = call(&client, "test_elicitation", json!({"message": "Go?"})).await;
    assert_eq!(
        elicited["content"][0]["text"],
        r#"User response: action=accept, content={"response":"yes"}"#
    );
    let request = seen.try_recv().unwrap();
    assert_eq!(request["message"], "Go?");
    assert_eq!(
        request["requestedSchema"]["properties"]["response"],
        json!({"type": "string", "description": "User's response"})
    );

    // SEP-1034 defaults: each default with its JSON type.
    let _ = call(&client, "test_elicitation_sep1034_defaults", json!({})).await;
    let form = seen.try_recv().unwrap()["requestedSchema"]["properties"].clone();
    assert_eq!(form["age"]["default"], json!(30));
    assert_eq!(form["score"]["default"], json!(95.5));
    assert_eq!(form["verified"]["default"], json!(true));
    assert_eq!(
        form["status"]["enum"],
        json!(["active", "inactive", "pending"])
    );

    // Asked on the session's standalone stream (of no call): the client of the one call in
    // flight.
    let unrelated = call(&client, "test_client_elicitation_defaults", json!({})).await;
    assert_eq!(
        unrelated["content"][0]["text"],
        r#"Elicitation completed: action=accept, content={"response":"yes"}"#
    );
    let request = seen.try_recv().unwrap();
    assert_eq!(
        request["message"],
        "Test client default value handling - please accept with defaults"
    );

    client.cancel().await.unwrap();
    serving.stop().await.unwrap();
}

#[tokio::test]
async fn serve_relay_a_client_without_the_capability_is_not_asked() {
    let upstream = upstream().await;
    let serving = served(&upstream).await;
    // rmcp's client with no handler declares neither capability.
    let client = ()
        .serve(StreamableHttpClientTransport::from_uri(
            serving.url.to_string(),
        ))
        .await
        .unwrap();
    let elicited = tokio::time::timeout(
        Duration::from_secs(10),
        call(&client, "test_elicitation", json!({"message": "Go?"})),
    )
    .await
    .expect("declined at once");
    assert_eq!(
        elicited["content"][0]["text"],
        "User response: action=decline, content={}"
    );
    // Sampling is refused (-32601): the upstream's tool fails with that.
    let sampled = tokio::time::timeout(
        Duration::from_secs(10),
        call(&client, "test_sampling", json!({"prompt": "Say hi"})),
    )
    .await
    .expect("refused at once");
    assert_eq!(sampled["isError"], true, "{sampled}");
    client.cancel().await.unwrap();
    serving.stop().await.unwrap();
}

#[tokio::test]
async fn serve_relay_a_question_open_when_the_call_is_cancelled_is_cancelled() {
    let upstream = upstream().await;
    let serving = served(&upstream).await;
    let (handler, mut seen) = asked(true);
    let cancelled = Arc::clone(&handler.cancelled);
    let client = handler
        .serve(StreamableHttpClientTransport::from_uri(
            serving.url.to_string(),
        ))
        .await
        .unwrap();
    let params = CallToolRequestParams::new("test_elicitation")
        .with_arguments(json!({"message": "Go?"}).as_object().cloned().unwrap());
    let handle = client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(rmcp::model::Request::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    // The question reaches the client, which holds it; then the client cancels the call.
    let question = tokio::time::timeout(Duration::from_secs(10), seen.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(question["message"], "Go?");
    let told = cancelled.1.notified();
    tokio::pin!(told);
    told.as_mut().enable();
    handle.cancel(Some("changed my mind".into())).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), told)
        .await
        .expect("the open question is cancelled at the client");
    assert_eq!(cancelled.0.lock().unwrap().len(), 1);
    client.cancel().await.unwrap();
    serving.stop().await.unwrap();
}

/// An upstream of the stateless revision that asks with `input_required` (the Python SDK's
/// `python_asking_peer.py`): what it asks is relayed to the served call's client as an
/// elicitation or a sampling request on the call's stream, the client's answers go back in the
/// call sent again, and the call completes.
#[tokio::test]
async fn serve_relay_an_input_required_result_to_the_calls_client() {
    let upstream = asking_peer().await;
    let serving = served(&upstream).await;
    let (handler, mut seen) = asked(false);
    let client = handler
        .serve(StreamableHttpClientTransport::from_uri(
            serving.url.to_string(),
        ))
        .await
        .unwrap();
    let greeted = call(&client, "greet", json!({})).await;
    assert_eq!(
        greeted["structuredContent"]["result"], r#"accepted {"response": "yes"}"#,
        "{greeted}"
    );
    let request = seen.try_recv().unwrap();
    assert_eq!(request["message"], "What is your name?");
    let summarized = call(&client, "summarize", json!({})).await;
    assert_eq!(
        summarized["structuredContent"]["result"], "the model said: from the client",
        "{summarized}"
    );
    let request = seen.try_recv().unwrap();
    assert_eq!(request["messages"][0]["content"]["text"], "Summarize");
    client.cancel().await.unwrap();
    serving.stop().await.unwrap();
}

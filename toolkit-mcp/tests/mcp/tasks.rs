//! Tools run as tasks (MCP 2025-11-25): `server-everything`'s `simulate-research-query`
//! (`taskSupport: "required"`, with an `input_required` step when asked to be ambiguous) over
//! stdio (its `notifications/tasks/status` heard) and Streamable HTTP, and a TypeScript SDK server of our own (`ts_task_peer.cjs`) whose
//! tasks take two seconds, never end, or fail — and which records the `tasks/cancel` it gets (and,
//! over Streamable HTTP with a `tasks/cancel` it never answers, that the source gave it up at its
//! bound).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::Command;
use toolkit_core::{CallContext, Reason, ToolSource, progress::Progress};
use toolkit_mcp::{
    Elicitation, ElicitationAnswer, ElicitationRequest, Mcp, McpOptions, StdioCommand,
};

use super::everything::everything;
use super::processes::{free_port, installed, listening, script};
use super::quick;
use crate::support::object;

fn research(ambiguous: bool) -> serde_json::Map<String, Value> {
    object(json!({"topic": "python", "ambiguous": ambiguous}))
}

fn text(answer: &Value) -> String {
    answer[0]["text"].as_str().unwrap_or_default().to_owned()
}

/// The host's elicitation callback, answering "snake" and recording what it was asked.
fn answering(asked: &Arc<Mutex<Vec<String>>>) -> Elicitation {
    let asked = Arc::clone(asked);
    Elicitation::new(move |request: ElicitationRequest| {
        asked.lock().unwrap().push(request.message().to_owned());
        async move { ElicitationAnswer::Accept(object(json!({"interpretation": "snake"}))) }
    })
}

#[tokio::test]
async fn mcp_task_everything_research_query_over_stdio_with_input_required() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let options = quick().elicitation(answering(&asked));
    let command = StdioCommand::new("node").arg(everything()).arg("stdio");
    let source = Mcp::stdio_with_options("everything", command, options);
    let definitions = source.discover().await.unwrap();
    let research_tool = definitions
        .iter()
        .find(|d| d.name() == "simulate-research-query")
        .expect("the task tool is listed");
    assert_eq!(
        research_tool.execution().unwrap()["taskSupport"],
        "required"
    );
    let mut statuses = source
        .task_statuses()
        .expect("stdio hears the server unasked");

    let answer = source
        .call(
            "simulate-research-query",
            research(false),
            &CallContext::new(),
        )
        .await
        .unwrap();
    assert!(
        text(&answer).contains("# Research Report: python"),
        "{answer}"
    );
    assert!(asked.lock().unwrap().is_empty());
    // The server told the task's statuses as it moved on (`notifications/tasks/status`).
    let mut told = Vec::new();
    while let Ok(Some(status)) =
        tokio::time::timeout(Duration::from_millis(500), statuses.next()).await
    {
        told.push(status);
    }
    let id = &told.first().expect("statuses told")["taskId"];
    assert!(
        told.iter().all(|status| &status["taskId"] == id),
        "{told:?}"
    );
    for expected in ["working", "completed"] {
        assert!(
            told.iter().any(|status| status["status"] == expected),
            "{expected} not in {told:?}"
        );
    }

    // Ambiguous: the task stops in input_required and asks the host through tasks/result.
    let answer = source
        .call(
            "simulate-research-query",
            research(true),
            &CallContext::new(),
        )
        .await
        .unwrap();
    assert!(text(&answer).contains("python (snake)"), "{answer}");
    assert_eq!(asked.lock().unwrap().len(), 1);
    assert!(asked.lock().unwrap()[0].contains("multiple interpretations"));
    source.close().await;
}

#[tokio::test]
async fn mcp_task_everything_research_query_over_streamable_http() {
    let port = free_port();
    let mut command = Command::new("node");
    command
        .arg("-r")
        .arg(script("loopback.cjs"))
        .arg(everything())
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    let server = listening(command, port, "server-everything").await;
    let source = Mcp::http_with_options(
        "everything",
        server.url("/mcp"),
        // server-everything closes idle connections: none are kept for the next request.
        reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .build()
            .unwrap(),
        quick(),
    );
    source.discover().await.unwrap();
    // No elicitation callback: the client declares none, and the server takes its default.
    let answer = source
        .call(
            "simulate-research-query",
            research(true),
            &CallContext::new(),
        )
        .await
        .unwrap();
    assert!(
        text(&answer).contains("# Research Report: python"),
        "{answer}"
    );
    source.close().await;
}

/// The TypeScript SDK server of this module, over stdio, with `options`.
async fn task_peer(options: McpOptions) -> Mcp {
    let command = StdioCommand::new("node")
        .env("NODE_PATH", installed("mcp-npm/node_modules"))
        .arg(script("ts_task_peer.cjs"));
    let source = Mcp::stdio_with_options("tasks", command, options);
    source.discover().await.unwrap();
    source
}

/// What the peer's task store was asked: the tasks created, the ids of those cancelled.
async fn recorded(source: &Mcp) -> Value {
    let answer = source
        .call("record", object(json!({})), &CallContext::new())
        .await
        .unwrap();
    serde_json::from_str(&text(&answer)).unwrap()
}

/// Waits (bounded) until the peer records `id` as cancelled.
async fn cancelled(source: &Mcp, id: &str) -> bool {
    for _ in 0..100 {
        let record = recorded(source).await;
        if record["cancelled"].as_array().unwrap().contains(&json!(id)) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

fn last_task(record: &Value, tool: &str) -> Value {
    record["created"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|task| task["tool"] == tool)
        .cloned()
        .unwrap_or_else(|| panic!("no task of {tool} in {record}"))
}

#[tokio::test]
async fn mcp_task_of_two_seconds_reports_progress_and_answers_plainly() {
    let source = task_peer(quick()).await;
    let told: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = Arc::clone(&told);
    let context = CallContext::new().progress(move |progress| sink.lock().unwrap().push(progress));
    let answer = source
        .call("slow", object(json!({"topic": "tides"})), &context)
        .await
        .unwrap();
    assert_eq!(
        answer,
        json!([{"type": "text", "text": "researched tides"}])
    );
    let steps: Vec<serde_json::Number> = told
        .lock()
        .unwrap()
        .iter()
        .filter_map(|progress| match progress {
            Progress::Reported {
                progress, total, ..
            } => {
                assert_eq!(*total, Some(4.into()));
                Some(progress.clone())
            }
            _ => None,
        })
        .collect();
    // The server (JavaScript) writes integers: they stay integers.
    assert_eq!(steps, [1, 2, 3, 4].map(serde_json::Number::from));

    // An optional tool runs as a task too, the server declaring tasks for tools/call.
    let answer = source
        .call("optional", object(json!({})), &CallContext::new())
        .await
        .unwrap();
    assert_eq!(text(&answer), "optional done");
    let record = recorded(&source).await;
    assert_eq!(last_task(&record, "slow")["asTask"], true);
    assert_eq!(last_task(&record, "optional")["asTask"], true);
    assert_eq!(record["cancelled"], json!([]));
    source.close().await;
}

#[tokio::test]
async fn mcp_task_that_never_ends_is_cancelled_at_the_timeout_or_when_dropped() {
    let options = quick()
        .timeout(Duration::from_secs(1))
        .max_call_time(Duration::from_secs(1));
    let source = task_peer(options).await;
    let failed = source
        .call("never", object(json!({})), &CallContext::new())
        .await
        .unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Unavailable { .. }),
        "{failed}"
    );
    let id = last_task(&recorded(&source).await, "never")["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        cancelled(&source, &id).await,
        "tasks/cancel of {id} did not reach the server"
    );

    // A call its host gives up on (the future dropped) cancels its task as well.
    let context = CallContext::new();
    let call = source.call("never", object(json!({})), &context);
    let given_up = tokio::time::timeout(Duration::from_millis(400), call).await;
    assert!(given_up.is_err());
    let record = recorded(&source).await;
    let nevers = record["created"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|task| task["tool"] == "never");
    assert_eq!(nevers.count(), 2, "{record}");
    let id = last_task(&record, "never")["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        cancelled(&source, &id).await,
        "tasks/cancel of {id} did not reach the server"
    );
    source.close().await;
}

#[tokio::test]
async fn mcp_task_that_fails_is_a_failed_call_in_the_servers_words() {
    let source = task_peer(quick()).await;
    let failed = source
        .call("doomed", object(json!({})), &CallContext::new())
        .await
        .unwrap_err();
    assert_eq!(
        failed.reason,
        Reason::call_failed("The tool's task failed: the disk is full")
    );
    source.close().await;
}

/// The background `tasks/cancel` of a call given up is itself given up after its bound (5 s,
/// `CANCEL_WAIT`) when the server never answers it: over Streamable HTTP the source then tells
/// the server it gave the request up (`notifications/cancelled`), which the peer records.
#[tokio::test]
async fn mcp_task_cancel_the_server_never_answers_is_given_up_at_its_bound() {
    let port = free_port();
    let mut command = Command::new("node");
    command
        .arg(script("ts_task_peer.cjs"))
        .env("NODE_PATH", installed("mcp-npm/node_modules"))
        .env("PORT", port.to_string())
        .env("STUBBORN_CANCEL", "1");
    let server = listening(command, port, "ts_task_peer").await;
    let options = quick()
        .timeout(Duration::from_secs(1))
        .max_call_time(Duration::from_secs(1));
    let source =
        Mcp::http_with_options("tasks", server.url("/mcp"), reqwest::Client::new(), options);
    source.discover().await.unwrap();
    let failed = source
        .call("never", object(json!({})), &CallContext::new())
        .await
        .unwrap_err();
    assert!(
        matches!(failed.reason, Reason::Unavailable { .. }),
        "{failed}"
    );
    let id = last_task(&recorded(&source).await, "never")["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    // Asked to cancel, never answering; given up once the bound passes (waited for at most
    // 20 s here: the bound is 5 s).
    let mut record = recorded(&source).await;
    for _ in 0..200 {
        if record["cancelGivenUp"]
            .as_array()
            .unwrap()
            .contains(&json!(id))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        record = recorded(&source).await;
    }
    assert!(
        record["cancelAsked"]
            .as_array()
            .unwrap()
            .contains(&json!(id)),
        "{record}"
    );
    assert!(
        record["cancelGivenUp"]
            .as_array()
            .unwrap()
            .contains(&json!(id)),
        "the tasks/cancel of {id} was never given up: {record}"
    );
    assert_eq!(record["cancelled"], json!([]), "{record}");
    source.close().await;
}

//! A tool the gateway's policy marks `approve` runs only once someone approves the call:
//! `toolkit-gateway` over Streamable HTTP in front of npm
//! `@modelcontextprotocol/server-filesystem` (whose `write_file` writes a real file), with
//! `write_file` marked `approve`. By default the calling client is asked (elicitation, form mode):
//! the TypeScript SDK's client (`approval_client.cjs`) approves, declines with a reason, edits
//! the input (to another file; to an input the tool does not take), or declares no elicitation;
//! the Python SDK's stateless client (2026-07-28) cannot be asked; a call through a search
//! (`tool_call`) asks about the tool it reaches. With `[approval] webhook`, a small HTTP service of the test's is asked instead: it approves
//! one call, declines another, and never answers a third within the configured timeout.
#![allow(clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{Killed, peer, root};

/// A directory of the test's own, with `files/` the filesystem server serves (canonical, as the
/// server compares paths).
fn workspace(name: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("toolkit-approval-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("files")).unwrap();
    let files = dir.join("files").canonicalize().unwrap();
    (dir, files)
}

/// The gateway on `port` over HTTP, in front of server-filesystem on `files`, `write_file`
/// marked `approve`, with `approval` (an `[approval]` table, or nothing); its log at `info` in
/// `dir/gateway.log`, and `APPROVAL_TEST_TOKEN` set.
fn gateway(dir: &Path, files: &Path, port: u16, approval: &str) -> Killed {
    gateway_with(dir, files, port, "", approval)
}

/// [`gateway`], with `serve` added to its `[serve]` table.
fn gateway_with(dir: &Path, files: &Path, port: u16, serve: &str, approval: &str) -> Killed {
    let filesystem = json!([
        "node",
        peer("mcp-npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"),
        files.to_string_lossy(),
    ]);
    let config = format!(
        "[serve]\ntransport = \"http\"\naddress = \"127.0.0.1:{port}\"\n{serve}\n\n\
         [catalog]\nfile = \"catalog.json\"\nrefresh_seconds = 0\n\n\
         [policy]\ndefault = \"allow\"\n\
         rules = [{{ source = \"files\", tool = \"write_file\", decision = \"approve\" }}]\n\n\
         {approval}\n\n\
         [[sources]]\nname = \"files\"\ncommand = {filesystem}\n"
    );
    let path = dir.join("toolkit.toml");
    std::fs::write(&path, config).unwrap();
    let log = std::fs::File::create(dir.join("gateway.log")).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
        .arg("--config")
        .arg(&path)
        .env("RUST_LOG", "info")
        .env("APPROVAL_TEST_TOKEN", "approval-test-token")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let gateway = Killed(child);
    // It listens once its catalog is listed and its toolkit assembled.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the gateway does not listen on {port}: {}",
            std::fs::read_to_string(dir.join("gateway.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    gateway
}

/// The TypeScript SDK's client (`approval_client.cjs`), driven line by line.
struct ApprovalClient {
    _child: Killed,
    input: ChildStdin,
    output: std::io::Lines<BufReader<ChildStdout>>,
}

/// What became of one call: the result's text and whether it is an error, and what the client
/// was asked during it.
#[derive(Debug)]
struct Called {
    text: String,
    is_error: bool,
    asked: Vec<Value>,
}

impl ApprovalClient {
    fn start(port: u16, elicitation: bool) -> Self {
        let mut child = Command::new("node")
            .arg(root().join("toolkit-gateway/tests/gateway/approval_client.cjs"))
            .env("NODE_PATH", peer("mcp-npm/node_modules"))
            .env("MCP_URL", format!("http://127.0.0.1:{port}/mcp"))
            .env("ELICITATION", if elicitation { "form" } else { "none" })
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let mut output = BufReader::new(child.stdout.take().unwrap()).lines();
        let first: Value = serde_json::from_str(&output.next().unwrap().unwrap()).unwrap();
        assert!(first.get("error").is_none(), "{first}");
        Self {
            _child: Killed(child),
            input,
            output,
        }
    }

    /// Calls `write_file` with `arguments`, answering the question (if any) with `answer`.
    fn write_file(&mut self, arguments: Value, answer: Value) -> Called {
        self.call("files__write_file", arguments, answer)
    }

    /// Calls `tool` with `arguments`, answering the question (if any) with `answer`.
    fn call(&mut self, tool: &str, arguments: Value, answer: Value) -> Called {
        let line = json!({"tool": tool, "arguments": arguments, "answer": answer});
        writeln!(self.input, "{line}").unwrap();
        self.input.flush().unwrap();
        let read: Value = serde_json::from_str(&self.output.next().unwrap().unwrap()).unwrap();
        let result = &read["result"];
        assert!(result.is_object(), "the call failed as a request: {read}");
        Called {
            text: result["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            is_error: result["isError"] == json!(true),
            asked: read["asked"].as_array().cloned().unwrap_or_default(),
        }
    }
}

fn write(path: &Path, content: &str) -> Value {
    json!({"path": path.to_string_lossy(), "content": content})
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

#[test]
fn the_calling_client_is_asked_and_its_answer_decides() {
    let (dir, files) = workspace("client");
    let port = crate::support::free_port();
    let _gateway = gateway(&dir, &files, port, "[audit]\nfile = \"audit.jsonl\"");
    let log = std::fs::read_to_string(dir.join("gateway.log")).unwrap();
    assert!(
        log.contains("write_file") && log.contains("elicitation"),
        "the start says who approves write_file: {log}"
    );
    let mut client = ApprovalClient::start(port, true);

    // (a) Approved: written, once the client was asked in form mode about this call.
    let approved = files.join("approved.txt");
    let called = client.write_file(
        write(&approved, "approved"),
        accept(json!({"decision": "approve"})),
    );
    assert!(!called.is_error, "{called:?}");
    assert_eq!(std::fs::read_to_string(&approved).unwrap(), "approved");
    assert_eq!(called.asked.len(), 1, "{called:?}");
    let question = &called.asked[0];
    assert_eq!(question["method"], "elicitation/create");
    assert_eq!(question["params"]["mode"], "form");
    let message = question["params"]["message"].as_str().unwrap();
    assert!(
        message.contains("files__write_file") && message.contains("approved.txt"),
        "{message}"
    );

    // (b) Declined with a reason: not written, and the model reads the reason.
    let declined = files.join("declined.txt");
    let called = client.write_file(
        write(&declined, "declined"),
        accept(json!({"decision": "decline", "reason": "not in this folder, please"})),
    );
    assert!(called.is_error, "{called:?}");
    assert!(
        called.text.contains("not in this folder, please"),
        "{called:?}"
    );
    assert!(!declined.exists());
    // The client's own decline, and a cancel: not written either.
    let called = client.write_file(write(&declined, "x"), json!({"action": "decline"}));
    assert!(
        called.is_error && called.text.contains("declined"),
        "{called:?}"
    );
    let called = client.write_file(write(&declined, "x"), json!({"action": "cancel"}));
    assert!(
        called.is_error && called.text.contains("dismissed"),
        "{called:?}"
    );
    assert!(!declined.exists());

    // (c) Edited: the edited input is what ran (another file, other content).
    let asked_for = files.join("asked-for.txt");
    let edited = files.join("edited.txt");
    let edit = write(&edited, "edited by a person").to_string();
    let called = client.write_file(
        write(&asked_for, "the model's"),
        accept(json!({"decision": "approve", "input": edit})),
    );
    assert!(!called.is_error, "{called:?}");
    assert!(!asked_for.exists());
    assert_eq!(
        std::fs::read_to_string(&edited).unwrap(),
        "edited by a person"
    );
    // An edited input the tool does not take (no `path`) is refused: nothing runs.
    let called = client.write_file(
        write(&asked_for, "the model's"),
        accept(json!({"decision": "approve", "input": r#"{"content": "no path"}"#})),
    );
    assert!(called.is_error, "{called:?}");
    assert!(
        called.text.contains("does not take the changed input"),
        "{called:?}"
    );
    // An edited input that is no JSON: declined, saying so.
    let called = client.write_file(
        write(&asked_for, "the model's"),
        accept(json!({"decision": "approve", "input": "{\"path\": "})),
    );
    assert!(
        called.is_error && called.text.contains("not JSON"),
        "{called:?}"
    );
    assert!(!asked_for.exists());

    // (d) A client that declared no elicitation cannot be asked: refused, not written.
    let mut headless = ApprovalClient::start(port, false);
    let unasked = files.join("unasked.txt");
    let called = headless.write_file(write(&unasked, "unasked"), Value::Null);
    assert!(called.is_error, "{called:?}");
    assert!(
        called.text.contains("no person could be asked"),
        "{called:?}"
    );
    assert!(called.asked.is_empty());
    assert!(!unasked.exists());

    // Nor can a stateless request (2026-07-28, the Python SDK's client): the server has no
    // stream to ask it on.
    let stateless = files.join("stateless.txt");
    let output = Command::new(peer("mcp-python/bin/python"))
        .arg(root().join("toolkit-gateway/tests/gateway/team_client.py"))
        .args([
            &format!("http://127.0.0.1:{port}/mcp"),
            "no-token",
            "carol",
            "files__write_file",
            &write(&stateless, "stateless").to_string(),
        ])
        .output()
        .unwrap();
    let read: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert_eq!(read["protocolVersion"], "2026-07-28", "{read}");
    assert_eq!(read["result"]["isError"], true, "{read}");
    assert!(read["result"].to_string().contains("stateless"), "{read}");

    // The audit has each call that was asked about: approved, edited, and those declined (which
    // reached no source), each with who gave the verdict where the gateway knows it.
    let verdicts = |records: &[Value]| -> Vec<String> {
        records
            .iter()
            .filter(|record| record["tool"] == "write_file")
            .map(|record| {
                record["approval"]["verdict"]
                    .as_str()
                    .unwrap_or("none")
                    .to_owned()
            })
            .collect()
    };
    let mut records = Vec::new();
    for _ in 0..100 {
        let text = std::fs::read_to_string(dir.join("audit.jsonl")).unwrap_or_default();
        records = text
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .collect::<Vec<_>>();
        if verdicts(&records)
            .iter()
            .filter(|verdict| *verdict == "declined")
            .count()
            >= 6
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let seen = verdicts(&records);
    assert_eq!(
        seen.iter().filter(|verdict| *verdict == "approved").count(),
        1,
        "{seen:?}"
    );
    assert_eq!(
        seen.iter().filter(|verdict| *verdict == "edited").count(),
        1,
        "{seen:?}"
    );
    assert!(
        seen.iter().filter(|verdict| *verdict == "declined").count() >= 6,
        "{seen:?}"
    );
    for record in &records {
        assert_eq!(record["decision"], "approve", "{record}");
        assert_eq!(record["principal"], "loopback", "{record}");
        if record["approval"]["verdict"] == "declined" {
            assert_eq!(record["outcome"], "declined", "{record}");
            assert_eq!(record["approval"]["by"], "loopback", "{record}");
        }
    }
    let text = std::fs::read_to_string(dir.join("audit.jsonl")).unwrap();
    assert!(
        !text.contains("edited by a person"),
        "no input's value: {text}"
    );
    assert!(!stateless.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// What the test's webhook was sent: each request's `Authorization` and body.
type Heard = Arc<Mutex<Vec<(Option<String>, Value)>>>;

/// The test's approval service on its own thread: approves a call whose content is `yes`,
/// never answers one whose content is `slow`, declines the rest with a reason.
fn webhook() -> (SocketAddr, Heard) {
    let heard: Heard = Arc::default();
    let kept = Arc::clone(&heard);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let app = axum::Router::new().route(
                "/hook",
                axum::routing::post(
                    move |headers: axum::http::HeaderMap, axum::Json(body): axum::Json<Value>| {
                        let heard = Arc::clone(&kept);
                        async move {
                            let authorization = headers
                                .get("authorization")
                                .and_then(|value| value.to_str().ok())
                                .map(str::to_owned);
                            let content = body["input"]["content"]
                                .as_str()
                                .unwrap_or_default()
                                .to_owned();
                            heard.lock().unwrap().push((authorization, body));
                            let answer = match content.as_str() {
                                "yes" => json!({"verdict": "approve", "by": "the test"}),
                                "slow" => std::future::pending::<Value>().await,
                                _ => json!({
                                    "verdict": "decline",
                                    "reason": "the webhook says no",
                                    "by": "the test"
                                }),
                            };
                            axum::Json(answer)
                        }
                    },
                ),
            );
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let _ = axum::serve(listener, app).await;
        });
    });
    (address, heard)
}

#[test]
fn a_webhook_is_asked_instead_when_configured_and_silence_declines() {
    let (dir, files) = workspace("webhook");
    let (address, heard) = webhook();
    let port = crate::support::free_port();
    let approval = format!(
        "[approval]\nwebhook = \"http://{address}/hook\"\ntimeout_seconds = 1\n\
         bearer_env = \"APPROVAL_TEST_TOKEN\""
    );
    let _gateway = gateway(&dir, &files, port, &approval);
    let log = std::fs::read_to_string(dir.join("gateway.log")).unwrap();
    assert!(
        log.contains("write_file") && log.contains("webhook") && log.contains("127.0.0.1"),
        "the start says who approves write_file: {log}"
    );
    // A client that could be asked is not: the webhook decides.
    let mut client = ApprovalClient::start(port, true);
    let yes = files.join("yes.txt");
    let called = client.write_file(write(&yes, "yes"), accept(json!({"decision": "decline"})));
    assert!(!called.is_error, "{called:?}");
    assert!(called.asked.is_empty(), "{called:?}");
    assert_eq!(std::fs::read_to_string(&yes).unwrap(), "yes");

    let no = files.join("no.txt");
    let called = client.write_file(write(&no, "no"), Value::Null);
    assert!(called.is_error, "{called:?}");
    assert!(called.text.contains("the webhook says no"), "{called:?}");
    assert!(!no.exists());

    let slow = files.join("slow.txt");
    let called = client.write_file(write(&slow, "slow"), Value::Null);
    assert!(called.is_error, "{called:?}");
    assert!(
        called.text.contains("did not answer within 1 seconds"),
        "{called:?}"
    );
    assert!(!called.text.contains("/hook"), "no URL: {called:?}");
    assert!(!slow.exists());

    let heard = heard.lock().unwrap().clone();
    assert_eq!(heard.len(), 3, "{heard:?}");
    let (authorization, body) = &heard[0];
    assert_eq!(authorization.as_deref(), Some("Bearer approval-test-token"));
    assert_eq!(body["tool"], "files__write_file");
    assert_eq!(body["source"], "files");
    assert_eq!(body["source_tool"], "write_file");
    assert_eq!(body["input"], write(&yes, "yes"));
    assert!(body["principal"].is_string(), "{body}");
    assert!(
        body["call_id"].as_str().is_some_and(|id| id.len() == 32),
        "{body}"
    );
    assert_ne!(heard[1].1["call_id"], body["call_id"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A webhook that cannot be reached declines, and what the model reads names its host, not its
/// URL (which may carry a token).
#[test]
fn an_unreachable_webhook_declines_without_its_url() {
    let (dir, files) = workspace("unreachable");
    let port = crate::support::free_port();
    let nobody = crate::support::free_port();
    let approval = format!("[approval]\nwebhook = \"http://127.0.0.1:{nobody}/hook?key=hunter2\"");
    let _gateway = gateway(&dir, &files, port, &approval);
    let mut client = ApprovalClient::start(port, true);
    let never = files.join("never.txt");
    let called = client.write_file(write(&never, "x"), Value::Null);
    assert!(called.is_error, "{called:?}");
    assert!(
        called.text.contains("approval service at 127.0.0.1"),
        "{called:?}"
    );
    assert!(!called.text.contains("hunter2"), "{called:?}");
    assert!(!never.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Through a search (`tool_call`), the person is asked about the tool the call reaches, with that
/// tool's input.
#[test]
fn a_call_through_a_search_asks_about_the_tool_it_reaches() {
    let (dir, files) = workspace("search");
    let port = crate::support::free_port();
    let _gateway = gateway_with(&dir, &files, port, "presentation = \"search\"", "");
    let mut client = ApprovalClient::start(port, true);
    let reached = files.join("reached.txt");
    let called = client.call(
        "tool_call",
        json!({"name": "files__write_file", "input": write(&reached, "through a search")}),
        accept(json!({"decision": "approve"})),
    );
    assert!(!called.is_error, "{called:?}");
    assert_eq!(called.asked.len(), 1, "{called:?}");
    let message = called.asked[0]["params"]["message"].as_str().unwrap();
    assert!(
        message.contains("files__write_file") && message.contains("through a search"),
        "{message}"
    );
    assert_eq!(
        std::fs::read_to_string(&reached).unwrap(),
        "through a search"
    );
    let refused = files.join("refused.txt");
    let called = client.call(
        "tool_call",
        json!({"name": "files__write_file", "input": write(&refused, "x")}),
        json!({"action": "decline"}),
    );
    assert!(called.is_error, "{called:?}");
    assert!(!refused.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

//! What real servers say reaches the gateway's clients unchanged: `toolkit-gateway --config` in
//! front of four real stdio servers from the registries (npm `@modelcontextprotocol/server-everything`
//! and `-filesystem`, PyPI `mcp-server-git` and `mcp-server-time`), read by the TypeScript SDK's
//! client (`fidelity_client.cjs`, which declares `roots`) directly and through the gateway: each
//! server's `tools/list` equals the gateway's tools of that source without the prefix, and each
//! call (text, image, annotated blocks, resource links, an embedded resource, structured content,
//! error results, progress, the client's roots) gives the direct result exactly, but for the
//! URIs of its resource links and embedded resources, served under the source's name as its
//! resources are. The same holds
//! through the same gateway serving Streamable HTTP (`[serve] transport = "http"`, a process of
//! its own, read over `StreamableHTTPClientTransport`), where the bodies as written on the socket
//! also show `priority: 1` and the progress steps as integers (http/written_http.rs).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::support::peer;

/// A git repository with one commit, and a folder with one file, for the servers to read.
fn workspace(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolkit-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(dir.join("files")).unwrap();
    std::fs::write(dir.join("files/hello.txt"), "hello, fidelity\n").unwrap();
    std::fs::write(repo.join("a.txt"), "a\n").unwrap();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(["-c", "user.email=t@example.com", "-c", "user.name=Test"])
            .args(args)
            .current_dir(&repo)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "a.txt"]);
    git(&["commit", "-q", "-m", "The first commit"]);
    dir
}

/// Each server: its source name, its command, and the calls made of it.
fn servers(dir: &Path) -> Vec<(&'static str, Vec<String>, Vec<Value>)> {
    let python = peer("mcp-servers-python/bin/python");
    let files = dir.join("files").to_string_lossy().into_owned();
    let repo = dir.join("repo").to_string_lossy().into_owned();
    let hello = dir.join("files/hello.txt").to_string_lossy().into_owned();
    let call = |tool: &str, arguments: Value| json!({"tool": tool, "arguments": arguments});
    vec![
        (
            "everything",
            vec![
                "node".into(),
                peer("mcp-npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
                "stdio".into(),
            ],
            vec![
                call("echo", json!({"message": "hi"})),
                call("get-sum", json!({"a": 1, "b": 2})),
                call("get-tiny-image", json!({})),
                call(
                    "get-annotated-message",
                    json!({"messageType": "error", "includeImage": true}),
                ),
                call("get-resource-links", json!({"count": 2})),
                call(
                    "get-resource-reference",
                    json!({"resourceType": "Text", "resourceId": 1}),
                ),
                call("get-structured-content", json!({"location": "Chicago"})),
                call(
                    "trigger-long-running-operation",
                    json!({"duration": 0.2, "steps": 2}),
                ),
                call("get-roots-list", json!({})),
            ],
        ),
        (
            "filesystem",
            vec![
                "node".into(),
                peer("mcp-npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"),
                files.clone(),
            ],
            vec![
                call("read_text_file", json!({"path": hello})),
                call(
                    "read_text_file",
                    json!({"path": format!("{files}/missing.txt")}),
                ),
                call("list_allowed_directories", json!({})),
            ],
        ),
        (
            "git",
            vec![
                python.clone(),
                "-m".into(),
                "mcp_server_git".into(),
                "--repository".into(),
                repo.clone(),
            ],
            vec![
                call("git_status", json!({"repo_path": repo})),
                call("git_log", json!({"repo_path": repo, "max_count": 1})),
            ],
        ),
        (
            "time",
            vec![python, "-m".into(), "mcp_server_time".into()],
            vec![
                call(
                    "convert_time",
                    json!({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
                ),
                call(
                    "convert_time",
                    json!({"source_timezone": "Nowhere/Atlantis", "time": "12:00", "target_timezone": "UTC"}),
                ),
            ],
        ),
    ]
}

/// The gateway's configuration: every server a source under its name, every tool allowed (so
/// that no approval changes its hints).
fn config(servers: &[(&'static str, Vec<String>, Vec<Value>)]) -> String {
    let mut config = "[catalog]\nrefresh_seconds = 0\n\n[policy]\ndefault = \"allow\"\n".to_owned();
    for (name, command, _) in servers {
        config.push_str(&format!(
            "\n[[sources]]\nname = \"{name}\"\ncommand = {}\n",
            serde_json::to_string(command).unwrap()
        ));
    }
    config
}

/// What the TypeScript SDK's client read of each target of the plan at `plan` (its listing, and
/// each call's result or error with the progress it was told).
fn run_client(plan: &Path) -> Value {
    let output = Command::new("node")
        .env("NODE_PATH", peer("mcp-npm/node_modules"))
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/gateway/fidelity_client.cjs"
        ))
        .arg(plan)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// A call's record without the clock time server-everything writes into a resource it makes
/// (`… created at 9:54:55 PM`), which differs between two calls.
fn without_clock(call: &Value) -> Value {
    let mut call = call.clone();
    if let Some(blocks) = call["result"]["content"].as_array_mut() {
        for block in blocks {
            if let Some(text) = block["resource"]["text"].as_str()
                && let Some((before, _)) = text.split_once(" created at ")
            {
                block["resource"]["text"] = json!(before);
            }
        }
    }
    call
}

/// The gateway of the configuration at `config`, serving Streamable HTTP on 127.0.0.1:`port`
/// (as its `[serve]` says), started as a process and killed when dropped.
struct HttpGateway(std::process::Child);

impl HttpGateway {
    /// Starts it and waits (a minute at most) until it accepts connections.
    fn start(config: &Path, port: u16) -> Self {
        let child = Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
            .arg("--config")
            .arg(config)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let gateway = Self(child);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "the gateway does not listen on {port}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        gateway
    }
}

impl Drop for HttpGateway {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Asserts that what the client read of the gateway at `key` of `read` is what it read of each
/// server directly: each server's listing (its tools of that source, without the prefix) and
/// each call's result, error and progress (the gateway's calls are the servers' in order).
fn assert_passes_on(read: &Value, key: &str, servers: &[(&'static str, Vec<String>, Vec<Value>)]) {
    let gateway = &read[key];
    let mut next_call = 0;
    for (name, _, calls) in servers {
        let direct = &read[*name];
        let prefix = format!("{name}__");
        let through: Vec<Value> = gateway["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|tool| {
                let own = tool["name"].as_str()?.strip_prefix(&prefix)?;
                let mut tool = tool.clone();
                tool["name"] = json!(own);
                Some(tool)
            })
            .collect();
        // The gateway serves a task tool as a plain one (it runs the task upstream), so it
        // serves no `execution` — which rmcp's `Tool` (3.11) has no field for either.
        let listed: Vec<Value> = direct["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| {
                let mut tool = tool.clone();
                tool.as_object_mut().unwrap().remove("execution");
                tool
            })
            .collect();
        assert_eq!(
            through.len(),
            listed.len(),
            "{key}, {name}: {through:#?}\n{listed:#?}"
        );
        for (through, listed) in through.iter().zip(&listed) {
            assert_eq!(through, listed, "{key}, {name}: a tool is listed otherwise");
        }
        for (index, call) in calls.iter().enumerate() {
            let direct = as_served(name, without_clock(&direct["calls"][index]));
            let through = without_clock(&gateway["calls"][next_call]);
            next_call += 1;
            assert_eq!(
                through["result"], direct["result"],
                "{key}, {name}: the call {call} answers otherwise"
            );
            assert_eq!(
                through["error"], direct["error"],
                "{key}, {name}: the call {call} fails otherwise"
            );
            // The progress the gateway passes on is what the server told. Spoken to directly,
            // server-everything's last notification sometimes reaches the SDK's client after the
            // result on a loaded machine (the client then drops it): the direct list is a
            // prefix of the gateway's, never more (the count is checked exactly by the caller).
            let told = through["progress"].as_array().cloned().unwrap_or_default();
            let heard = direct["progress"].as_array().cloned().unwrap_or_default();
            assert!(
                heard.len() <= told.len() && told[..heard.len()] == heard[..],
                "{key}, {name}: the call {call} reports other progress: {told:?} against {heard:?}"
            );
        }
    }
    assert_eq!(
        gateway["calls"].as_array().map(Vec::len),
        Some(next_call),
        "{key}: other calls"
    );
}

/// `call` (one call as read) as the gateway serves source `name`'s: the URIs of its result's
/// resource links and embedded resources under the source's name, as its resources are served
/// (`toolkit_gateway::served_names`), so that a client can read them back through it.
fn as_served(name: &str, mut call: Value) -> Value {
    for block in call["result"]["content"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        let uri = match block["type"].as_str() {
            Some("resource_link") => &mut block["uri"],
            Some("resource") => &mut block["resource"]["uri"],
            _ => continue,
        };
        if let Some(upstream) = uri.as_str() {
            *uri = json!(toolkit_gateway::served_names::served_uri(name, upstream));
        }
    }
    call
}

/// Every JSON-RPC message in the bodies of HTTP answers `wire` (each a JSON message or batch, or
/// an event stream of them), parsed by serde_json, which tells `1` from `1.0`.
fn wire_messages(wire: &Value) -> Vec<Value> {
    let mut messages = Vec::new();
    for body in wire.as_array().unwrap() {
        let body = body.as_str().unwrap();
        let texts: Vec<String> = if body.trim_start().starts_with(['{', '[']) {
            vec![body.to_owned()]
        } else {
            // An event's data may come in several `data:` lines, joined by newlines.
            body.split("\n\n")
                .map(|event| {
                    event
                        .lines()
                        .filter_map(|line| line.strip_prefix("data:"))
                        .map(|data| data.strip_prefix(' ').unwrap_or(data))
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .filter(|data| !data.trim().is_empty())
                .collect()
        };
        for text in texts {
            match serde_json::from_str(&text).unwrap() {
                Value::Array(batch) => messages.extend(batch),
                message => messages.push(message),
            }
        }
    }
    messages
}

#[test]
fn the_gateway_passes_on_what_four_real_servers_list_and_answer() {
    let dir = workspace("fidelity");
    let servers = servers(&dir);
    std::fs::write(dir.join("toolkit.toml"), config(&servers)).unwrap();
    // The same gateway over Streamable HTTP, as a process of its own, served by two threads (the
    // stdio one by the default one).
    let port = crate::support::free_port();
    let http_config = dir.join("toolkit-http.toml");
    std::fs::write(
        &http_config,
        format!(
            "[serve]\ntransport = \"http\"\naddress = \"127.0.0.1:{port}\"\nthreads = 2\n\n{}",
            config(&servers)
        ),
    )
    .unwrap();
    let _http = HttpGateway::start(&http_config, port);
    // The client's roots are the folder the filesystem server is started with: a server that asks
    // for roots as it starts (server-filesystem, which then serves the roots instead) asks the
    // gateway before any client is there, and is answered as without roots.
    let roots = json!([{"uri": format!("file://{}", dir.join("files").display()), "name": "the test's folder"}]);
    let mut targets: Vec<Value> = servers
        .iter()
        .map(|(name, command, calls)| {
            json!({"key": name, "command": command[0], "args": command[1..], "calls": calls})
        })
        .collect();
    let gateway_calls: Vec<Value> = servers
        .iter()
        .flat_map(|(name, _, calls)| {
            calls.iter().map(move |call| {
                json!({"tool": format!("{name}__{}", call["tool"].as_str().unwrap()), "arguments": call["arguments"]})
            })
        })
        .collect();
    let config_path = dir.join("toolkit.toml").to_string_lossy().into_owned();
    targets.push(json!({
        "key": "gateway",
        "command": env!("CARGO_BIN_EXE_toolkit-gateway"),
        "args": ["--config", config_path],
        "calls": gateway_calls,
    }));
    targets.push(json!({
        "key": "http",
        "url": format!("http://127.0.0.1:{port}/mcp"),
        "calls": gateway_calls,
    }));
    let plan = dir.join("plan.json");
    std::fs::write(
        &plan,
        json!({"roots": roots, "targets": targets}).to_string(),
    )
    .unwrap();
    let read = run_client(&plan);
    assert_passes_on(&read, "gateway", &servers);
    assert_passes_on(&read, "http", &servers);

    // The calls meant what they were meant to: an image, a resource link, an embedded resource,
    // structured content, error results, progress, the client's roots.
    let everything = &read["everything"]["calls"];
    assert_eq!(everything[2]["result"]["content"][1]["type"], "image");
    assert_eq!(
        everything[3]["result"]["content"][0]["annotations"]["priority"],
        1
    );
    assert_eq!(
        everything[4]["result"]["content"][1]["type"],
        "resource_link"
    );
    assert_eq!(everything[5]["result"]["content"][1]["type"], "resource");
    assert!(everything[6]["result"]["structuredContent"].is_object());
    // Both steps' progress, through either gateway (the list of everything's calls comes first).
    for key in ["gateway", "http"] {
        assert_eq!(
            read[key]["calls"][7]["progress"].as_array().unwrap().len(),
            2,
            "{key}"
        );
    }
    let roots = everything[8]["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(roots.contains("the test's folder"), "{roots}");
    assert_eq!(read["filesystem"]["calls"][1]["result"]["isError"], true);
    assert_eq!(read["time"]["calls"][1]["result"]["isError"], true);

    // Over HTTP, as written on the socket (a JavaScript number no longer tells `1` from `1.0`):
    // server-everything's `priority: 1` and its two progress notifications are integers.
    let messages = wire_messages(&read["http"]["wire"]);
    // The answer to get-annotated-message (its first block server-everything's error text).
    let annotated: Vec<&Value> = messages
        .iter()
        .filter(|message| {
            message["result"]["content"][0]["text"] == "Error: Operation failed"
                && message["result"]["content"][0]["annotations"].is_object()
        })
        .collect();
    assert_eq!(annotated.len(), 1, "{annotated:?}");
    let priority = &annotated[0]["result"]["content"][0]["annotations"]["priority"];
    assert!(
        priority.is_u64() && *priority == 1,
        "the priority is written otherwise: {priority}"
    );
    let progress: Vec<&Value> = messages
        .iter()
        .filter(|message| message["method"] == "notifications/progress")
        .map(|message| &message["params"])
        .collect();
    assert_eq!(progress.len(), 2, "{progress:?}");
    for (step, told) in progress.iter().enumerate() {
        assert!(
            told["progress"].is_u64() && told["progress"] == step + 1 && told["total"].is_u64(),
            "the progress is written otherwise: {told}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_gateway_runs_a_task_tool_upstream_for_a_client_without_tasks() {
    let dir = std::env::temp_dir().join(format!("toolkit-fidelity-tasks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let everything = vec![
        "node".to_owned(),
        peer("mcp-npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
        "stdio".to_owned(),
    ];
    let servers = vec![("everything", everything.clone(), Vec::new())];
    let config_path = dir.join("toolkit.toml");
    std::fs::write(&config_path, config(&servers)).unwrap();
    let research = |tool: &str, ambiguous: bool| json!({"tool": tool, "arguments": {"topic": "python", "ambiguous": ambiguous}});
    let plan = dir.join("plan.json");
    let targets = json!([
        {"key": "direct", "command": everything[0], "args": everything[1..],
         "calls": [research("simulate-research-query", false)]},
        {"key": "gateway", "command": env!("CARGO_BIN_EXE_toolkit-gateway"),
         "args": ["--config", config_path.to_string_lossy()],
         "calls": [
             research("everything__simulate-research-query", false),
             research("everything__simulate-research-query", true),
         ]},
    ]);
    std::fs::write(&plan, json!({"roots": [], "targets": targets}).to_string()).unwrap();
    let read = run_client(&plan);

    // The SDK's client will not call a tool that runs only as a task without tasks of its own.
    let direct = &read["direct"]["calls"][0];
    assert!(
        direct["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("requires task-based execution"),
        "{direct}"
    );
    // Through the gateway it is a tool like any other, and the call a plain one.
    let served = read["gateway"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "everything__simulate-research-query")
        .expect("the task tool is served");
    assert!(served.get("execution").is_none(), "{served}");
    let calls = &read["gateway"]["calls"];
    let report = calls[0]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(report.contains("# Research Report: python"), "{}", calls[0]);
    // Ambiguous: the upstream asks for clarification through `tasks/result`, which the gateway
    // relays to its client (which declines).
    let report = calls[1]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(report.contains("User declined"), "{}", calls[1]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A stdio server of our own that writes numbers no real server's SDK writes (JSON that an `f64`
/// cannot hold: `12345678901234567890`), for the bad input of `numbers_reach_the_client_as_the_upstream_wrote_them`.
/// Python's `json` writes an int as its digits.
const BIG_NUMBERS: &str = r#"
import json, sys
BIG = 12345678901234567890
for line in sys.stdin:
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "big-numbers", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "big", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        token = message["params"].get("_meta", {}).get("progressToken")
        if token is not None:
            note = {"progressToken": token, "progress": BIG, "total": BIG + 1}
            print(json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": note}), flush=True)
        result = {"content": [{"type": "text", "text": "big", "annotations": {"priority": BIG}}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}), flush=True)
"#;

/// A client of the gateway over stdio that reads its lines as written.
struct RawClient {
    child: std::process::Child,
    input: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
}

impl RawClient {
    /// The gateway of `config`, initialized (revision `version`, no capabilities).
    fn start(config: &Path, version: &str) -> Self {
        use std::io::BufRead as _;
        use std::process::Stdio;
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolkit-gateway"))
            .arg("--config")
            .arg(config)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = std::io::BufReader::new(child.stdout.take().unwrap());
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in output.lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut client = Self {
            child,
            input,
            lines,
        };
        client.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        );
        client.answer(0);
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    fn send(&mut self, message: &Value) {
        use std::io::Write as _;
        writeln!(self.input, "{message}").unwrap();
        self.input.flush().unwrap();
    }

    /// Every line up to the answer to `id`, the answer last, as written. A gateway that never
    /// answers fails the test after a minute instead of hanging it.
    fn answer(&mut self, id: u64) -> Vec<String> {
        let mut read = Vec::new();
        loop {
            let line = self.lines.recv_timeout(std::time::Duration::from_secs(60));
            assert!(line.is_ok(), "no answer to {id}: {read:?}");
            let line = line.unwrap();
            let parsed: Value = serde_json::from_str(&line).unwrap();
            let done = parsed["id"] == id && parsed.get("method").is_none();
            read.push(line);
            if done {
                return read;
            }
        }
    }

    /// Calls `tool` with `arguments` and a progress token: every line read, the answer last.
    fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Vec<String> {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": tool, "arguments": arguments, "_meta": {"progressToken": format!("p{id}")}}}),
        );
        self.answer(id)
    }
}

impl Drop for RawClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn numbers_reach_the_client_as_the_upstream_wrote_them() {
    let dir = std::env::temp_dir().join(format!("toolkit-fidelity-numbers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("big.py"), BIG_NUMBERS).unwrap();
    let servers = vec![
        (
            "everything",
            vec![
                "node".to_owned(),
                peer("mcp-npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
                "stdio".to_owned(),
            ],
            Vec::new(),
        ),
        (
            "big",
            vec![
                peer("mcp-python/bin/python"),
                dir.join("big.py").to_string_lossy().into_owned(),
            ],
            Vec::new(),
        ),
    ];
    let path = dir.join("toolkit.toml");
    std::fs::write(&path, config(&servers)).unwrap();
    for version in ["2025-11-25", "2024-11-05"] {
        let mut client = RawClient::start(&path, version);
        // server-everything (JavaScript) writes `priority: 1.0` as `1`, and its progress as
        // integers; rmcp's types would make them `1.0`.
        let read = client.call(
            1,
            "everything__get-annotated-message",
            json!({"messageType": "error", "includeImage": true}),
        );
        let answer = read.last().unwrap();
        assert!(answer.contains(r#""priority":1}"#), "{version}: {answer}");
        assert!(answer.contains(r#""priority":0.5}"#), "{version}: {answer}");
        assert!(!answer.contains("1.0"), "{version}: {answer}");
        let read = client.call(
            2,
            "everything__trigger-long-running-operation",
            json!({"duration": 0.2, "steps": 2}),
        );
        let told: Vec<&String> = read
            .iter()
            .filter(|line| line.contains("notifications/progress"))
            .collect();
        assert_eq!(told.len(), 2, "{version}: {read:?}");
        assert!(told[0].contains(r#""progress":1,"#), "{version}: {told:?}");
        assert!(told[0].contains(r#""total":2"#), "{version}: {told:?}");
        assert!(told[1].contains(r#""progress":2,"#), "{version}: {told:?}");
        // Beyond f64: the same digits.
        let read = client.call(3, "big__big", json!({}));
        let answer = read.last().unwrap();
        assert!(
            answer.contains(r#""priority":12345678901234567890}"#),
            "{version}: {answer}"
        );
        let told: Vec<&String> = read
            .iter()
            .filter(|line| line.contains("notifications/progress"))
            .collect();
        assert_eq!(told.len(), 1, "{version}: {read:?}");
        assert!(
            told[0].contains(r#""progress":12345678901234567890,"#)
                && told[0].contains(r#""total":12345678901234567891"#),
            "{version}: {told:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server that asks for its client's roots outside any call — server-filesystem, once it is
/// told the roots changed — is answered by the gateway's one client, over stdio and over
/// Streamable HTTP: the client's `notifications/roots/list_changed` reaches the server, the
/// server's `roots/list` comes back to the client, and the server then serves the new root.
#[test]
fn a_server_that_asks_for_roots_outside_any_call_is_answered_by_the_one_client() {
    let dir = workspace("roots");
    std::fs::create_dir_all(dir.join("other")).unwrap();
    let filesystem = vec![
        "node".to_owned(),
        peer("mcp-npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"),
        dir.join("files").to_string_lossy().into_owned(),
    ];
    let config = format!(
        "[catalog]\nfile = \"catalog.json\"\nrefresh_seconds = 0\n\n[policy]\ndefault = \"allow\"\n\n\
         [[sources]]\nname = \"filesystem\"\ncommand = {}\n",
        serde_json::to_string(&filesystem).unwrap()
    );
    std::fs::write(dir.join("toolkit.toml"), &config).unwrap();
    let port = crate::support::free_port();
    let http_config = dir.join("toolkit-http.toml");
    std::fs::write(
        &http_config,
        format!("[serve]\ntransport = \"http\"\naddress = \"127.0.0.1:{port}\"\n\n{config}")
            .replace("catalog.json", "catalog-http.json"),
    )
    .unwrap();
    let _http = HttpGateway::start(&http_config, port);
    let other = dir.join("other").canonicalize().unwrap();
    let other = other.to_string_lossy();
    // Before: the folder of its command line (asked at the gateway's start, with no client, the
    // server kept it). After the client's new roots: that root, asked for outside any call.
    let calls = json!([
        {"tool": "filesystem__list_allowed_directories", "arguments": {}},
        {"rootsChanged": [{"uri": format!("file://{other}"), "name": "the other folder"}]},
        {"tool": "filesystem__list_allowed_directories", "arguments": {}, "until": other},
    ]);
    let plan = dir.join("plan.json");
    let config_path = dir.join("toolkit.toml").to_string_lossy().into_owned();
    let roots =
        json!([{"uri": format!("file://{}", dir.join("files").display()), "name": "files"}]);
    let targets = json!([
        {"key": "stdio", "command": env!("CARGO_BIN_EXE_toolkit-gateway"),
         "args": ["--config", config_path], "calls": calls},
        {"key": "http", "url": format!("http://127.0.0.1:{port}/mcp"), "calls": calls},
    ]);
    std::fs::write(
        &plan,
        json!({"roots": roots, "targets": targets}).to_string(),
    )
    .unwrap();
    let read = run_client(&plan);
    for key in ["stdio", "http"] {
        let text = |index: usize| {
            read[key]["calls"][index]["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        };
        assert!(!text(0).contains(other.as_ref()), "{key}: {}", text(0));
        assert!(text(0).contains("files"), "{key}: {}", text(0));
        assert!(
            text(2).contains(other.as_ref()),
            "{key}: the server was not given the new roots: {}",
            read[key]
        );
    }
}

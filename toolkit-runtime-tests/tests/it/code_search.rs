//! Code mode at API scale: `execute` beside `search_tools`, which gives the TypeScript
//! declarations of the tools a query finds — over a small toolkit, and over GitHub's REST API
//! served on 127.0.0.1 for a scripted model's three-step task.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::extract::{Path as UrlPath, Query, State};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use toolkit_runtime::http::HttpSource;
use toolkit_runtime::openapi::{ReadOptions, decode_document, read_operations};
use toolkit_runtime::{
    Assembly, Decision, Member, Toolkit, ToolkitOptions, code::CodeMode, code::CodeModeOptions,
    code::Declarations, code::EVERY_DECLARATION_LIMIT, code::QuickJs,
};

use crate::peers::github_description;
use crate::support::{Scripted, definition};

fn names(toolkit: &Toolkit) -> Vec<&str> {
    toolkit.tools().map(|tool| tool.name()).collect()
}

/// `count` tools of a scripted source, each with a description and two parameters.
fn many(count: usize, approve: &'static [&'static str]) -> Toolkit {
    let definitions = (0..count).map(|i| {
        let name = if i < 3 {
            ["echo", "fail", "block"][i].to_owned()
        } else {
            format!("record_{i}")
        };
        definition(
            &name,
            json!({
                "type": "object",
                "properties": {
                    "text": { "type": "string", "description": "What to record." },
                    "when": { "type": "string", "enum": ["now", "later"] }
                },
                "required": ["text"]
            }),
        )
        .with_description(format!("Records number {i} of the ledger, with its text."))
    });
    Toolkit::from_source(
        Scripted::new("s"),
        definitions.collect::<Vec<_>>(),
        &ToolkitOptions::default().needs_approval(move |d| approve.contains(&d.name())),
    )
    .unwrap()
}

fn code_mode(presented: &Toolkit, declarations: Declarations) -> Toolkit {
    let options = CodeModeOptions::default().declarations(declarations);
    CodeMode::toolkit(presented, Arc::new(QuickJs::default()), &options)
}

#[test]
fn a_small_toolkit_is_declared_whole_and_a_large_one_is_searched() {
    let small = code_mode(&many(5, &[]), Declarations::Auto);
    assert_eq!(names(&small), ["execute"]);
    let description = small
        .get("execute")
        .unwrap()
        .definition()
        .description
        .clone();
    assert!(description.unwrap().contains("record_4(input: {"));

    let large = many(400, &[]);
    let every = toolkit_runtime::code::declare_tools(large.tools());
    assert!(every.chars().count() > EVERY_DECLARATION_LIMIT);
    let searched = code_mode(&large, Declarations::Auto);
    assert_eq!(names(&searched), ["execute", "search_tools"]);
    let description = searched
        .get("execute")
        .unwrap()
        .definition()
        .description
        .clone();
    let description = description.unwrap();
    assert!(!description.contains("record_4"), "{description}");
    assert!(description.contains("400 tools"), "{description}");
    assert!(description.len() < 1_000, "{}", description.len());

    // The host decides either way.
    assert_eq!(names(&code_mode(&large, Declarations::Every)), ["execute"]);
    assert_eq!(
        names(&code_mode(&many(5, &[]), Declarations::Search)),
        ["execute", "search_tools"]
    );
}

#[tokio::test]
async fn search_tools_gives_declarations_by_query_and_by_name() {
    let toolkit = code_mode(&many(50, &[]), Declarations::Search);
    let found = toolkit
        .call(
            "search_tools",
            json!({ "query": "ledger number 17", "limit": 2 }),
        )
        .await
        .unwrap();
    let declarations = found["declarations"].as_str().unwrap();
    assert!(
        declarations.starts_with("declare const tools: {"),
        "{declarations}"
    );
    assert!(
        declarations.contains("  /** Records number 17 of the ledger"),
        "{declarations}"
    );
    assert!(
        declarations.contains("record_17(input: {"),
        "{declarations}"
    );
    assert!(
        declarations.contains("when?: \"now\" | \"later\";"),
        "{declarations}"
    );
    assert_eq!(found["available"], json!(50));

    let named = toolkit
        .call("search_tools", json!({ "names": ["record_30", "nope"] }))
        .await
        .unwrap();
    let declarations = named["declarations"].as_str().unwrap();
    assert!(declarations.contains("record_30(input"), "{declarations}");
    assert_eq!(declarations.matches("(input:").count(), 1);
    assert_eq!(named["unknown"], json!(["nope"]));

    let nothing = toolkit.call("search_tools", json!({})).await.unwrap_err();
    assert_eq!(nothing.code, "InvalidInputError");
}

#[tokio::test]
async fn execute_calls_any_callable_tool_found_or_not_and_no_approval_tool() {
    let toolkit = code_mode(&many(50, &["block"]), Declarations::Search);
    assert_eq!(names(&toolkit), ["execute", "search_tools", "block"]);
    // Never searched for, and callable.
    let run = toolkit
        .call(
            "execute",
            json!({ "code": "return await tools.echo({ text: 'x' });" }),
        )
        .await
        .unwrap();
    assert_eq!(run["result"], json!({ "text": "x" }));
    // A tool that needs approval is neither found nor callable from code.
    let found = toolkit
        .call(
            "search_tools",
            json!({ "query": "block", "names": ["block"] }),
        )
        .await
        .unwrap();
    assert_eq!(found["unknown"], json!(["block"]));
    assert!(!found["declarations"].as_str().unwrap().contains("block("));
    let refused = toolkit
        .call(
            "execute",
            json!({ "code": "return await tools.block({ text: 'x' });" }),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code, "CodeError");
    assert!(
        refused.message.contains("not a function"),
        "{}",
        refused.message
    );
}

/// `tsc`, which `scripts/install-test-peers` installs.
fn tsc() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/peers/typescript/node_modules/typescript/bin/tsc");
    assert!(
        path.is_file(),
        "TypeScript is missing at {}: run scripts/install-test-peers",
        path.display()
    );
    path
}

/// Type-checks `text` with `tsc --noEmit --strict`; gives its complaints when it fails.
fn type_check(text: &str) -> Result<(), String> {
    let directory = std::env::temp_dir().join(format!(
        "toolkit-declarations-{}-{}",
        std::process::id(),
        text.len()
    ));
    std::fs::create_dir_all(&directory).unwrap();
    let file = directory.join("tools.ts");
    std::fs::write(&file, text).unwrap();
    let output = std::process::Command::new("node")
        .arg(tsc())
        .args([
            "--noEmit", "--strict", "--target", "es2022", "--lib", "es2022",
        ])
        .arg(&file)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&directory);
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

#[test]
fn tsc_catches_what_it_should() {
    // The check itself can fail: a wrong input type is a compile error.
    let wrong = "declare const tools: { a(input: { n: number }): Promise<unknown>; };\n\
                 async function f() { await tools.a({ n: 'x' }); }";
    assert!(type_check(wrong).is_err());
}

#[tokio::test]
async fn a_declared_output_type_is_what_the_code_gets_back() {
    let output = json!({
        "type": "object",
        "properties": {
            "count": { "type": "integer", "description": "How many notes." },
            "latest": { "$ref": "#/$defs/Note" }
        },
        "required": ["count"],
        "$defs": { "Note": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] } }
    });
    let tools = vec![
        definition("count_notes", json!({ "type": "object" }))
            .with_description("Counts the notes.")
            .with_output_schema(output.as_object().cloned().unwrap()),
        definition("find_notes", json!({ "type": "object" })).with_description("Finds notes."),
    ];
    let toolkit = code_mode(
        &Toolkit::from_source(Scripted::new("s"), tools, &ToolkitOptions::default()).unwrap(),
        Declarations::Search,
    );
    let found = toolkit
        .call(
            "search_tools",
            json!({ "names": ["count_notes", "find_notes"] }),
        )
        .await
        .unwrap();
    let declarations = found["declarations"].as_str().unwrap();
    assert!(
        declarations.contains(
            "count_notes(input: Record<string, unknown>): Promise<{\n    /** How many notes. */\n    count: number;\n    latest?: {\n      title: string;\n    };\n  }>;"
        ),
        "{declarations}"
    );
    assert!(
        declarations.contains("find_notes(input: Record<string, unknown>): Promise<unknown>;"),
        "{declarations}"
    );
    // Code may read the declared answer as its type, and tsc refuses a misreading.
    let reads = "async function f(): Promise<number> { const n = await tools.count_notes({}); \
                 return n.count + (n.latest?.title.length ?? 0); }";
    type_check(&format!("{declarations}\n{reads}")).unwrap();
    let misreads =
        "async function f(): Promise<string> { return (await tools.count_notes({})).count; }";
    assert!(type_check(&format!("{declarations}\n{misreads}")).is_err());
}

/// What the GitHub stand-in on 127.0.0.1 saw, a line per request.
type Seen = Arc<Mutex<Vec<String>>>;

async fn github_stand_in() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let router = Router::new()
        .route(
            "/repos/{owner}/{repo}",
            get(
                |State(seen): State<Seen>, UrlPath((owner, repo)): UrlPath<(String, String)>| async move {
                    seen.lock().unwrap().push(format!("GET /repos/{owner}/{repo}"));
                    Json(json!({ "full_name": format!("{owner}/{repo}"), "open_issues_count": 3 }))
                },
            ),
        )
        .route(
            "/repos/{owner}/{repo}/issues",
            get(
                |State(seen): State<Seen>,
                 UrlPath((owner, repo)): UrlPath<(String, String)>,
                 Query(query): Query<Vec<(String, String)>>| async move {
                    let mut query: Vec<String> =
                        query.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
                    query.sort();
                    seen.lock()
                        .unwrap()
                        .push(format!("GET /repos/{owner}/{repo}/issues {}", query.join("&")));
                    Json(json!([
                        { "number": 12, "title": "newer", "created_at": "2026-03-01T00:00:00Z", "state": "open" },
                        { "number": 7, "title": "oldest", "created_at": "2025-01-01T00:00:00Z", "state": "open" },
                        { "number": 9, "title": "middle", "created_at": "2025-06-01T00:00:00Z", "state": "open" }
                    ]))
                },
            ),
        )
        .route(
            "/repos/{owner}/{repo}/issues/{number}/comments",
            axum::routing::post(
                |State(seen): State<Seen>,
                 UrlPath((owner, repo, number)): UrlPath<(String, String, u64)>,
                 Json(body): Json<Value>| async move {
                    seen.lock()
                        .unwrap()
                        .push(format!("POST /repos/{owner}/{repo}/issues/{number}/comments {body}"));
                    (axum::http::StatusCode::CREATED, Json(json!({ "id": 1, "body": body["body"] })))
                },
            ),
        )
        .route(
            "/repos/{owner}/{repo}/issues/{number}",
            axum::routing::patch(
                |State(seen): State<Seen>,
                 UrlPath((owner, repo, number)): UrlPath<(String, String, u64)>,
                 Json(body): Json<Value>| async move {
                    seen.lock()
                        .unwrap()
                        .push(format!("PATCH /repos/{owner}/{repo}/issues/{number} {body}"));
                    Json(json!({ "number": number, "state": body["state"] }))
                },
            ),
        )
        .with_state(Arc::clone(&seen));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(
            axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            }),
            router,
        )
        .await
    });
    (format!("http://{address}"), seen)
}

/// GitHub's REST API as tools against `base_url`: `github__repos_delete` needs approval, every
/// other tool is allowed.
fn github(base_url: &str) -> Toolkit {
    let document =
        decode_document(&std::fs::read_to_string(github_description()).unwrap()).unwrap();
    let read = read_operations(&document, &ReadOptions::default()).unwrap();
    let source = HttpSource::builder("github", base_url, reqwest::Client::new())
        .operations(read.operations)
        .build()
        .unwrap();
    let definitions = source.definitions();
    Assembly::new()
        .toolkit(&[Member::new(Arc::new(source), definitions)], |_, d| {
            if d.name() == "repos/delete" {
                Decision::Approve
            } else {
                Decision::Allow
            }
        })
        .unwrap()
}

#[tokio::test]
async fn github_in_code_mode_with_search_does_a_three_step_task_in_one_run() {
    let (base_url, seen) = github_stand_in().await;
    let toolkit = code_mode(&github(&base_url), Declarations::Auto);
    assert_eq!(
        names(&toolkit),
        ["execute", "search_tools", "github__repos_delete"]
    );

    // The scripted model searches twice…
    let first = toolkit
        .call(
            "search_tools",
            json!({ "query": "list the issues of a repository" }),
        )
        .await
        .unwrap();
    let first = first["declarations"].as_str().unwrap().to_owned();
    assert!(
        first.contains("\"github__issues_list-for-repo\"(input: {"),
        "{first}"
    );
    assert!(first.contains("labels?: string;"), "{first}");
    let second = toolkit
        .call(
            "search_tools",
            // The names seen in the first answer (`github__issues_<verb>`) make the update
            // tool's name a safe guess: asked for by name beside the query.
            json!({ "query": "create an issue comment", "names": ["github__issues_update"] }),
        )
        .await
        .unwrap();
    let second = second["declarations"].as_str().unwrap().to_owned();
    assert!(
        second.contains("\"github__issues_create-comment\"(input: {"),
        "{second}"
    );
    assert!(
        second.contains("  github__issues_update(input: {"),
        "{second}"
    );
    assert!(!first.contains("github__repos_delete") && !second.contains("github__repos_delete"));

    // …the declarations it was given are TypeScript that type-checks, with its code against it…
    let code = r#"
const issues = await tools["github__issues_list-for-repo"]({ owner: "o", repo: "r", labels: "bug", state: "open" });
const oldest = issues.reduce((a, b) => (a.created_at <= b.created_at ? a : b));
await tools["github__issues_create-comment"]({ owner: "o", repo: "r", issue_number: oldest.number, body: { body: "Closing: fixed." } });
const closed = await tools["github__issues_update"]({ owner: "o", repo: "r", issue_number: oldest.number, body: { state: "closed" } });
const repo = await tools["github__repos_get"]({ owner: "o", repo: "r" });
return { closed: closed.number, state: closed.state, repo: repo.full_name };
"#;
    let typed = format!(
        "{}\n{}\nasync function task(): Promise<void> {{\n\
         await found1[\"github__issues_list-for-repo\"]({{ owner: \"o\", repo: \"r\", labels: \"bug\", state: \"open\" }});\n\
         await found2[\"github__issues_create-comment\"]({{ owner: \"o\", repo: \"r\", issue_number: 7, body: {{ body: \"Closing: fixed.\" }} }});\n\
         await found2[\"github__issues_update\"]({{ owner: \"o\", repo: \"r\", issue_number: 7, body: {{ state: \"closed\" }} }});\n}}\n",
        first.replacen("declare const tools", "declare const found1", 1),
        second.replacen("declare const tools", "declare const found2", 1),
    );
    type_check(&typed).unwrap_or_else(|complaints| panic!("{complaints}\n{typed}"));

    // …and one `execute` does the task, calling a tool it never searched for besides.
    let run = toolkit
        .call("execute", json!({ "code": code }))
        .await
        .unwrap();
    assert_eq!(
        run["result"],
        json!({ "closed": 7, "state": "closed", "repo": "o/r" })
    );
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            "GET /repos/o/r/issues labels=bug&state=open",
            "POST /repos/o/r/issues/7/comments {\"body\":\"Closing: fixed.\"}",
            "PATCH /repos/o/r/issues/7 {\"state\":\"closed\"}",
            "GET /repos/o/r",
        ]
    );

    // A tool that needs approval is not callable from code.
    let refused = toolkit
        .call(
            "execute",
            json!({ "code": "return await tools.github__repos_delete({ owner: 'o', repo: 'r' });" }),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code, "CodeError");
}

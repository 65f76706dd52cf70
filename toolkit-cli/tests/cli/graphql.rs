//! `toolkit-gen report --graphql` and `call --graphql --endpoint`, run as a user runs them,
//! against graphql-yoga serving GitHub's schema with mocked resolvers (`scripts/graphql-mock.mjs`,
//! installed by `scripts/install-test-peers`), which validates every query it gets; and the
//! gateway introspecting json-graphql-server, whose mutations change what its queries answer.

use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::support::{free_port, peer, root, run};

/// GitHub's introspection result, as `@octokit/graphql-schema` ships it.
fn github() -> String {
    peer("graphql-npm/node_modules/@octokit/graphql-schema/schema.json")
}

/// A node server on a free port, killed when dropped.
struct Server(Child, u16);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Server {
    /// Runs `script` with `arguments` (the port given by `port_arguments`), waiting for its
    /// first line, which must contain `ready`.
    fn start(script: PathBuf, arguments: &[&str], port_arguments: &[&str], ready: &str) -> Self {
        let port = free_port();
        let port_text = port.to_string();
        let mut child = Command::new("node")
            .arg(script)
            .args(arguments)
            .args(port_arguments.iter().map(|argument| {
                if *argument == "PORT" {
                    port_text.as_str()
                } else {
                    argument
                }
            }))
            .env("GRAPHQL_NPM", peer("graphql-npm"))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        stdout.read_line(&mut line).unwrap();
        assert!(line.contains(ready), "the server did not start: {line}");
        Self(child, port)
    }
}

/// graphql-yoga serving GitHub's schema with mocked resolvers.
fn yoga() -> Server {
    Server::start(
        root().join("scripts/graphql-mock.mjs"),
        &[],
        &["PORT"],
        "listening",
    )
}

#[test]
fn report_lists_the_tools_of_a_schema_or_where_it_is_wrong() {
    let (code, stdout, stderr) = run(&["report", "--graphql", &github()]);
    assert_eq!(code, 0, "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["tools"].as_array().unwrap().len(), 272);
    assert_eq!(report["tools"][0]["readOnly"], true);

    let dir = std::env::temp_dir().join(format!("toolkit-gen-graphql-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.graphql");
    std::fs::write(&bad, "type Query {\n  a: Missing\n}\n").unwrap();
    let (code, _, stderr) = run(&["report", "--graphql", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("bad.graphql:2:6: "), "{stderr}");

    // The typed module of the same schema, its catalog beside it.
    let module = dir.join("github.rs");
    let (code, _, stderr) = run(&["graphql", &github(), "-o", module.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let written = std::fs::read_to_string(&module).unwrap();
    assert!(
        written.contains("pub struct RepositoryInput"),
        "{}",
        &written[..500]
    );
    assert!(dir.join("github.tools.json").is_file());
    let (code, _, stderr) = run(&["graphql", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("bad.graphql"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn call_sends_a_tool_of_a_schema_to_its_endpoint() {
    let yoga = yoga();
    let endpoint = format!("http://127.0.0.1:{}/graphql", yoga.1);
    let schema = github();
    let call = |name: &str, input: &str| {
        run(&[
            "call",
            "--graphql",
            &schema,
            "--endpoint",
            &endpoint,
            name,
            input,
        ])
    };
    let (code, stdout, stderr) = call(
        "repository",
        r#"{"owner": "o", "name": "n", "selection": "name"}"#,
    );
    assert_eq!(code, 0, "{stdout} {stderr}");
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    assert!(answer["repository"]["name"].is_string(), "{answer}");

    let (code, stdout, _) = call(
        "repository",
        r#"{"owner": "o", "name": "n", "selection": "nope"}"#,
    );
    assert_eq!(code, 1);
    let failure: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(failure["code"], "InvalidInputError", "{failure}");

    // The endpoint's URL in place of a schema: introspected, the requests sent there.
    let (code, stdout, stderr) = run(&["report", "--graphql", &endpoint]);
    assert_eq!(code, 0, "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["tools"].as_array().unwrap().len(), 272);
    let (code, stdout, stderr) = run(&[
        "call",
        "--graphql",
        &endpoint,
        "repository",
        r#"{"owner": "o", "name": "n", "selection": "name"}"#,
    ]);
    assert_eq!(code, 0, "{stdout} {stderr}");
    assert!(stdout.contains("\"repository\""), "{stdout}");
    // A schema file needs its endpoint.
    let (code, _, stderr) = run(&["call", "--graphql", &schema, "repository", "{}"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--endpoint URL is needed"), "{stderr}");
}

/// json-graphql-server over a JSON file of posts (written into `dir`): a GraphQL API whose
/// mutations change what its queries answer.
fn json_graphql(dir: &std::path::Path) -> Server {
    let data = dir.join("blog.cjs");
    std::fs::write(
        &data,
        "module.exports = { posts: [{ id: 1, title: 'Hello', views: 10, user_id: 1 }], \
         users: [{ id: 1, name: 'Ada' }] };\n",
    )
    .unwrap();
    Server::start(
        peer("graphql-npm/node_modules/json-graphql-server/bin/json-graphql-server.cjs").into(),
        &[data.to_str().unwrap()],
        &["--port", "PORT", "--host", "127.0.0.1"],
        "running",
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_introspects_a_graphql_endpoint_whose_mutations_change_its_data() {
    use toolkit_runtime::{CallContext, ToolSource};

    let dir = std::env::temp_dir().join(format!(
        "toolkit-gateway-graphql-live-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let blog = json_graphql(&dir);
    let served = crate::support::gateway(
        &dir,
        &format!(
            r#"
[policy]
default = "allow"

[[sources]]
name = "blog"
graphql = "http://127.0.0.1:{}/"
"#,
            blog.1
        ),
    );
    let definitions = served.discover().await.unwrap();
    let names: Vec<&str> = definitions
        .iter()
        .map(|definition| definition.name())
        .collect();
    for name in [
        "blog__allPosts",
        "blog__createPost",
        "blog__updatePost",
        "blog__removePost",
    ] {
        assert!(names.contains(&name), "{names:?}");
    }
    let input = |value: Value| value.as_object().cloned().unwrap();
    let context = CallContext::new();
    let created = served
        .call(
            "blog__createPost",
            input(serde_json::json!({"title": "Written by an agent", "views": 0, "user_id": "1"})),
            &context,
        )
        .await
        .unwrap();
    assert!(
        created.to_string().contains("Written by an agent"),
        "{created}"
    );
    let listed = served
        .call("blog__allPosts", input(serde_json::json!({})), &context)
        .await
        .unwrap();
    let listed = listed.to_string();
    assert!(
        listed.contains("Hello") && listed.contains("Written by an agent"),
        "{listed}"
    );
    served
        .call(
            "blog__removePost",
            input(serde_json::json!({"id": "1"})),
            &context,
        )
        .await
        .unwrap();
    let listed = served
        .call("blog__allPosts", input(serde_json::json!({})), &context)
        .await
        .unwrap()
        .to_string();
    assert!(
        !listed.contains("Hello") && listed.contains("Written by an agent"),
        "{listed}"
    );
    drop(served);
    drop(blog);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_serves_a_graphql_source_under_its_policy() {
    use toolkit_runtime::{CallContext, ToolSource};

    let yoga = yoga();
    let dir = std::env::temp_dir().join(format!("toolkit-gateway-graphql-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("viewer.graphql"),
        "query Viewer($first: Int = 2) {\n  viewer { login repositories(first: $first) { totalCount } }\n}\n",
    )
    .unwrap();
    let served = crate::support::gateway(
        &dir,
        &format!(
            r#"
[policy]
default = "approve"
rules = [
  {{ source = "github", tool = "repository", decision = "allow" }},
  {{ source = "curated", tool = "Viewer", decision = "allow" }},
]

[[sources]]
name = "github"
graphql = "http://127.0.0.1:{port}/graphql"
schema = "{schema}"

[[sources]]
name = "curated"
graphql = "http://127.0.0.1:{port}/graphql"
schema = "{schema}"
operations = ["viewer.graphql"]
"#,
            port = yoga.1,
            schema = github()
        ),
    );
    let definitions = served.discover().await.unwrap();
    // GitHub's 272 root fields, and the one named operation of the curated source.
    assert_eq!(definitions.len(), 273);
    let input = |value: Value| value.as_object().cloned().unwrap();
    let repository = served
        .call(
            "github__repository",
            input(serde_json::json!({"owner": "o", "name": "n", "selection": "name"})),
            &CallContext::new(),
        )
        .await
        .unwrap();
    assert!(
        repository.to_string().contains("repository"),
        "{repository}"
    );
    let viewer = served
        .call(
            "curated__Viewer",
            input(serde_json::json!({"first": 1})),
            &CallContext::new(),
        )
        .await
        .unwrap();
    // The operation as it is written, its variables the input.
    assert!(viewer.to_string().contains("totalCount"), "{viewer}");
    // A mutation is not read-only: the default policy asks a person, and none can be asked.
    let unasked = served
        .call(
            "github__createIssue",
            input(serde_json::json!({"input": {"repositoryId": "R", "title": "t"}})),
            &CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(
        unasked.to_string().contains("no person could be asked"),
        "{unasked}"
    );
    drop(served);
    let _ = std::fs::remove_dir_all(&dir);
}

//! GraphQL schemas read into tools (toolkit-graphql) and sent by the HTTP source (`HttpSource`),
//! judged by a real GraphQL server: graphql-yoga 5 serving GitHub's public schema (npm
//! `@octokit/graphql-schema`, its introspection `schema.json`) with mocked resolvers
//! (`scripts/graphql-mock.mjs`, installed by `scripts/install-test-peers`). Yoga parses and
//! validates every query and its variables against the schema, so an answer with `data` means
//! the query we built and the variables the model gave were valid.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::{Child, Command};
use toolkit_core::{CallContext, JsonObject, Reason, ToolSource};
use toolkit_graphql::{
    GraphqlSchema, OperationDocument, ReadOptions, ReadTools, SelectionCheck,
    read_operation_documents, read_schema_tools,
};
use toolkit_http::graphql::GraphqlSource;
use toolkit_http::{HttpSource, Operation, client_builder};

use crate::peers::ready_line;
use crate::processes::peers;

fn prefix() -> PathBuf {
    peers().join("graphql-npm")
}

fn github_schema() -> GraphqlSchema {
    let path = prefix().join("node_modules/@octokit/graphql-schema/schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| {
        panic!(
            "{}: {error}: run scripts/install-test-peers",
            path.display()
        )
    });
    GraphqlSchema::read(&text, "schema.json").unwrap_or_else(|error| panic!("{error}"))
}

fn tool<'a>(read: &'a ReadTools, name: &str) -> &'a Operation {
    read.operations
        .iter()
        .find(|operation| operation.name() == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

fn object(value: Value) -> JsonObject {
    value.as_object().cloned().unwrap()
}

#[test]
fn github_schema_reads_into_tools() {
    let read = read_schema_tools(&github_schema(), &ReadOptions::default());
    // 272 in @octokit/graphql-schema 15.26.1: 36 queries and 236 mutations, no subscription.
    assert_eq!(read.operations.len(), 272, "{:?}", read.skipped);
    assert!(read.skipped.is_empty());
    let mutations = read
        .operations
        .iter()
        .filter(|operation| operation.definition.annotations.read_only == Some(false))
        .count();
    assert!(mutations > 200, "{mutations}");

    let repository = tool(&read, "repository");
    let input = Value::Object(repository.definition.input_schema().clone());
    let mut required: Vec<&str> = input["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap())
        .collect();
    required.sort_unstable();
    assert_eq!(required, ["name", "owner"]);
    assert_eq!(input["properties"]["owner"]["type"], "string");
    assert_eq!(input["properties"]["followRenames"]["default"], true);
    assert_eq!(input["additionalProperties"], false);
    assert_eq!(repository.definition.annotations.read_only, Some(true));

    let search = Value::Object(tool(&read, "search").definition.input_schema().clone());
    assert_eq!(
        search["properties"]["type"],
        json!({"$ref": "#/$defs/SearchType"})
    );
    let kinds = search["$defs"]["SearchType"]["enum"].as_array().unwrap();
    assert!(kinds.contains(&json!("REPOSITORY")) && kinds.contains(&json!("ISSUE")));

    let create = tool(&read, "createIssue");
    assert_eq!(create.definition.annotations.read_only, Some(false));
    assert_eq!(create.definition.annotations.destructive, Some(true));
    let input = Value::Object(create.definition.input_schema().clone());
    assert_eq!(input["required"], json!(["input"]));
    let issue_input = &input["$defs"]["CreateIssueInput"];
    assert_eq!(issue_input["additionalProperties"], false);
    let required = issue_input["required"].as_array().unwrap();
    assert!(required.contains(&json!("repositoryId")) && required.contains(&json!("title")));
    assert_eq!(issue_input["properties"]["labelIds"]["type"], "array");
    // Every input schema is one a validator compiles.
    for operation in &read.operations {
        let schema = Value::Object(operation.definition.input_schema().clone());
        assert!(
            jsonschema::validator_for(&schema).is_ok(),
            "{}",
            operation.name()
        );
    }
}

/// The mock server, killed when dropped.
struct Yoga {
    _child: Child,
    port: u16,
}

impl Yoga {
    async fn start() -> Self {
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/graphql-mock.mjs");
        let port = crate::processes::free_port();
        let mut child = Command::new("node")
            .arg(&script)
            .arg(port.to_string())
            .env("GRAPHQL_NPM", prefix())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let ready = ready_line(&mut child, Duration::from_secs(60), |line| {
            (line.trim() == "listening").then_some(())
        })
        .await;
        assert!(ready.is_some(), "the GraphQL mock did not start");
        Self {
            _child: child,
            port,
        }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}/graphql", self.port)
    }

    /// How many GraphQL requests the server has had.
    async fn requests(&self) -> u64 {
        let answer: Value = reqwest::get(format!("http://127.0.0.1:{}/count", self.port))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        answer["count"].as_u64().unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn yoga_accepts_what_the_tools_send() {
    let schema = github_schema();
    let read = read_schema_tools(&schema, &ReadOptions::default());
    let yoga = Yoga::start().await;
    let http = HttpSource::builder("github", yoga.endpoint(), client_builder().build().unwrap())
        .operations(read.operations.clone())
        .build()
        .unwrap();
    let source = SelectionCheck::new(Arc::new(http), &schema, &read.operations);
    let context = CallContext::new();

    // A query with its default selection (scalars two levels deep): yoga validates it.
    let repository = source
        .call(
            "repository",
            object(json!({"owner": "octo", "name": "hello"})),
            &context,
        )
        .await
        .unwrap();
    let answered = &repository["repository"];
    assert!(answered["name"].is_string(), "{repository}");
    assert!(answered["owner"]["login"].is_string(), "{repository}");
    assert!(answered["stargazerCount"].is_i64(), "{repository}");

    // A mutation with an input object.
    let created = source
        .call(
            "createIssue",
            object(json!({"input": {"repositoryId": "R_1", "title": "Bug", "labelIds": ["L_1"]}})),
            &context,
        )
        .await
        .unwrap();
    assert!(created["createIssue"].is_object(), "{created}");

    // A selection the model wrote: exactly those fields.
    let chosen = source
        .call(
            "repository",
            object(json!({"owner": "o", "name": "n", "selection": "{ name owner { login } }"})),
            &context,
        )
        .await
        .unwrap();
    let fields: Vec<&String> = chosen["repository"].as_object().unwrap().keys().collect();
    assert_eq!(fields, ["name", "owner"]);
    assert_eq!(yoga.requests().await, 3);

    // A selection that does not fit the schema is refused before any request, with the
    // compiler's words; one that would leave its field too.
    for (selection, words) in [
        ("name nope", "nope"),
        ("name owner", "subselection"),
        ("name } } mutation X { deleteIssue", "not one selection set"),
    ] {
        let refused = source
            .call(
                "repository",
                object(json!({"owner": "o", "name": "n", "selection": selection})),
                &context,
            )
            .await
            .unwrap_err();
        assert!(
            matches!(refused.reason, Reason::InvalidInput { .. }),
            "{refused:?}"
        );
        assert!(
            refused.model_message().contains(words),
            "{}",
            refused.model_message()
        );
    }
    assert_eq!(
        yoga.requests().await,
        3,
        "a refused selection made a request"
    );

    // `errors` beside `data` (the mock's codeOfConduct fails): a success carrying both.
    let partial = source
        .call("codeOfConduct", object(json!({"key": "x"})), &context)
        .await
        .unwrap();
    assert_eq!(partial["data"], json!({"codeOfConduct": null}), "{partial}");
    assert_eq!(partial["errors"][0]["message"], "no code of conduct here");

    // `errors` and no `data` (variables the server refuses, past no input check here): a
    // failure the model reads, with the server's words.
    let failed = source
        .call(
            "repository",
            object(json!({"owner": 1, "name": "n"})),
            &context,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(failed.reason, Reason::CallFailed { .. }),
        "{failed:?}"
    );
    assert!(
        failed.model_message().contains("owner"),
        "{}",
        failed.model_message()
    );

    // Operations mode: a named operation of a .graphql file, sent as it is written.
    let documents = [OperationDocument::new(
        "viewer.graphql",
        "query Viewer($first: Int = 2) {\n  viewer { login repositories(first: $first) { totalCount nodes { name } } }\n}",
    )];
    let read = read_operation_documents(&schema, &documents, &ReadOptions::default());
    assert!(read.problems.is_empty(), "{:?}", read.problems);
    let http = HttpSource::builder("github", yoga.endpoint(), client_builder().build().unwrap())
        .operations(read.operations)
        .build()
        .unwrap();
    let viewer = http
        .call("Viewer", object(json!({"first": 1})), &context)
        .await
        .unwrap();
    assert!(viewer["viewer"]["login"].is_string(), "{viewer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_without_a_schema_is_introspected_once_at_first_use() {
    let yoga = Yoga::start().await;
    let source =
        GraphqlSource::builder("github", yoga.endpoint(), client_builder().build().unwrap())
            .build()
            .unwrap();
    assert_eq!(yoga.requests().await, 0, "introspected before any use");

    // Two listings at once wait for one introspection.
    let (first, second) = tokio::join!(source.discover(), source.discover());
    let (first, second) = (first.unwrap(), second.unwrap());
    assert_eq!(yoga.requests().await, 1);
    assert_eq!(first, second);
    // The same tools as the schema file's, input schemas and all.
    let from_file = read_schema_tools(&github_schema(), &ReadOptions::default());
    assert_eq!(first.len(), from_file.operations.len());
    for (introspected, read) in first.iter().zip(&from_file.operations) {
        assert_eq!(introspected, &read.definition, "{}", read.name());
    }

    let answered = source
        .call(
            "repository",
            object(json!({"owner": "o", "name": "n", "selection": "name owner { login }"})),
            &CallContext::new(),
        )
        .await
        .unwrap();
    assert!(
        answered["repository"]["owner"]["login"].is_string(),
        "{answered}"
    );
    // A selection is checked against the introspected schema before any request.
    let refused = source
        .call(
            "repository",
            object(json!({"owner": "o", "name": "n", "selection": "nope"})),
            &CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(refused.reason, Reason::InvalidInput { .. }),
        "{refused:?}"
    );
    assert_eq!(yoga.requests().await, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_introspection_over_its_cap_or_unreached_fails_and_is_tried_again() {
    let yoga = Yoga::start().await;
    // GitHub's introspection answer is about 5 MB.
    let capped =
        GraphqlSource::builder("github", yoga.endpoint(), client_builder().build().unwrap())
            .max_schema_length(1 << 20)
            .build()
            .unwrap();
    let refused = capped.discover().await.unwrap_err();
    assert!(
        matches!(refused.reason, Reason::InvalidResponse { .. }),
        "{refused:?}"
    );
    assert!(
        refused
            .reason
            .description()
            .contains("longer than the 1048576 characters read"),
        "{refused}"
    );
    // A call meets the same failure, and the model reads no address.
    let failed = capped
        .call(
            "repository",
            object(json!({"owner": "o", "name": "n"})),
            &CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(failed.reason, Reason::InvalidResponse { .. }),
        "{failed:?}"
    );
    assert!(
        !failed.model_message().contains("127.0.0.1"),
        "{}",
        failed.model_message()
    );
    assert_eq!(
        yoga.requests().await,
        2,
        "a failed introspection is not kept"
    );

    // Nothing listens: unavailable, worth trying again.
    let port = crate::processes::free_port();
    let down = GraphqlSource::builder(
        "down",
        format!("http://127.0.0.1:{port}/graphql"),
        client_builder().build().unwrap(),
    )
    .build()
    .unwrap();
    let unreached = down.discover().await.unwrap_err();
    assert!(unreached.is_retryable(), "{unreached:?}");

    // A server that takes the request and never answers: the timeout ends the wait, worth
    // trying again.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let hanging = GraphqlSource::builder(
        "hanging",
        format!("http://{}/graphql", silent.local_addr().unwrap()),
        client_builder().build().unwrap(),
    )
    .timeout(Duration::from_millis(300))
    .build()
    .unwrap();
    let waited = hanging.discover().await.unwrap_err();
    assert!(waited.is_retryable(), "{waited:?}");
    assert!(
        waited
            .reason
            .description()
            .contains("took longer than 300ms"),
        "{waited}"
    );
    drop(silent);

    // Not GraphQL at all (the mock's /count): no introspection result, said so.
    let wrong = GraphqlSource::builder(
        "wrong",
        format!("http://127.0.0.1:{}/count", yoga.port),
        client_builder().build().unwrap(),
    )
    .build()
    .unwrap();
    let unread = wrong.discover().await.unwrap_err();
    assert!(
        unread.reason.description().contains("no __schema"),
        "{unread}"
    );
    // An endpoint that is no URL is refused when the source is built.
    let built = GraphqlSource::builder(
        "bad",
        "api.example.com/graphql",
        client_builder().build().unwrap(),
    )
    .build();
    assert!(built.unwrap_err().to_string().contains("is no URL"));
}

//! The schema → JSON Schema mapping, the default selection, the query built, and bad input.

#![allow(clippy::panic, clippy::unwrap_used)]

use serde_json::{Value, json};

use crate::{
    GraphqlSchema, MAX_SCHEMA_LENGTH, OperationDocument, ReadOptions, SkipReason,
    read_operation_documents, read_schema_tools,
};

const SDL: &str = r#"
schema { query: Query mutation: Mutation subscription: Subscription }
"A custom scalar."
scalar DateTime
enum State { OPEN CLOSED }
input IssueFilter { states: [State!], since: DateTime, first: Int = 10, nested: IssueFilter }
input CreateIssueInput { repositoryId: ID!, title: String!, body: String, labels: [String!]! }
interface Node { id: ID! }
type User implements Node { id: ID! login: String! avatar(size: Int!): String old: String @deprecated }
type Issue implements Node { id: ID! title: String! state: State! author: User at: DateTime
  comments(first: Int): CommentConnection }
type CommentConnection { totalCount: Int! }
union SearchResult = User | Issue
type Query {
  "An issue by its number."
  issue(owner: String!, number: Int!, filter: IssueFilter): Issue
  search(query: String!): [SearchResult!]!
  node(id: ID!): Node
  count(state: State = OPEN): Int!
  both: Int
}
type CreateIssuePayload { issue: Issue }
type Mutation { createIssue(input: CreateIssueInput!): CreateIssuePayload both: Int }
type Subscription { issueUpdated: Issue }
"#;

fn schema() -> GraphqlSchema {
    GraphqlSchema::read(SDL, "test.graphql").unwrap_or_else(|error| panic!("{error}"))
}

fn tool<'a>(read: &'a crate::ReadTools, name: &str) -> &'a toolkit_openapi::operations::Operation {
    read.operations
        .iter()
        .find(|operation| operation.name() == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

#[test]
fn root_fields_become_tools_and_subscriptions_are_skipped() {
    let read = read_schema_tools(&schema(), &ReadOptions::default());
    let names: Vec<&str> = read
        .operations
        .iter()
        .map(|operation| operation.name())
        .collect();
    assert_eq!(
        names,
        [
            "issue",
            "search",
            "node",
            "count",
            "query_both",
            "createIssue",
            "mutation_both"
        ]
    );
    assert_eq!(read.skipped.len(), 1);
    assert_eq!(read.skipped[0].location, "Subscription.issueUpdated");
    assert_eq!(read.skipped[0].reason, SkipReason::Subscription);
    let issue = &tool(&read, "issue").definition.annotations;
    assert_eq!(
        (issue.read_only, issue.idempotent),
        (Some(true), Some(true))
    );
    let create = &tool(&read, "createIssue").definition.annotations;
    assert_eq!(
        (create.read_only, create.destructive),
        (Some(false), Some(true))
    );
}

#[test]
fn arguments_map_to_a_strict_json_schema() {
    let read = read_schema_tools(&schema(), &ReadOptions::default());
    let input = Value::Object(tool(&read, "issue").definition.input_schema().clone());
    assert_eq!(input["required"], json!(["owner", "number"]));
    assert_eq!(input["additionalProperties"], json!(false));
    assert_eq!(input["properties"]["owner"], json!({"type": "string"}));
    assert_eq!(input["properties"]["number"]["type"], "integer");
    assert_eq!(input["properties"]["number"]["maximum"], i32::MAX);
    assert_eq!(
        input["properties"]["filter"],
        json!({"$ref": "#/$defs/IssueFilter"})
    );
    let filter = &input["$defs"]["IssueFilter"];
    assert_eq!(filter["additionalProperties"], json!(false));
    assert_eq!(
        filter["properties"]["states"],
        json!({"type": "array", "items": {"$ref": "#/$defs/State"}})
    );
    assert_eq!(filter["properties"]["first"]["default"], 10);
    assert_eq!(
        filter["properties"]["nested"],
        json!({"$ref": "#/$defs/IssueFilter"})
    );
    assert_eq!(filter["properties"]["since"]["type"], "string");
    assert!(
        filter["properties"]["since"]["description"]
            .as_str()
            .unwrap()
            .contains("DateTime")
    );
    assert_eq!(
        input["$defs"]["State"],
        json!({"type": "string", "enum": ["OPEN", "CLOSED"]})
    );
    assert_eq!(input["properties"]["selection"]["type"], "string");

    let create = Value::Object(tool(&read, "createIssue").definition.input_schema().clone());
    assert_eq!(create["required"], json!(["input"]));
    let payload = &create["$defs"]["CreateIssueInput"];
    assert_eq!(
        payload["required"],
        json!(["repositoryId", "title", "labels"])
    );
    assert_eq!(
        payload["properties"]["repositoryId"],
        json!({"type": "string", "description": "ID"})
    );

    // A non-null argument with a default is not required, and its variable is nullable.
    let count = tool(&read, "count");
    assert!(count.definition.input_schema().get("required").is_none());
    let query = &count.request.graphql.as_ref().unwrap().query;
    assert_eq!(query, "query count($state: State) { count(state: $state) }");
    // A scalar answer takes no selection.
    assert!(count.request.graphql.as_ref().unwrap().selection.is_none());
}

#[test]
fn the_default_selection_skips_required_arguments_and_deprecations() {
    let read = read_schema_tools(&schema(), &ReadOptions::default());
    let graphql = tool(&read, "issue").request.graphql.clone().unwrap();
    assert_eq!(
        graphql.query,
        "query issue($owner: String!, $number: Int!, $filter: IssueFilter) { issue(owner: $owner, \
         number: $number, filter: $filter) { id title state author { id login } at } }"
    );
    assert_eq!(graphql.operation_name, "issue");
    let search = tool(&read, "search").request.graphql.clone().unwrap();
    assert!(
        search
            .query
            .ends_with("{ search(query: $query) { __typename } }")
    );
    let node = tool(&read, "node").request.graphql.clone().unwrap();
    assert!(node.query.ends_with("{ node(id: $id) { __typename id } }"));
    let shallow = read_schema_tools(&schema(), &ReadOptions::default().depth(1).selection(false));
    let issue = tool(&shallow, "issue");
    assert!(
        issue
            .request
            .graphql
            .as_ref()
            .unwrap()
            .query
            .ends_with("{ id title state at } }")
    );
    assert!(
        issue.definition.input_schema()["properties"]
            .get("selection")
            .is_none()
    );
}

#[test]
fn a_selection_replaces_the_default_and_stays_inside_its_field() {
    let read = read_schema_tools(&schema(), &ReadOptions::default());
    let graphql = tool(&read, "issue").request.graphql.clone().unwrap();
    let with = graphql
        .query_for(Some("{ title author { login } }"))
        .unwrap();
    assert!(
        with.ends_with("filter: $filter) { title author { login } } }"),
        "{with}"
    );
    for bad in [
        "title } } mutation X { createIssue",
        "title {",
        "title \"}",
        "   ",
    ] {
        assert!(graphql.query_for(Some(bad)).is_err(), "{bad}");
    }
    // Braces inside strings and comments do not count.
    assert!(graphql.query_for(Some("title # }\n")).is_ok());
}

#[test]
fn introspection_and_sdl_read_the_same_tools() {
    // The introspection result of the same schema, as a server answers it (written by hand for
    // a small schema: the introspection reader is checked on GitHub's in the runtime tests).
    let introspection = json!({"data": {"__schema": {
    "queryType": {"name": "Query"}, "mutationType": null, "subscriptionType": null,
    "types": [
        {"kind": "OBJECT", "name": "Query", "description": null, "interfaces": [], "fields": [
            {"name": "user", "description": "A \"user\".", "isDeprecated": false, "args": [
                {"name": "login", "description": null, "defaultValue": null,
                 "type": {"kind": "NON_NULL", "ofType": {"kind": "SCALAR", "name": "String"}}}],
             "type": {"kind": "OBJECT", "name": "User"}}]},
        {"kind": "OBJECT", "name": "User", "interfaces": [], "fields": [
            {"name": "login", "args": [], "type": {"kind": "SCALAR", "name": "String"}},
            {"name": "kind", "args": [], "type": {"kind": "ENUM", "name": "Kind"},
             "isDeprecated": true, "deprecationReason": "gone"}]},
        {"kind": "ENUM", "name": "Kind", "enumValues": [{"name": "A"}, {"name": "B"}]},
        {"kind": "SCALAR", "name": "String"},
        {"kind": "OBJECT", "name": "__Schema", "fields": []}
    ]}}});
    let schema = GraphqlSchema::read(&introspection.to_string(), "intro.json")
        .unwrap_or_else(|error| panic!("{error}"));
    let read = read_schema_tools(&schema, &ReadOptions::default());
    assert_eq!(read.operations.len(), 1);
    let graphql = read.operations[0].request.graphql.clone().unwrap();
    assert_eq!(
        graphql.query,
        "query user($login: String!) { user(login: $login) { login } }"
    );
}

#[test]
fn bad_input_is_a_located_problem_never_a_panic() {
    let error = GraphqlSchema::read("type Query {\n  a: Missing\n}", "bad.graphql").unwrap_err();
    assert_eq!(error.problems[0].file, "bad.graphql");
    assert_eq!((error.problems[0].line, error.problems[0].column), (2, 6));
    assert!(
        error
            .to_string()
            .starts_with("the GraphQL schema cannot be read: bad.graphql:2:6: ")
    );

    let error = GraphqlSchema::read("{\"data\": {\n  \"__schema\": [}", "bad.json").unwrap_err();
    assert_eq!(error.problems[0].line, 2);
    let error = GraphqlSchema::read("{\"data\": {}}", "empty.json").unwrap_err();
    assert!(
        error.problems[0]
            .message
            .contains("no introspection result")
    );
    let injected = json!({"__schema": {"queryType": {"name": "Query"}, "types": [
        {"kind": "OBJECT", "name": "Query { a: Int } type X", "fields": []}]}});
    let error = GraphqlSchema::read(&injected.to_string(), "injected.json").unwrap_err();
    assert!(error.problems[0].message.contains("no GraphQL name"));

    let huge = " ".repeat(MAX_SCHEMA_LENGTH + 1);
    let error = GraphqlSchema::read(&huge, "huge.json").unwrap_err();
    assert!(error.problems[0].message.contains("more than"));

    for text in [
        "",
        "{",
        "type",
        "\u{0}",
        "schema { query: Nope }",
        "[[[[[",
        "{\"__schema\": {\"types\": [{\"kind\": \"OBJECT\", \"name\": \"Q\", \"fields\": [{\"name\": \"a\", \"type\": {\"kind\": \"LIST\"}}]}]}}",
    ] {
        assert!(GraphqlSchema::read(text, "x").is_err(), "{text:?}");
    }
}

#[test]
fn operations_mode_reads_named_operations_and_locates_the_rest() {
    let documents = [
        OperationDocument::new(
            "ops.graphql",
            "query Issue($owner: String!, $number: Int!, $states: [State!] = [OPEN]) {\n  \
             issue(owner: $owner, number: $number, filter: {states: $states}) { ...Parts }\n}\n\
             fragment Parts on Issue { title }\n\
             mutation Create($input: CreateIssueInput!) { createIssue(input: $input) { issue { id } } }\n\
             subscription Updates { issueUpdated { id } }",
        ),
        OperationDocument::new("anonymous.graphql", "\n{ count }"),
        OperationDocument::new("invalid.graphql", "query Bad {\n  issue { title }\n}"),
        OperationDocument::new(
            "manifest.json",
            json!({"format": "apollo-persisted-query-manifest", "version": 1, "operations": [
                {"id": "1", "name": "Count", "type": "query", "body": "query Count { count }"}]})
            .to_string(),
        ),
    ];
    let read = read_operation_documents(&schema(), &documents, &ReadOptions::default());
    let names: Vec<&str> = read
        .operations
        .iter()
        .map(|operation| operation.name())
        .collect();
    assert_eq!(names, ["Issue", "Create", "Count"]);
    let issue = tool(&read, "Issue");
    let input = Value::Object(issue.definition.input_schema().clone());
    assert_eq!(input["required"], json!(["owner", "number"]));
    assert_eq!(input["properties"]["states"]["default"], json!(["OPEN"]));
    assert_eq!(
        issue.request.graphql.as_ref().unwrap().query,
        documents[0].text
    );
    assert_eq!(
        tool(&read, "Create").definition.annotations.read_only,
        Some(false)
    );
    assert_eq!(read.skipped[0].reason, SkipReason::Subscription);
    assert_eq!(read.skipped[0].location, "ops.graphql:6:1");
    let located: Vec<(&str, usize)> = read
        .problems
        .iter()
        .map(|problem| (problem.file.as_str(), problem.line))
        .collect();
    // The invalid one: `issue` lacks its two required arguments, each a problem.
    assert_eq!(
        located,
        [
            ("anonymous.graphql", 2),
            ("invalid.graphql", 2),
            ("invalid.graphql", 2)
        ]
    );
}

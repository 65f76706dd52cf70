//! An OpenAPI operation served with its answer's `outputSchema`: listed, a conforming answer
//! served as structured content, a non-conforming one as an error result that says where and
//! carries the whole answer — the API a Petstore on 127.0.0.1.

use std::sync::Arc;

use axum::Router;
use axum::extract::Path;
use axum::routing::get;
use serde_json::{Value, json};
use toolkit_core::{Toolkit, ToolkitOptions};
use toolkit_http::HttpSource;
use toolkit_openapi::{ReadOptions, read_operations};
use toolkit_serve::McpServer;
use toolkit_serve::testing::InProcessClient;

/// A Petstore whose pet 1 is as documented and pet 2 has a name that is a number.
async fn petstore() -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = Router::new()
        .route(
            "/pets/{id}",
            get(|Path(id): Path<u32>| async move {
                let pet = match id {
                    1 => json!({"id": 1, "name": "Rex", "status": "available", "extra": true}),
                    _ => json!({"id": id, "name": 7, "status": "available"}),
                };
                axum::Json(pet)
            }),
        )
        .route(
            "/pets",
            get(|| async { axum::Json(json!([{"id": 1, "name": "Rex"}])) }),
        );
    let server = tokio::spawn(async move {
        let _ = axum::serve(
            axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            }),
            app,
        )
        .await;
    });
    (base, server)
}

fn document() -> Value {
    json!({
        "openapi": "3.0.3",
        "info": {"title": "Pets", "version": "1"},
        "paths": {
            "/pets/{id}": {"get": {
                "operationId": "getPet",
                "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}],
                "responses": {
                    "200": {"description": "The pet.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}},
                    "default": {"description": "An error.", "content": {"application/json": {"schema": {"type": "object"}}}}
                }
            }},
            "/pets": {"get": {
                "operationId": "listPets",
                "responses": {"200": {"description": "Pets.", "content": {"application/json": {"schema": {
                    "type": "array", "items": {"$ref": "#/components/schemas/Pet"}
                }}}}}
            }}
        },
        "components": {"schemas": {
            "Pet": {
                "type": "object", "required": ["id", "name"],
                "properties": {
                    "id": {"type": "integer"},
                    "name": {"type": "string"},
                    "category": {"$ref": "#/components/schemas/Category"},
                    "status": {"type": "string", "enum": ["available", "sold"]}
                }
            },
            "Category": {"type": "object", "properties": {"name": {"type": "string"}}}
        }}
    })
}

#[tokio::test]
async fn serve_an_openapi_answer_is_checked_against_its_output_schema() {
    let (base, server) = petstore().await;
    let read = read_operations(&document(), &ReadOptions::default()).unwrap();
    // Both answers are recorded; only the object one is an outputSchema.
    assert_eq!(read.answers.len(), 2);
    assert_eq!(read.answers["getPet"]["$ref"], "#/$defs/Pet");
    assert_eq!(read.answers["listPets"]["type"], "array");
    let source = Arc::new(
        HttpSource::builder("petstore", base, reqwest::Client::new())
            .operations(read.operations)
            .build()
            .unwrap(),
    );
    let toolkit = Toolkit::from_source(
        source.clone(),
        source.definitions(),
        &ToolkitOptions::default(),
    )
    .unwrap();
    let mut client = InProcessClient::start(McpServer::new(toolkit).name("pets"));
    client.initialize().await.unwrap();

    let listed = client.list_tools().await.unwrap();
    let tools = listed["tools"].as_array().unwrap();
    let get_pet = tools.iter().find(|tool| tool["name"] == "getPet").unwrap();
    let output = &get_pet["outputSchema"];
    assert_eq!(output["type"], "object");
    assert_eq!(output["required"], json!(["id", "name"]));
    assert_eq!(
        output["properties"]["category"],
        json!({"$ref": "#/$defs/Category"})
    );
    assert!(output["$defs"]["Category"].is_object(), "{output}");
    let list_pets = tools
        .iter()
        .find(|tool| tool["name"] == "listPets")
        .unwrap();
    assert!(list_pets.get("outputSchema").is_none(), "{list_pets}");

    // A conforming answer (an unknown property is no fault): structured content, no error.
    let served = client.call("getPet", json!({"id": 1})).await.unwrap();
    assert_eq!(served["isError"], json!(false), "{served}");
    assert_eq!(served["structuredContent"]["name"], "Rex");

    // A non-conforming one: an error result naming the place, with the whole answer.
    let served = client.call("getPet", json!({"id": 2})).await.unwrap();
    assert_eq!(served["isError"], json!(true), "{served}");
    assert!(served.get("structuredContent").is_none(), "{served}");
    let text = served["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("The API's answer does not match the tool's output schema (at /name: 7 is not of type \"string\")"),
        "{text}"
    );
    let (_, whole) = text.split_once("The whole answer:\n").unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(whole).unwrap(),
        json!({"id": 2, "name": 7, "status": "available"})
    );
    assert!(!text.contains("127.0.0.1"), "{text}");

    // A list answer has no outputSchema and is served as before.
    let served = client.call("listPets", json!({})).await.unwrap();
    assert_eq!(served["isError"], json!(false), "{served}");
    client.close().await.unwrap();
    server.abort();
}

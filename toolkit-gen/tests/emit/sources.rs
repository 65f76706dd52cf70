//! Generated source types: the modules of a Petstore document and of an MCP snapshot, written to
//! `golden/petstore.rs` and `golden/tasks.rs` (`TOOLKIT_GEN_BLESS=1` rewrites them), compiled
//! here, and run: typed calls against a Petstore on 127.0.0.1, and the conformance suite of
//! `toolkit_runtime::conformance` over the generated source.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::{Request, State as Axum};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use toolkit_gen::emit::{EmitOptions, SourceOptions, mcp_source, openapi_source};
use toolkit_gen::inputs::read_snapshot;
use toolkit_http::codegen::reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use toolkit_runtime::conformance::{self, ClosedPort, Fixture, State, Subject};
use toolkit_runtime::http::{Credential, Credentials, client_builder};
use toolkit_runtime::openapi::{ReadOptions, decode_document, read_operations};
use toolkit_runtime::{BoxFuture, Reason, ToolSource};

use crate::common::here;
use crate::golden::check_golden;

/// The Petstore golden, compiled here.
#[allow(dead_code)]
mod petstore {
    include!("golden/petstore.rs");
}

/// The MCP snapshot golden, compiled here.
#[allow(dead_code)]
mod tasks {
    include!("golden/tasks.rs");
}

fn petstore_module() -> String {
    let text = std::fs::read_to_string(here("fixtures/petstore.yaml")).unwrap();
    let document = decode_document(&text).unwrap();
    let read = read_operations(&document, &ReadOptions::default()).unwrap();
    assert!(read.skipped.is_empty(), "{:?}", read.skipped);
    // As the builder does: the operations the document marks deprecated.
    let mut source = SourceOptions::new("petstore");
    source.deprecated = toolkit_gen::inputs::deprecated_tools(&document, &read);
    openapi_source(
        "fixtures/petstore.yaml",
        &read,
        &source,
        &EmitOptions::default(),
    )
    .code
}

#[test]
fn a_deprecated_operation_s_method_is_deprecated() {
    let code = flat(&petstore_module());
    assert!(code.contains("#[deprecated]pubasyncfnfailing("), "{code}");
    assert_eq!(code.matches("#[deprecated]").count(), 1);
}

fn tasks_module() -> String {
    let definitions = read_snapshot(&here("fixtures/tasks.json")).unwrap();
    mcp_source(
        "fixtures/tasks.json",
        &definitions,
        &SourceOptions::new("tasks"),
        &EmitOptions::default(),
    )
    .code
}

#[test]
fn the_petstore_source_matches_its_golden() {
    check_golden("petstore", &petstore_module());
}

#[test]
fn the_snapshot_source_matches_its_golden() {
    check_golden("tasks", &tasks_module());
}

#[test]
fn source_modules_are_deterministic() {
    assert_eq!(petstore_module(), petstore_module());
    assert_eq!(tasks_module(), tasks_module());
}

/// `code` without whitespace, for looking up a signature however it was wrapped.
fn flat(code: &str) -> String {
    code.split_whitespace().collect()
}

#[test]
fn renames_and_the_name_limit_shape_rust_names_not_tool_names() {
    let definitions = read_snapshot(&here("fixtures/tasks.json")).unwrap();
    let mut options = SourceOptions::new("tasks");
    options
        .renames
        .insert("delete-task".to_owned(), "remove".to_owned());
    let code = flat(
        &mcp_source(
            "tasks.json",
            &definitions,
            &options,
            &EmitOptions::default(),
        )
        .code,
    );
    assert!(code.contains("pubasyncfnremove(&self,input:RemoveInput"));
    assert!(code.contains("call_typed(&self.0,\"delete-task\",&input)"));
    // Cut to 4 characters: `list_tasks` is `list`, `add_task` `add_` (so `add`), `remove` `remo`.
    options.max_name_length = Some(4);
    let code = flat(
        &mcp_source(
            "tasks.json",
            &definitions,
            &options,
            &EmitOptions::default(),
        )
        .code,
    );
    assert!(code.contains("pubasyncfnlist(&self,input:ListInput"));
    assert!(code.contains("pubasyncfnadd(&self,input:AddInput"));
    assert!(code.contains("pubasyncfnremo(&self,input:RemoInput"));
    assert!(code.contains("call_typed(&self.0,\"list_tasks\",&input)"));
}

#[test]
fn the_snapshot_source_reports_its_tools_without_a_server() {
    let command = toolkit_runtime::mcp::StdioCommand::new("/nonexistent/tasks-server");
    let source = tasks::Tasks::stdio(command).unwrap();
    let names: Vec<&str> = source.definitions().iter().map(|d| d.name()).collect();
    assert_eq!(names, ["list_tasks", "add_task", "delete-task"]);
    assert_eq!(ToolSource::name(&source), "tasks");
    let definitions = block_on(ToolSource::discover(&source)).unwrap();
    assert_eq!(definitions.len(), 3);
    assert!(
        definitions[2].annotations.hints().destructive,
        "hints are the snapshot's"
    );
}

/// Runs a future that needs no reactor to completion.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(future)
}

const SECRET: &str = "pk-4f1c2e9b";

/// What the Petstore on 127.0.0.1 does with each request.
#[derive(Clone)]
struct System {
    state: State,
    blocking_ended: Arc<AtomicBool>,
}

struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn query(request: &Request, key: &str) -> Option<String> {
    request.uri().query()?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == key).then(|| v.replace('+', " ").replace("%20", " "))
    })
}

async fn serve(Axum(system): Axum<System>, request: Request) -> Response {
    match system.state {
        State::Unauthorized => return (StatusCode::UNAUTHORIZED, "bad token").into_response(),
        State::Unavailable => return (StatusCode::SERVICE_UNAVAILABLE, "down").into_response(),
        State::Working | State::Unreachable => {}
    }
    let authorized = request.headers().get(header::AUTHORIZATION)
        == Some(&HeaderValue::from_str(&format!("Bearer {SECRET}")).unwrap());
    if !authorized {
        return (StatusCode::UNAUTHORIZED, "no token").into_response();
    }
    let path = request.uri().path().to_owned();
    match (request.method().as_str(), path.as_str()) {
        ("GET", "/v1/echo") => {
            axum::Json(json!({ "text": query(&request, "text").unwrap_or_default() }))
                .into_response()
        }
        ("POST", "/v1/failing") => (
            StatusCode::UNPROCESSABLE_ENTITY,
            "The failing tool failed, as it does.",
        )
            .into_response(),
        ("GET", "/v1/blocking") => {
            let _ended = SetOnDrop(Arc::clone(&system.blocking_ended));
            std::future::pending::<()>().await;
            StatusCode::OK.into_response()
        }
        ("GET", "/v1/pets") => {
            let limit: usize = query(&request, "limit")
                .and_then(|l| l.parse().ok())
                .unwrap_or(10);
            let pets = [
                json!({ "id": 1, "name": "Rex", "tag": "dog" }),
                json!({ "id": 2, "name": "Tom", "tag": "cat" }),
            ];
            axum::Json(json!(pets.iter().take(limit).collect::<Vec<_>>())).into_response()
        }
        ("POST", "/v1/pets") => {
            let body = axum::body::to_bytes(request.into_body(), 1 << 16)
                .await
                .unwrap_or_default();
            let pet: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            (StatusCode::CREATED, axum::Json(json!({ "created": pet }))).into_response()
        }
        ("GET", pet) if pet.starts_with("/v1/pets/") => {
            // A number as the document says; any other id answers with it as a string, which
            // does not fit the answer's type.
            let id = pet.trim_start_matches("/v1/pets/");
            let id = id
                .parse::<i64>()
                .map_or_else(|_| json!(id), |number| json!(number));
            axum::Json(json!({ "id": id, "name": "Rex", "born": "2020" })).into_response()
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Stops the server when the check ends.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A Petstore on 127.0.0.1 in `state`, and the generated source over it.
async fn petstore_over(
    state: State,
) -> Result<(petstore::Petstore, Subject, Arc<AtomicBool>), String> {
    let blocking_ended = Arc::new(AtomicBool::new(false));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let mut address = listener
        .local_addr()
        .map_err(|e| e.to_string())?
        .to_string();
    let (server, closed) = if state == State::Unreachable {
        drop(listener);
        let closed = ClosedPort::new().map_err(|e| e.to_string())?;
        address = closed.address().to_string();
        (None, Some(closed))
    } else {
        let system = System {
            state,
            blocking_ended: Arc::clone(&blocking_ended),
        };
        let app = Router::new().fallback(serve).with_state(system);
        let server = tokio::spawn(async move {
            let _ = axum::serve(
                axum::serve::ListenerExt::tap_io(listener, |tcp| {
                    let _ = tcp.set_nodelay(true);
                }),
                app,
            )
            .await;
        });
        (Some(AbortOnDrop(server)), None)
    };
    let mut headers = HeaderMap::new();
    let mut token = HeaderValue::from_str(&format!("Bearer {SECRET}")).unwrap();
    token.set_sensitive(true);
    headers.insert(AUTHORIZATION, token);
    let client = client_builder()
        .default_headers(headers)
        .build()
        .map_err(|e| e.to_string())?;
    let base_url = format!("http://{address}/v1");
    let source = petstore::Petstore::new(&base_url, client).map_err(|e| e.to_string())?;
    // The conformance suite runs over the credentials the document's scheme says, given to the
    // generated constructor (the other source carries the token as a header of its client).
    let credentials = Credentials::new().with("bearer", Credential::Token(SECRET.to_owned()));
    let subject_source = petstore::Petstore::with_credentials(
        &base_url,
        client_builder().build().map_err(|e| e.to_string())?,
        credentials,
    )
    .map_err(|e| e.to_string())?;
    let ended = Arc::clone(&blocking_ended);
    let subject = Subject {
        source: Arc::new(subject_source),
        secret: SECRET.to_owned(),
        address,
        blocking_ended: Arc::new(move || ended.load(Ordering::SeqCst)),
        discover_asks_system: false,
        system: Box::new((server, closed)),
    };
    Ok((source, subject, blocking_ended))
}

struct GeneratedPetstore;

impl Fixture for GeneratedPetstore {
    fn subject(&self) -> &str {
        "the Petstore source generated by toolkit-gen"
    }

    fn source(&self, state: State) -> BoxFuture<'_, Result<Subject, String>> {
        Box::pin(async move { petstore_over(state).await.map(|(_, subject, _)| subject) })
    }
}

#[tokio::test]
async fn the_generated_petstore_source_conforms() {
    conformance::run(&GeneratedPetstore).await.assert_passed();
}

#[tokio::test]
async fn typed_methods_call_the_api() {
    let (petstore, subject, _) = petstore_over(State::Working).await.unwrap();
    let pets = petstore
        .list_pets(petstore::ListPetsInput { limit: Some(1) })
        .await
        .unwrap();
    // The answer is typed: `Vec<Pet>`.
    assert_eq!(
        pets,
        [petstore::Pet {
            id: 1,
            name: "Rex".to_owned(),
            tag: Some("dog".to_owned()),
        }]
    );
    // An input whose properties are all optional has a `Default`.
    let all = petstore
        .list_pets(petstore::ListPetsInput::default())
        .await
        .unwrap();
    assert_eq!(all.len(), 2, "{all:?}");
    // A property the document does not name (`born`) is accepted.
    let pet: petstore::Pet = petstore
        .show_pet_by_id(petstore::ShowPetByIdInput {
            pet_id: "7".to_owned(),
        })
        .await
        .unwrap();
    assert_eq!((pet.id, pet.name.as_str()), (7, "Rex"));
    // An answer that does not fit its type: an error naming the JSON path, never a panic.
    let unfit = petstore
        .show_pet_by_id(petstore::ShowPetByIdInput {
            pet_id: "seven".to_owned(),
        })
        .await
        .unwrap_err();
    assert!(
        matches!(&unfit.reason, Reason::InvalidResponse { description }
            if description.contains("does not fit its type at id: invalid type: string \"seven\", expected i64")),
        "{unfit:?}"
    );
    let created = petstore
        .create_pets(petstore::CreatePetsInput {
            body: petstore::Pet {
                id: 3,
                name: "Kit".to_owned(),
                tag: None,
            },
        })
        .await
        .unwrap();
    assert_eq!(created, json!({ "created": { "id": 3, "name": "Kit" } }));
    // A deprecated operation: its method is `#[deprecated]`.
    #[allow(deprecated)]
    let failed = petstore
        .failing(petstore::FailingInput {
            text: "x".to_owned(),
        })
        .await
        .unwrap_err();
    assert!(
        matches!(failed.reason, Reason::CallFailed { .. }),
        "{failed:?}"
    );
    // The definitions are the reader's: the same names, schemas and hints as discovered.
    let definitions = ToolSource::discover(&petstore).await.unwrap();
    assert_eq!(definitions, petstore.definitions());
    assert_eq!(definitions[0].name(), "listPets");
    assert!(definitions[0].annotations.hints().read_only);
    drop(subject);
}

#[test]
fn the_embedded_catalog_is_compact_one_operation_a_line_and_methods_say_their_request() {
    let code = petstore_module();
    // The embedded operations read back as what the reader read, each `$defs` entry once.
    let text = std::fs::read_to_string(here("fixtures/petstore.yaml")).unwrap();
    let read = read_operations(&decode_document(&text).unwrap(), &ReadOptions::default()).unwrap();
    let embedded = petstore::Petstore::OPERATIONS;
    assert_eq!(
        toolkit_runtime::http::decode_operations(embedded).unwrap(),
        read.operations
    );
    let reached: Vec<&String> = read
        .operations
        .iter()
        .flat_map(|operation| {
            let definition = &operation.definition;
            std::iter::once(definition.input_schema())
                .chain(definition.output_schema())
                .filter_map(|schema| schema.get("$defs")?.as_object())
                .flat_map(serde_json::Map::keys)
        })
        .collect();
    let names: std::collections::BTreeSet<&String> = reached.iter().copied().collect();
    // `Pet` is reached by several schemas (inputs and answers), and held once.
    assert!(reached.len() > names.len(), "{reached:?}");
    for name in &names {
        assert_eq!(
            embedded.matches(&format!("\n\"{name}\":{{")).count(),
            1,
            "{name}"
        );
    }
    // One entry a line, then one operation a line.
    let lines: Vec<&str> = embedded.lines().collect();
    assert_eq!(lines.len(), 1 + names.len() + 2 + 6 + 1, "{lines:?}");
    assert!(lines[names.len() + 3].starts_with("{\"definition\":{\"name\":\"listPets\""));
    assert!(code.contains("/// `GET /pets/{petId}`: the tool `showPetById`."));
    assert!(code.contains("/// The id of the pet to retrieve. In the path."));
    assert!(code.contains("/// In the query."));
    assert!(code.contains("/// The request's body."));
}

#[test]
fn a_catalog_beside_the_module_is_what_the_module_would_embed() {
    let text = std::fs::read_to_string(here("fixtures/petstore.yaml")).unwrap();
    let read = read_operations(&decode_document(&text).unwrap(), &ReadOptions::default()).unwrap();
    let mut source = SourceOptions::new("petstore");
    source.catalog_file = Some("petstore.tools.json".to_owned());
    let module = openapi_source("petstore.yaml", &read, &source, &EmitOptions::default());
    assert!(module.code.contains(
        "pub const OPERATIONS: &'static str = ::core::include_str!(\"petstore.tools.json\");"
    ));
    let catalog = module.catalog.unwrap();
    assert_eq!(catalog.file, "petstore.tools.json");
    assert_eq!(
        catalog.json,
        format!("{}\n", petstore::Petstore::OPERATIONS)
    );
    // Embedded, there is nothing to write beside it.
    let embedded = openapi_source(
        "petstore.yaml",
        &read,
        &SourceOptions::new("petstore"),
        &EmitOptions::default(),
    );
    assert!(embedded.catalog.is_none());
}

#[test]
fn a_field_says_where_its_parameter_goes() {
    let document = json!({
        "openapi": "3.0.3",
        "info": { "title": "Pages", "version": "1" },
        "paths": { "/pages": { "get": {
            "operationId": "listPages",
            "parameters": [
                { "name": "page[size]", "in": "query", "schema": { "type": "integer" },
                  "description": "How many" },
                { "name": "sort", "in": "query", "schema": { "type": "string" } }
            ],
            "responses": { "200": { "description": "ok" } }
        } } }
    });
    let read = read_operations(&document, &ReadOptions::default()).unwrap();
    let code = openapi_source(
        "pages.json",
        &read,
        &SourceOptions::new("pages"),
        &EmitOptions::default(),
    )
    .code;
    assert!(
        code.contains(r#"/// How many (Sent as the query parameter "page[size]".) In the query."#),
        "{code}"
    );
    assert!(code.contains("/// In the query.\n"), "{code}");
    assert!(
        code.contains("/// The input of `Pages::list_pages`."),
        "{code}"
    );
}

//! The OpenAPI reader on documents written in each test, and one taken through a toolkit to the
//! request a server gets.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;

use serde_json::{Value, json};
use toolkit_core::{Toolkit, ToolkitOptions};
use toolkit_http::HttpSource;
use toolkit_openapi::operations::{Location, Operation};
use toolkit_openapi::{ReadOperations, ReadOptions, SkipReason, decode_document, read_operations};

use crate::http::Server;

fn document(version: &str, paths: Value, components: Value) -> Value {
    json!({
        "openapi": version,
        "info": { "title": "t", "version": "1" },
        "paths": paths,
        "components": components,
    })
}

fn read(document: &Value) -> ReadOperations {
    read_operations(document, &ReadOptions::default()).unwrap()
}

fn operation<'a>(read: &'a ReadOperations, name: &str) -> &'a Operation {
    read.operations
        .iter()
        .find(|operation| operation.name() == name)
        .unwrap_or_else(|| panic!("no operation {name}: {:#?}", read.skipped))
}

fn ok() -> Value {
    json!({ "200": { "description": "ok" } })
}

#[test]
fn a_document_that_is_not_openapi_3_is_one_clear_error() {
    for (document, words) in [
        (json!({"swagger": "1.2", "paths": {}}), "Swagger 1.2"),
        (json!({"paths": {}}), "no `openapi` field"),
        (json!({"openapi": "2.0"}), "not 3.0, 3.1 or 3.2"),
        (json!([1, 2]), "not an object"),
    ] {
        let error = read_operations(&document, &ReadOptions::default()).unwrap_err();
        assert!(error.to_string().contains(words), "{error}");
    }
}

#[test]
fn an_operation_without_an_id_is_named_from_method_and_path() {
    let read = read(&document(
        "3.1.0",
        json!({ "/pets/{petId}/photos": { "get": {
            "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": ok()
        }}}),
        json!({}),
    ));
    assert_eq!(read.operations[0].name(), "get_pets_petId_photos");
}

#[test]
fn a_name_another_operation_has_is_skipped_with_where_it_is() {
    let read = read(&document(
        "3.1.0",
        json!({
            "/a": { "get": { "operationId": "list/things", "responses": ok() } },
            "/b": { "get": { "operationId": "list_things", "responses": ok() } },
            "/c": { "get": { "operationId": "list/things", "responses": ok() } }
        }),
        json!({}),
    ));
    assert_eq!(read.operations.len(), 1);
    assert_eq!(read.skipped.len(), 2);
    for skipped in &read.skipped {
        assert_eq!(
            skipped.reason,
            SkipReason::DuplicateName {
                name: skipped
                    .reason
                    .to_string()
                    .split('"')
                    .nth(1)
                    .unwrap()
                    .to_owned(),
                taken_by: "#/paths/~1a/get".to_owned()
            }
        );
    }
    assert_eq!(read.skipped[0].location, "#/paths/~1b/get");
}

#[test]
fn properties_are_named_in_the_agents_charset_with_the_place_when_they_meet() {
    let read = read(&document(
        "3.0.3",
        json!({ "/items/{id}": { "post": {
            "operationId": "update",
            "parameters": [
                {"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}},
                {"name": "id", "in": "query", "schema": {"type": "string"}, "description": "Another id."},
                {"name": "body", "in": "query", "schema": {"type": "string"}},
                {"name": "page[size]", "in": "query", "schema": {"type": "integer"}},
                {"name": "X-Request-Id", "in": "header", "schema": {"type": "string"}},
                {"name": "Authorization", "in": "header", "schema": {"type": "string"}},
                {"name": "session", "in": "cookie", "schema": {"type": "string"}}
            ],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object"}}}},
            "responses": ok()
        }}}),
        json!({}),
    ));
    let update = operation(&read, "update");
    let schema = update.definition.input_schema();
    let properties: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(
        properties,
        [
            "path_id",
            "query_id",
            "query_body",
            "page_size_",
            "X-Request-Id",
            "body"
        ]
    );
    assert_eq!(schema["required"], json!(["path_id", "body"]));
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(
        schema["properties"]["query_id"]["description"],
        json!("Another id. (Sent as the query parameter \"id\".)")
    );
    let placed: Vec<(&str, Location, &str)> = update
        .request
        .parameters
        .iter()
        .map(|p| (p.property.as_str(), p.location, p.name.as_str()))
        .collect();
    assert_eq!(
        placed,
        [
            ("path_id", Location::Path, "id"),
            ("query_id", Location::Query, "id"),
            ("query_body", Location::Query, "body"),
            ("page_size_", Location::Query, "page[size]"),
            ("X-Request-Id", Location::Header, "X-Request-Id"),
        ]
    );
    assert_eq!(update.request.body.as_ref().unwrap().property, "body");
}

#[test]
fn every_operation_that_cannot_be_a_tool_is_skipped_with_its_reason_and_location() {
    let path_id =
        json!({"name": "id", "in": "path", "required": true, "schema": {"type": "string"}});
    let read = read(&document(
        "3.0.3",
        json!({
            "/pets/{id}": {
                "parameters": [path_id],
                "get": { "operationId": "fine", "responses": ok() },
                "post": {
                    "operationId": "upload",
                    "requestBody": {"content": {"multipart/form-data": {"schema": {"type": "object"}}}},
                    "responses": ok()
                },
                "put": {
                    "operationId": "deep",
                    "parameters": [{"name": "filter", "in": "query", "style": "matrix", "schema": {"type": "object"}}],
                    "responses": ok()
                },
                "patch": {
                    "operationId": "object",
                    "parameters": [{"name": "filter", "in": "query", "schema": {"$ref": "#/components/schemas/Filter"}}],
                    "responses": ok()
                },
                "delete": {
                    "operationId": "content",
                    "parameters": [{"name": "q", "in": "query", "content": {"application/json": {"schema": {}}}}],
                    "responses": ok()
                },
                "head": {
                    "operationId": "cookie",
                    "parameters": [{"name": "session", "in": "cookie", "required": true, "schema": {"type": "string"}}],
                    "responses": ok()
                },
                "options": {
                    "operationId": "external",
                    "requestBody": {"content": {"application/json": {"schema": {"$ref": "other.yaml#/Pet"}}}},
                    "responses": ok()
                },
                "trace": {
                    "operationId": "broken",
                    "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Nothing"}}}},
                    "responses": ok()
                }
            },
            "/owners/{ownerId}": {
                "get": { "operationId": "mismatch", "responses": ok() },
                "post": {
                    "operationId": "not_a_schema",
                    "parameters": [{"name": "ownerId", "in": "path", "required": true, "schema": {"$ref": "#/components/parameters/Limit"}}],
                    "responses": ok()
                }
            }
        }),
        json!({
            "schemas": { "Filter": { "type": "object", "properties": { "a": { "type": "string" } } } },
            "parameters": { "Limit": { "name": "limit", "in": "query", "schema": { "type": "integer" } } }
        }),
    ));
    assert_eq!(read.operations.len(), 1, "one bad operation fails no other");
    assert_eq!(read.operations[0].name(), "fine");
    let skipped: Vec<(&str, &str)> = read
        .skipped
        .iter()
        .map(|s| (s.location.as_str(), s.reason.kind()))
        .collect();
    assert_eq!(
        skipped,
        [
            ("#/paths/~1pets~1{id}/put", "parameterStyle"),
            ("#/paths/~1pets~1{id}/post", "bodyNotJson"),
            ("#/paths/~1pets~1{id}/delete", "parameterContent"),
            ("#/paths/~1pets~1{id}/options", "externalReference"),
            ("#/paths/~1pets~1{id}/head", "cookie"),
            ("#/paths/~1pets~1{id}/patch", "objectParameter"),
            ("#/paths/~1pets~1{id}/trace", "brokenReference"),
            ("#/paths/~1owners~1{ownerId}/get", "pathMismatch"),
            ("#/paths/~1owners~1{ownerId}/post", "notASchema"),
        ]
    );
    let upload = read
        .skipped
        .iter()
        .find(|s| s.method == "POST" && s.path == "/pets/{id}")
        .unwrap();
    assert_eq!(
        upload.reason.to_string(),
        "the request body is neither JSON nor a form: multipart/form-data"
    );
}

#[test]
fn schemas_stand_alone_with_defs_and_3_0_made_as_3_1() {
    let read = read(&document(
        "3.0.3",
        json!({ "/trees": { "post": {
            "operationId": "plant",
            "parameters": [{"name": "height", "in": "query", "schema": {"type": "integer", "minimum": 0, "exclusiveMinimum": true, "nullable": true}}],
            "requestBody": {"content": {"application/json; charset=utf-8": {"schema": {"$ref": "#/components/schemas/Tree"}}}},
            "responses": ok()
        }}}),
        json!({ "schemas": {
            "Tree": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "nullable": true, "example": "oak"},
                    "children": {"type": "array", "items": {"$ref": "#/components/schemas/Tree"}},
                    "leaf": {"$ref": "#/components/schemas/Leaf"}
                }
            },
            "Leaf": {"type": "string", "enum": ["green", "red"], "nullable": true},
            "Unused": {"type": "string"}
        }}),
    ));
    let schema = Value::Object(operation(&read, "plant").definition.input_schema().clone());
    assert_eq!(
        schema["properties"]["height"],
        json!({"type": ["integer", "null"], "exclusiveMinimum": 0})
    );
    assert_eq!(
        schema["properties"]["body"],
        json!({"$ref": "#/$defs/Tree"})
    );
    let defs = schema["$defs"].as_object().unwrap();
    assert_eq!(defs.keys().collect::<Vec<_>>(), ["Tree", "Leaf"]);
    assert_eq!(
        defs["Tree"]["properties"]["name"],
        json!({"type": ["string", "null"], "examples": ["oak"]})
    );
    assert_eq!(
        defs["Tree"]["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Tree"})
    );
    assert_eq!(
        defs["Leaf"],
        json!({"type": ["string", "null"], "enum": ["green", "red", null]})
    );
    // It compiles, and a null the API accepts passes.
    let check = toolkit_core::input::InputCheck::new(schema.as_object().unwrap());
    assert!(check.is_complete());
    assert!(check.check(&json!({"height": null, "body": {"name": null, "leaf": null, "children": [{"name": "x"}]}})).is_ok());
    assert!(
        check.check(&json!({"height": 0})).is_err(),
        "the exclusive minimum holds"
    );
}

/// OpenAPI: a `readOnly` property is sent only in answers, a `writeOnly` one only in requests.
/// The input leaves out `id` (and the schema stays closed, so the model cannot send it), the
/// answer leaves out `password`.
#[test]
fn read_only_properties_are_no_input_and_write_only_ones_no_answer() {
    let read = read(&document(
        "3.0.3",
        json!({ "/users": { "post": {
            "operationId": "createUser",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}}},
            "responses": {"201": {"description": "made", "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/User"}},
                "image/png": {}
            }}}
        }}}),
        json!({ "schemas": {
            "User": {
                "type": "object",
                "required": ["id", "name", "password"],
                "additionalProperties": false,
                "properties": {
                    "id": {"type": "integer", "readOnly": true},
                    "created": {"$ref": "#/components/schemas/Created"},
                    "name": {"type": "string"},
                    "password": {"type": "string", "writeOnly": true}
                }
            },
            "Created": {"type": "string", "readOnly": true}
        }}),
    ));
    let create = operation(&read, "createUser");
    let input = create.definition.input_schema();
    // The request's `User` is a variant of its own, the body refers to it.
    assert_eq!(
        input["properties"]["body"]["$ref"],
        json!("#/$defs/User.request")
    );
    let user = &input["$defs"]["User.request"];
    assert_eq!(user["required"], json!(["name", "password"]));
    let properties: Vec<&String> = user["properties"].as_object().unwrap().keys().collect();
    assert_eq!(properties, ["name", "password"]);
    let check = toolkit_core::input::InputCheck::new(input);
    assert!(
        check
            .check(&json!({"body": {"name": "a", "password": "p"}}))
            .is_ok()
    );
    assert!(
        check
            .check(&json!({"body": {"id": 1, "name": "a", "password": "p"}}))
            .is_err(),
        "closed without id"
    );
    let answer = &read.answers["createUser"];
    assert_eq!(answer["$ref"], json!("#/$defs/User.answer"));
    let user = &answer["$defs"]["User.answer"];
    assert_eq!(user["required"], json!(["id", "name"]));
    let properties: Vec<&String> = user["properties"].as_object().unwrap().keys().collect();
    assert_eq!(properties, ["id", "created", "name"]);
    // The request asks for what the operation answers, JSON first.
    assert_eq!(
        create.request.accept.as_deref(),
        Some("application/json, image/png, */*;q=0.1")
    );
}

#[test]
fn an_operation_whose_template_a_source_would_refuse_is_skipped() {
    let read = read(&document(
        "3.1.0",
        json!({
            "/a}b": { "get": { "operationId": "brace", "responses": ok() } },
            "/c": {
                "get": {
                    "operationId": "host",
                    "parameters": [{"name": "Host", "in": "header", "schema": {"type": "string"}}],
                    "responses": ok()
                },
                "put": {
                    "operationId": "spaced",
                    "parameters": [{"name": "X Bad", "in": "header", "schema": {"type": "string"}}],
                    "responses": ok()
                }
            }
        }),
        json!({}),
    ));
    assert!(read.operations.is_empty());
    let reasons: Vec<String> = read.skipped.iter().map(|s| s.reason.to_string()).collect();
    assert_eq!(
        reasons,
        [
            "the path \"/a}b\" has a } that was never opened",
            "the header \"Host\" is the client's or HTTP's to set, not a parameter's",
            "\"X Bad\" is not a header name",
        ]
    );
}

#[test]
fn deprecated_operations_are_read_unless_the_options_leave_them_out() {
    let document = document(
        "3.1.0",
        json!({
            "/old": { "get": { "operationId": "old", "deprecated": true, "responses": ok() } },
            "/new": { "$ref": "#/components/pathItems/New" }
        }),
        json!({ "pathItems": { "New": { "get": { "operationId": "new", "responses": ok() } } } }),
    );
    let all = read(&document);
    assert_eq!(
        all.operations
            .iter()
            .map(Operation::name)
            .collect::<Vec<_>>(),
        ["old", "new"]
    );
    let current = read_operations(&document, &ReadOptions::default().deprecated(false)).unwrap();
    assert_eq!(
        current
            .operations
            .iter()
            .map(Operation::name)
            .collect::<Vec<_>>(),
        ["new"]
    );
    assert!(current.skipped.is_empty());
}

#[test]
fn hints_are_what_http_says_of_the_method_and_nothing_more() {
    let methods = [
        "get", "head", "options", "trace", "put", "delete", "post", "patch",
    ];
    let mut paths = serde_json::Map::new();
    for method in methods {
        paths.insert(
            format!("/{method}"),
            json!({ method: { "operationId": method, "summary": "Sum", "responses": ok() } }),
        );
    }
    let read = read(&document("3.1.0", Value::Object(paths), json!({})));
    let hints = |name: &str| {
        let a = &operation(&read, name).definition.annotations;
        (a.read_only, a.idempotent, a.destructive, a.open_world)
    };
    for safe in ["get", "head", "options", "trace"] {
        assert_eq!(hints(safe), (Some(true), None, None, None), "{safe}");
    }
    assert_eq!(hints("put"), (Some(false), Some(true), None, None));
    assert_eq!(hints("delete"), (Some(false), Some(true), Some(true), None));
    assert_eq!(hints("post"), (Some(false), Some(false), None, None));
    assert_eq!(hints("patch"), (Some(false), Some(false), None, None));
    assert_eq!(
        operation(&read, "get")
            .definition
            .annotations
            .title
            .as_deref(),
        Some("Sum")
    );
}

#[test]
fn servers_are_listed_and_references_to_parameters_followed() {
    let mut document = document(
        "3.1.0",
        json!({ "/repos/{owner}": {
            "parameters": [{"$ref": "#/components/parameters/owner"}, {"$ref": "#/components/parameters/page"}],
            "get": {
                "operationId": "repos",
                "parameters": [{"name": "page", "in": "query", "description": "Overridden.", "schema": {"type": "string"}}],
                "responses": ok()
            }
        }}),
        json!({ "parameters": {
            "owner": {"name": "owner", "in": "path", "required": true, "schema": {"type": "string"}},
            "page": {"name": "page", "in": "query", "schema": {"type": "integer"}}
        }}),
    );
    document["servers"] =
        json!([{"url": "https://api.example.com/v3", "description": "Production"}]);
    let read = read(&document);
    assert_eq!(read.servers[0].url, "https://api.example.com/v3");
    assert_eq!(read.servers[0].description.as_deref(), Some("Production"));
    let schema = operation(&read, "repos").definition.input_schema();
    assert_eq!(
        schema["properties"]["page"],
        json!({"type": "string", "description": "Overridden."})
    );
    assert_eq!(schema["required"], json!(["owner"]));
}

#[test]
fn yaml_documents_are_read_with_keys_as_strings() {
    let text = "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /pets:\n    get:\n      operationId: list\n      responses:\n        200:\n          description: ok\n";
    let document = decode_document(text).unwrap();
    assert!(document["paths"]["/pets"]["get"]["responses"]["200"].is_object());
    assert_eq!(read(&document).operations[0].name(), "list");
    assert!(decode_document("openapi: [").is_err());
}

#[tokio::test]
async fn a_read_operation_goes_through_a_toolkit_to_the_request_the_server_gets() {
    let server = Server::start().await;
    let document = document(
        "3.0.3",
        json!({
            "/pets/{petId}": { "put": {
                "operationId": "updatePet",
                "parameters": [
                    {"name": "petId", "in": "path", "required": true, "schema": {"type": "integer"}},
                    {"name": "fields", "in": "query", "explode": false, "schema": {"type": "array", "items": {"type": "string"}}},
                    {"name": "X-Trace", "in": "header", "schema": {"type": "string"}}
                ],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}},
                "responses": ok()
            }},
            "/Accounts/{Sid}/Messages.json": { "post": {
                "operationId": "CreateMessage",
                "parameters": [{"name": "Sid", "in": "path", "required": true, "schema": {"type": "string"}}],
                "requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": {
                    "type": "object", "required": ["To"], "properties": {"To": {"type": "string"}, "Body": {"type": "string"}}
                }}}},
                "responses": ok()
            }}
        }),
        json!({ "schemas": { "Pet": {
            "type": "object", "required": ["name"],
            "properties": {"name": {"type": "string"}, "tag": {"type": "string", "nullable": true}}
        }}}),
    );
    let read = read(&document);
    let source = Arc::new(
        HttpSource::builder(
            "petstore",
            format!("{}/v1", server.base),
            reqwest::Client::new(),
        )
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

    let answer = toolkit
        .call(
            "updatePet",
            json!({"petId": 7, "fields": ["name", "tag"], "X-Trace": "t-1", "body": {"name": "Rex", "tag": null}}),
        )
        .await
        .unwrap();
    assert_eq!(answer["ok"], json!(true));
    let request = server.last();
    assert_eq!(request.method, "PUT");
    assert_eq!(request.target, "/v1/pets/7?fields=name,tag");
    assert_eq!(request.headers["x-trace"], "t-1");
    assert_eq!(
        serde_json::from_slice::<Value>(&request.body).unwrap(),
        json!({"name": "Rex", "tag": null})
    );

    // The schema refuses what the API would: no request is sent.
    let refused = toolkit
        .call("updatePet", json!({"petId": 7, "body": {"tag": "x"}}))
        .await
        .unwrap_err();
    assert_eq!(refused.code, "InvalidInputError");
    assert_eq!(server.recorded().len(), 1);

    toolkit
        .call(
            "CreateMessage",
            json!({"Sid": "AC1", "body": {"To": "+15550100", "Body": "hi there"}}),
        )
        .await
        .unwrap();
    let request = server.last();
    assert_eq!(request.target, "/v1/Accounts/AC1/Messages.json");
    assert_eq!(
        request.headers["content-type"],
        "application/x-www-form-urlencoded"
    );
    assert_eq!(
        std::str::from_utf8(&request.body).unwrap(),
        "To=%2B15550100&Body=hi%20there"
    );
}

/// Every query style OpenAPI 3.1 has, and a form body with `deepObject` fields as Stripe's are,
/// read from a document and taken through a toolkit to the request a server gets; a value a
/// style cannot write is refused, named, and nothing is sent.
#[tokio::test]
async fn query_styles_and_deep_form_fields_reach_the_server_as_openapi_writes_them() {
    let server = Server::start().await;
    let strings = json!({"type": "array", "items": {"type": "string"}});
    let document = document(
        "3.0.0",
        json!({
            "/v1/customers": { "post": {
                "operationId": "PostCustomers",
                "parameters": [
                    {"name": "expand", "in": "query", "style": "deepObject", "explode": true, "schema": strings},
                    {"name": "created", "in": "query", "style": "deepObject", "explode": true,
                     "schema": {"anyOf": [{"type": "object", "properties": {"gte": {"type": "integer"}}}, {"type": "integer"}]}},
                    {"name": "ids", "in": "query", "style": "pipeDelimited", "schema": strings},
                    {"name": "words", "in": "query", "style": "spaceDelimited", "explode": false, "schema": strings},
                    {"name": "point", "in": "query", "style": "form", "explode": false,
                     "schema": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}}}
                ],
                "requestBody": {"content": {"application/x-www-form-urlencoded": {
                    "encoding": {"metadata": {"style": "deepObject", "explode": true}, "items": {"style": "deepObject", "explode": true}},
                    "schema": {"type": "object", "properties": {
                        "email": {"type": "string"},
                        "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
                        "items": {"type": "array", "items": {"type": "object", "properties": {"price": {"type": "string"}, "quantity": {"type": "integer"}}}}
                    }}
                }}},
                "responses": {"200": {"description": "ok", "content": {"text/csv": {}, "application/json": {}}}}
            }}
        }),
        json!({}),
    );
    let read = read(&document);
    assert!(read.skipped.is_empty(), "{:#?}", read.skipped);
    let source = Arc::new(
        HttpSource::builder("stripe", server.base.clone(), reqwest::Client::new())
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
    toolkit
        .call(
            "PostCustomers",
            json!({
                "expand": ["sources", "tax_ids"],
                "created": {"gte": 1700000000},
                "ids": ["a", "b|c"],
                "words": ["x", "y"],
                "point": {"x": 1, "y": 2},
                "body": {
                    "email": "a@example.com",
                    "metadata": {"order id": "6735"},
                    "items": [{"price": "p_1", "quantity": 2}]
                }
            }),
        )
        .await
        .unwrap();
    let request = server.last();
    assert_eq!(
        request.target,
        "/v1/customers?expand[]=sources&expand[]=tax_ids&created[gte]=1700000000\
         &ids=a|b%7Cc&words=x%20y&point=x,1,y,2"
    );
    assert_eq!(
        std::str::from_utf8(&request.body).unwrap(),
        "email=a%40example.com&metadata[order%20id]=6735&items[0][price]=p_1&items[0][quantity]=2"
    );
    assert_eq!(
        request.headers["accept"],
        "application/json, text/csv, */*;q=0.1"
    );

    // A key that would read as other nesting is refused with the property's name; nothing sent.
    let refused = toolkit
        .call(
            "PostCustomers",
            json!({"body": {"metadata": {"a][b": "x"}}}),
        )
        .await
        .unwrap_err();
    assert!(refused.message.contains("\"body.metadata\""), "{refused:?}");
    assert_eq!(server.recorded().len(), 1);
}

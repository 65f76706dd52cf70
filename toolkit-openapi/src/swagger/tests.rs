//! Each rule of the conversion on a small document, and arbitrary JSON through it.
#![allow(clippy::panic, clippy::unwrap_used)]

use proptest::prelude::*;
use serde_json::{Value, json};

use super::convert;
use crate::operations::{BodyEncoding, Location, QueryStyle};
use crate::{ReadOperations, ReadOptions, read_operations};

fn swagger(paths: Value, rest: Value) -> Value {
    let mut document = json!({
        "swagger": "2.0",
        "info": { "title": "t", "version": "1" },
        "paths": paths,
    });
    if let (Value::Object(document), Value::Object(rest)) = (&mut document, rest) {
        document.extend(rest);
    }
    document
}

fn read_doc(document: &Value) -> ReadOperations {
    read_operations(document, &ReadOptions::default()).unwrap()
}

fn converted(document: &Value) -> Value {
    convert(document).document
}

fn ok() -> Value {
    json!({ "200": { "description": "ok" } })
}

#[test]
fn only_swagger_2_0_is_read() {
    for document in [
        json!({ "swagger": "1.2", "paths": {} }),
        json!({ "swagger": 2, "paths": {} }),
        json!({ "swagger": "3.0", "paths": {} }),
    ] {
        let error = read_operations(&document, &ReadOptions::default()).unwrap_err();
        assert!(error.to_string().contains("only Swagger 2.0"), "{error}");
    }
    let read = read_doc(&swagger(
        json!({ "/a": { "get": { "responses": ok() } } }),
        json!({}),
    ));
    assert_eq!(read.operations[0].name(), "get_a");
}

#[test]
fn host_base_path_and_schemes_are_servers() {
    let servers = |rest: Value| converted(&swagger(json!({}), rest))["servers"].clone();
    assert_eq!(
        servers(
            json!({ "host": "api.example.com", "basePath": "/v1", "schemes": ["http", "https"] })
        ),
        json!([{ "url": "http://api.example.com/v1" }, { "url": "https://api.example.com/v1" }])
    );
    assert_eq!(
        servers(json!({ "host": "api.example.com" })),
        json!([{ "url": "https://api.example.com" }])
    );
    assert_eq!(
        servers(json!({ "basePath": "/v2/" })),
        json!([{ "url": "/v2" }])
    );
    assert_eq!(servers(json!({})), json!([{ "url": "/" }]));
    assert_eq!(
        servers(json!({
            "host": "ignored",
            "basePath": "/b",
            "x-ms-parameterized-host": {
                "hostTemplate": "{account}.{suffix}",
                "parameters": [
                    { "name": "account", "in": "path", "type": "string" },
                    { "name": "suffix", "in": "path", "type": "string", "default": "host.net" }
                ]
            }
        })),
        json!([{ "url": "https://{account}.{suffix}/b", "variables": {
            "account": { "default": "" }, "suffix": { "default": "host.net" }
        } }])
    );
    let read = read_doc(&swagger(
        json!({}),
        json!({ "host": "h.example", "schemes": ["http"] }),
    ));
    assert_eq!(read.servers[0].url, "http://h.example");
}

#[test]
fn the_body_parameter_is_the_request_body_under_its_own_name() {
    let document = swagger(
        json!({ "/pets": { "post": {
            "operationId": "add",
            "consumes": ["application/json", "text/json"],
            "parameters": [{ "name": "pet", "in": "body", "required": true, "description": "The pet.",
                             "schema": { "$ref": "#/definitions/Pet" } }],
            "responses": ok()
        } } }),
        json!({ "definitions": { "Pet": { "type": "object", "properties": { "name": { "type": "string" } } } } }),
    );
    let operation = &converted(&document)["paths"]["/pets"]["post"];
    assert_eq!(operation["x-codegen-request-body-name"], "pet");
    assert_eq!(
        operation["requestBody"]["content"]["text/json"]["schema"]["$ref"],
        "#/components/schemas/Pet"
    );
    assert_eq!(operation["requestBody"]["required"], true);
    let read = read_doc(&document);
    let add = &read.operations[0];
    assert_eq!(add.request.body.as_ref().unwrap().property, "pet");
    let input = add.definition.input_schema();
    assert_eq!(input["required"], json!(["pet"]));
    assert_eq!(input["properties"]["pet"]["$ref"], "#/$defs/Pet");
}

#[test]
fn a_body_name_a_parameter_has_falls_back_to_body() {
    let read = read_doc(&swagger(
        json!({ "/p": { "put": {
            "parameters": [
                { "name": "value", "in": "query", "type": "string" },
                { "name": "value", "in": "body", "schema": { "type": "string" } }
            ],
            "responses": ok()
        } } }),
        json!({}),
    ));
    let input = read.operations[0].definition.input_schema();
    assert!(input["properties"]["value"].is_object());
    assert!(input["properties"]["body"].is_object());
}

#[test]
fn the_body_name_extension_of_a_3_0_document_is_read() {
    let document = json!({
        "openapi": "3.0.1", "info": { "title": "t", "version": "1" },
        "paths": { "/p": { "post": {
            "x-codegen-request-body-name": "order",
            "requestBody": { "content": { "application/json": { "schema": { "type": "object" } } } },
            "responses": {}
        } } }
    });
    let read = read_doc(&document);
    assert_eq!(
        read.operations[0].request.body.as_ref().unwrap().property,
        "order"
    );
}

#[test]
fn form_data_is_a_form_or_multipart() {
    let form = swagger(
        json!({ "/f": { "post": {
            "parameters": [
                { "name": "a", "in": "formData", "type": "string", "required": true },
                { "name": "b", "in": "formData", "type": "integer" }
            ],
            "responses": ok()
        } } }),
        json!({}),
    );
    let body = &converted(&form)["paths"]["/f"]["post"]["requestBody"];
    assert_eq!(
        body["content"]["application/x-www-form-urlencoded"]["schema"],
        json!({ "type": "object", "properties": { "a": { "type": "string" }, "b": { "type": "integer" } }, "required": ["a"] })
    );
    let read = read_doc(&form);
    assert_eq!(
        read.operations[0].request.body.as_ref().unwrap().encoding,
        BodyEncoding::Form
    );

    let file = swagger(
        json!({ "/f": { "post": {
            "parameters": [{ "name": "data", "in": "formData", "type": "file" }],
            "responses": ok()
        } } }),
        json!({}),
    );
    let body = &converted(&file)["paths"]["/f"]["post"]["requestBody"];
    assert_eq!(
        body["content"]["multipart/form-data"]["schema"]["properties"]["data"],
        json!({ "type": "string", "format": "binary" })
    );
    let declared = swagger(
        json!({ "/f": { "post": {
            "consumes": ["multipart/form-data"],
            "parameters": [{ "name": "a", "in": "formData", "type": "string" }],
            "responses": ok()
        } } }),
        json!({}),
    );
    assert!(converted(&declared)["paths"]["/f"]["post"]["requestBody"]["content"]["multipart/form-data"].is_object());
    // The reader sends no multipart body: a located skip with its reason.
    let read = read_doc(&file);
    assert_eq!(read.skipped[0].location, "#/paths/~1f/post");
    assert_eq!(read.skipped[0].reason.kind(), "bodyNotJson");
}

#[test]
fn a_form_list_is_read_only_when_sent_a_key_per_value() {
    let form = |format: &str| {
        swagger(
            json!({ "/f": { "post": {
                "parameters": [{ "name": "tags", "in": "formData", "type": "array",
                                 "items": { "type": "string" }, "collectionFormat": format }],
                "responses": ok()
            } } }),
            json!({}),
        )
    };
    let multi = read_doc(&form("multi"));
    assert_eq!(multi.operations.len(), 1, "{:?}", multi.skipped);
    // `csv`, 2.0's default, joins the list: the form here would send a key per value.
    let csv = read_doc(&form("csv"));
    assert_eq!(csv.skipped[0].location, "#/paths/~1f/post");
    assert_eq!(csv.skipped[0].reason.kind(), "parameterStyle");
}

#[test]
fn collection_formats_are_styles() {
    let document = swagger(
        json!({ "/q/{ids}": { "get": {
            "parameters": [
                { "name": "ids", "in": "path", "required": true, "type": "string" },
                { "name": "csv", "in": "query", "type": "array", "items": { "type": "string" } },
                { "name": "ssv", "in": "query", "type": "array", "items": { "type": "string" }, "collectionFormat": "ssv" },
                { "name": "pipes", "in": "query", "type": "array", "items": { "type": "string" }, "collectionFormat": "pipes" },
                { "name": "multi", "in": "query", "type": "array", "items": { "type": "string" }, "collectionFormat": "multi" },
                { "name": "empty", "in": "query", "type": "string", "allowEmptyValue": true }
            ],
            "responses": ok()
        } } }),
        json!({}),
    );
    let parameters = &converted(&document)["paths"]["/q/{ids}"]["get"]["parameters"];
    let style = |index: usize| {
        (
            parameters[index]["style"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            parameters[index]["explode"].clone(),
        )
    };
    assert_eq!(style(1), ("form".to_owned(), json!(false)));
    assert_eq!(style(2), ("spaceDelimited".to_owned(), json!(false)));
    assert_eq!(style(3), ("pipeDelimited".to_owned(), json!(false)));
    assert_eq!(style(4), ("form".to_owned(), json!(true)));
    assert_eq!(parameters[5]["allowEmptyValue"], true);
    assert_eq!(
        parameters[1]["schema"],
        json!({ "type": "array", "items": { "type": "string" } })
    );
    let read = read_doc(&document);
    let template = &read.operations[0].request;
    let place = |name: &str| {
        template
            .parameters
            .iter()
            .find(|parameter| parameter.name == name)
            .unwrap()
    };
    assert!(place("csv").joined);
    assert_eq!(place("ssv").style, QueryStyle::SpaceDelimited);
    assert_eq!(place("pipes").style, QueryStyle::PipeDelimited);
    assert!(!place("multi").joined);
    assert_eq!(place("multi").location, Location::Query);

    let tsv = swagger(
        json!({ "/t": { "get": {
            "parameters": [{ "name": "t", "in": "query", "type": "array", "items": { "type": "string" }, "collectionFormat": "tsv" }],
            "responses": ok()
        } } }),
        json!({}),
    );
    let read = read_doc(&tsv);
    assert!(read.operations.is_empty());
    assert_eq!(read.skipped[0].location, "#/paths/~1t/get");
    assert_eq!(read.skipped[0].reason.kind(), "parameterStyle");
    assert!(
        read.skipped[0].reason.to_string().contains("tsv"),
        "{}",
        read.skipped[0].reason
    );
}

#[test]
fn produces_schemas_and_headers_are_response_content() {
    let document = swagger(
        json!({ "/r": { "get": {
            "operationId": "r",
            "produces": ["application/json", "application/xml"],
            "responses": {
                "200": {
                    "description": "ok",
                    "schema": { "$ref": "#/definitions/Thing" },
                    "headers": { "X-Rate": { "type": "integer", "description": "Left." } },
                    "examples": { "application/json": { "id": 1 } }
                },
                "404": { "$ref": "#/responses/Missing" }
            }
        } } }),
        json!({
            "definitions": { "Thing": { "type": "object", "properties": { "id": { "type": "integer" } } } },
            "responses": { "Missing": { "description": "gone" } }
        }),
    );
    let document3 = converted(&document);
    let responses = &document3["paths"]["/r"]["get"]["responses"];
    assert_eq!(
        responses["200"]["content"]["application/xml"]["schema"]["$ref"],
        "#/components/schemas/Thing"
    );
    assert_eq!(
        responses["200"]["content"]["application/json"]["example"],
        json!({ "id": 1 })
    );
    assert_eq!(
        responses["200"]["headers"]["X-Rate"],
        json!({ "description": "Left.", "schema": { "type": "integer" } })
    );
    assert_eq!(responses["404"]["description"], "gone");
    assert_eq!(
        document3["components"]["responses"]["Missing"]["description"],
        "gone"
    );
    let read = read_doc(&document);
    assert_eq!(read.answers["r"]["$ref"], "#/$defs/Thing");
}

#[test]
fn security_definitions_are_security_schemes() {
    let document = swagger(
        json!({ "/s": { "get": { "security": [{ "key": [] }], "responses": ok() } } }),
        json!({ "securityDefinitions": {
            "basic": { "type": "basic" },
            "key": { "type": "apiKey", "name": "X-Key", "in": "header" },
            "implicit": { "type": "oauth2", "flow": "implicit", "authorizationUrl": "https://a/auth", "scopes": { "r": "read" } },
            "password": { "type": "oauth2", "flow": "password", "tokenUrl": "https://a/token", "scopes": {} },
            "application": { "type": "oauth2", "flow": "application", "tokenUrl": "https://a/token", "scopes": {} },
            "accessCode": { "type": "oauth2", "flow": "accessCode", "authorizationUrl": "https://a/auth", "tokenUrl": "https://a/token", "scopes": {} }
        } }),
    );
    let schemes = &converted(&document)["components"]["securitySchemes"];
    assert_eq!(
        schemes["basic"],
        json!({ "type": "http", "scheme": "basic" })
    );
    assert_eq!(
        schemes["key"],
        json!({ "type": "apiKey", "name": "X-Key", "in": "header" })
    );
    assert_eq!(
        schemes["implicit"]["flows"]["implicit"],
        json!({ "authorizationUrl": "https://a/auth", "scopes": { "r": "read" } })
    );
    assert_eq!(
        schemes["password"]["flows"]["password"]["tokenUrl"],
        "https://a/token"
    );
    assert!(schemes["application"]["flows"]["clientCredentials"].is_object());
    assert_eq!(
        schemes["accessCode"]["flows"]["authorizationCode"],
        json!({ "authorizationUrl": "https://a/auth", "tokenUrl": "https://a/token", "scopes": {} })
    );
    let read = read_doc(&document);
    assert_eq!(read.security.schemes.len(), 6, "{:?}", read.security);
    assert_eq!(read.security.requirements["get_s"][0].len(), 1);

    // A scheme that cannot be read is listed where the 2.0 document has it.
    let broken = swagger(
        json!({}),
        json!({ "securityDefinitions": { "key": { "type": "apiKey", "name": "k", "in": "body" } } }),
    );
    let read = read_doc(&broken);
    assert_eq!(
        read.security.problems[0].location,
        "#/securityDefinitions/key"
    );
}

#[test]
fn definitions_and_shared_parameters_are_components_with_references_rewritten() {
    let document = swagger(
        json!({ "/d/{id}": {
            "parameters": [{ "$ref": "#/parameters/Id" }],
            "get": { "operationId": "d", "parameters": [{ "$ref": "#/parameters/Body" }], "responses": ok() }
        } }),
        json!({
            "parameters": {
                "Id": { "name": "id", "in": "path", "required": true, "type": "integer" },
                "Body": { "name": "thing", "in": "body", "schema": { "$ref": "#/definitions/Thing" } }
            },
            "definitions": {
                "Thing": { "type": "object", "x-nullable": true, "properties": {
                    "next": { "$ref": "#/definitions/Thing" },
                    "file": { "type": "file" }
                } }
            }
        }),
    );
    let document3 = converted(&document);
    assert_eq!(
        document3["components"]["schemas"]["Thing"],
        json!({ "type": "object", "nullable": true, "properties": {
            "next": { "$ref": "#/components/schemas/Thing" },
            "file": { "type": "string", "format": "binary" }
        } })
    );
    assert_eq!(
        document3["components"]["parameters"]["Id"]["schema"],
        json!({ "type": "integer" })
    );
    assert!(document3["components"]["requestBodies"]["Body"].is_object());
    let read = read_doc(&document);
    let input = read.operations[0].definition.input_schema();
    assert_eq!(input["properties"]["id"]["type"], "integer");
    assert_eq!(input["properties"]["thing"]["$ref"], "#/$defs/Thing");
}

#[test]
fn discriminators_get_their_mapping_and_open_enums_any_string() {
    let document = swagger(
        json!({}),
        json!({ "definitions": {
            "Fish": { "type": "object", "discriminator": "kind", "required": ["kind"],
                      "properties": { "kind": { "type": "string" } } },
            "Shark": { "x-ms-discriminator-value": "shark", "allOf": [{ "$ref": "#/definitions/Fish" }] },
            "Goblin": { "x-ms-discriminator-value": "goblin", "allOf": [{ "$ref": "#/definitions/Shark" }] },
            "Color": { "type": "string", "enum": ["red", "green"], "description": "A color.",
                       "x-ms-enum": { "name": "Color", "modelAsString": true } },
            "Fixed": { "type": "string", "enum": ["a"], "x-ms-enum": { "name": "Fixed", "modelAsString": false } }
        } }),
    );
    let schemas = &converted(&document)["components"]["schemas"];
    assert_eq!(
        schemas["Fish"]["discriminator"],
        json!({ "propertyName": "kind", "mapping": {
            "shark": "#/components/schemas/Shark",
            // A grandchild's value is for the nearest ancestor with the discriminator.
            "goblin": "#/components/schemas/Goblin"
        } })
    );
    assert!(schemas["Color"].get("enum").is_none());
    assert_eq!(
        schemas["Color"]["description"],
        "A color. Known values: red, green; others are accepted."
    );
    assert_eq!(schemas["Fixed"]["enum"], json!(["a"]));
}

#[test]
fn x_ms_paths_are_operations_with_a_fixed_query_located_where_they_are() {
    let document = swagger(
        json!({ "/c": { "get": { "operationId": "plain", "responses": ok() } } }),
        json!({ "x-ms-paths": {
            "/c?restype=list": { "get": { "operationId": "list", "responses": ok() } },
            "/c?restype=bad": { "get": { "operationId": "bad",
                "parameters": [{ "name": "x", "in": "path", "required": true, "type": "string" }],
                "responses": ok() } }
        } }),
    );
    let read = read_doc(&document);
    let list = read
        .operations
        .iter()
        .find(|operation| operation.name() == "list")
        .unwrap();
    assert_eq!(list.request.path, "/c?restype=list");
    assert_eq!(read.skipped.len(), 1);
    assert_eq!(read.skipped[0].location, "#/x-ms-paths/~1c?restype=bad/get");
    assert_eq!(read.skipped[0].reason.kind(), "pathMismatch");
}

#[test]
fn dangling_references_and_malformed_parts_are_located_skips() {
    let document = swagger(
        json!({
            "/a": { "get": { "parameters": [{ "$ref": "#/parameters/Nothing" }], "responses": ok() } },
            "/b": { "post": { "parameters": [{ "name": "p", "in": "body", "schema": { "$ref": "#/definitions/Nothing" } }], "responses": ok() } },
            "/c": { "post": { "parameters": [
                { "name": "p", "in": "body", "schema": {} },
                { "name": "f", "in": "formData", "type": "string" }
            ], "responses": ok() } },
            "/d": { "get": { "parameters": 7, "responses": ok() } },
            "/e": { "get": { "responses": { "200": { "$ref": "#/responses/Nothing" } } } },
            "/f": "no item"
        }),
        json!({}),
    );
    let read = read_doc(&document);
    assert!(read.operations.is_empty(), "{:?}", read.operations);
    let mut found: Vec<(String, String)> = read
        .skipped
        .iter()
        .map(|skip| (skip.location.clone(), skip.reason.to_string()))
        .collect();
    found.sort();
    let expected = [
        ("#/paths/~1a/get", "#/parameters/Nothing"),
        ("#/paths/~1b/post", "#/definitions/Nothing"),
        ("#/paths/~1c/post", "both a body parameter and formData"),
        ("#/paths/~1d/get", "not a list"),
        ("#/paths/~1e/get", "#/responses/Nothing"),
        ("#/paths/~1f", "not an object"),
    ];
    assert_eq!(found.len(), expected.len(), "{found:#?}");
    for ((location, reason), (want_location, words)) in found.iter().zip(expected) {
        assert_eq!(location, want_location);
        assert!(reason.contains(words), "{location}: {reason}");
    }
}

/// Arbitrary JSON, shaped loosely like a Swagger document.
fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        prop::sample::select(vec![
            "2.0",
            "body",
            "formData",
            "query",
            "path",
            "header",
            "array",
            "file",
            "csv",
            "tsv",
            "multi",
            "#/definitions/A",
            "#/parameters/P",
            "#/responses/R",
            "object",
            "oauth2",
            "application",
            "/a",
            "/a?x=1",
            "multipart/form-data",
        ])
        .prop_map(|text| json!(text)),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        let keys = prop::sample::select(vec![
            "swagger",
            "paths",
            "x-ms-paths",
            "get",
            "post",
            "parameters",
            "in",
            "name",
            "type",
            "items",
            "schema",
            "$ref",
            "responses",
            "200",
            "definitions",
            "A",
            "P",
            "R",
            "collectionFormat",
            "consumes",
            "produces",
            "securityDefinitions",
            "flow",
            "discriminator",
            "allOf",
            "x-nullable",
            "x-ms-enum",
            "enum",
            "headers",
            "host",
            "schemes",
            "basePath",
            "x-ms-parameterized-host",
            "required",
            "properties",
        ]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(keys, inner, 0..6).prop_map(|map| {
                Value::Object(map.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}

proptest! {
    #[test]
    fn nothing_panics_on_arbitrary_json(mut document in arbitrary_json()) {
        if let Value::Object(object) = &mut document {
            object.insert("swagger".to_owned(), json!("2.0"));
        }
        let _ = convert(&document);
        if let Ok(read) = read_operations(&document, &ReadOptions::default()) {
            for skipped in &read.skipped {
                prop_assert!(skipped.location.starts_with("#/"));
                prop_assert!(!skipped.reason.to_string().is_empty());
            }
        }
    }
}

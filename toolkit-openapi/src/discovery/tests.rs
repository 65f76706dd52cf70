//! Each rule of the Discovery reading, on small documents.
#![allow(clippy::panic, clippy::unwrap_used)]

use serde_json::{Value, json};
use url::Url;

use crate::operations::{CompiledTemplate, Location};
use crate::{ReadOperations, ReadOptions, read_operations};

/// A Discovery document of `resources`, with Google's global parameters and two scopes.
fn document(resources: Value) -> Value {
    json!({
        "kind": "discovery#restDescription",
        "discoveryVersion": "v1",
        "id": "demo:v1",
        "name": "demo",
        "version": "v1",
        "title": "Demo API",
        "rootUrl": "https://demo.googleapis.com/",
        "servicePath": "demo/v1/",
        "batchPath": "batch/demo/v1",
        "parameters": {
            "alt": {"type": "string", "location": "query", "default": "json", "enum": ["json", "media"]},
            "fields": {"type": "string", "location": "query", "description": "Selector specifying which fields to include in a partial response."},
            "key": {"type": "string", "location": "query"},
            "oauth_token": {"type": "string", "location": "query"},
            "access_token": {"type": "string", "location": "query"},
            "prettyPrint": {"type": "boolean", "location": "query", "default": "true"},
            "quotaUser": {"type": "string", "location": "query"},
            "upload_protocol": {"type": "string", "location": "query"},
            "uploadType": {"type": "string", "location": "query"},
            "callback": {"type": "string", "location": "query"},
            "$.xgafv": {"type": "string", "location": "query", "enum": ["1", "2"]}
        },
        "auth": {"oauth2": {"scopes": {
            "https://www.googleapis.com/auth/demo": {"description": "See and change your demo"},
            "https://www.googleapis.com/auth/demo.readonly": {"description": "See your demo"}
        }}},
        "schemas": {
            "File": {
                "id": "File",
                "type": "object",
                "properties": {
                    "id": {"type": "string", "readOnly": true},
                    "name": {"type": "string", "annotations": {"required": ["demo.files.create"]}},
                    "size": {"type": "string", "format": "int64"},
                    "parents": {"type": "array", "items": {"type": "string"}},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "owner": {"$ref": "User"}
                }
            },
            "User": {"id": "User", "type": "object", "properties": {"email": {"type": "string"}}},
            "FileList": {"id": "FileList", "type": "object", "properties": {
                "files": {"type": "array", "items": {"$ref": "File"}},
                "nextPageToken": {"type": "string"}
            }}
        },
        "resources": resources
    })
}

fn files() -> Value {
    json!({"files": {"methods": {
        "list": {
            "id": "demo.files.list",
            "httpMethod": "GET",
            "path": "files",
            "parameters": {
                "pageSize": {"type": "integer", "format": "int32", "location": "query", "default": "100", "minimum": "1", "maximum": "1000"},
                "orderBy": {"type": "string", "location": "query", "enum": ["name", "size"], "enumDescriptions": ["By name.", "By size."]},
                "ids": {"type": "string", "location": "query", "repeated": true},
                "minSize": {"type": "string", "format": "int64", "location": "query"}
            },
            "response": {"$ref": "FileList"},
            "scopes": ["https://www.googleapis.com/auth/demo.readonly"]
        },
        "create": {
            "id": "demo.files.create",
            "httpMethod": "POST",
            "path": "files",
            "request": {"$ref": "File"},
            "response": {"$ref": "File"},
            "supportsMediaUpload": true,
            "mediaUpload": {"accept": ["*/*"], "maxSize": "5120GB", "protocols": {
                "simple": {"multipart": true, "path": "/upload/demo/v1/files"},
                "resumable": {"multipart": true, "path": "/resumable/upload/demo/v1/files"}
            }},
            "scopes": ["https://www.googleapis.com/auth/demo", "https://www.googleapis.com/auth/demo.readonly"]
        },
        "get": {
            "id": "demo.files.get",
            "httpMethod": "GET",
            "path": "files/{fileId}",
            "parameterOrder": ["fileId"],
            "parameters": {"fileId": {"type": "string", "location": "path", "required": true}},
            "response": {"$ref": "File"},
            "supportsMediaDownload": true
        },
        "delete": {
            "id": "demo.files.delete",
            "httpMethod": "DELETE",
            "path": "files/{fileId}",
            "parameters": {"fileId": {"type": "string", "location": "path", "required": true}}
        }
    }, "resources": {"revisions": {"methods": {"update": {
        "id": "demo.files.revisions.update",
        "httpMethod": "PATCH",
        "path": "v1/{+name}",
        "flatPath": "v1/files/{filesId}/revisions/{revisionsId}",
        "parameterOrder": ["name"],
        "parameters": {
            "name": {"type": "string", "location": "path", "required": true, "pattern": "^files/[^/]+/revisions/[^/]+$"},
            "updateMask": {"type": "string", "format": "google-fieldmask", "location": "query"}
        },
        "request": {"$ref": "User"},
        "response": {"$ref": "User"}
    }}}}}})
}

fn read() -> ReadOperations {
    read_operations(&document(files()), &ReadOptions::default()).unwrap()
}

fn operation<'r>(read: &'r ReadOperations, name: &str) -> &'r crate::operations::Operation {
    read.operations
        .iter()
        .find(|operation| operation.name() == name)
        .unwrap_or_else(|| {
            panic!(
                "no {name} in {:?}",
                read.operations.iter().map(|o| o.name()).collect::<Vec<_>>()
            )
        })
}

fn input(operation: &crate::operations::Operation) -> &serde_json::Map<String, Value> {
    operation.definition.input_schema()
}

#[test]
fn methods_of_resources_however_deep_are_operations_named_from_their_ids() {
    let read = read();
    let names: Vec<&str> = read.operations.iter().map(|o| o.name()).collect();
    assert_eq!(
        names,
        [
            "demo_files_list",
            "demo_files_create",
            "demo_files_get",
            "demo_files_delete",
            "demo_files_revisions_update"
        ]
    );
    let hints = |name: &str| operation(&read, name).definition.annotations.clone();
    assert_eq!(hints("demo_files_list").read_only, Some(true));
    assert_eq!(hints("demo_files_create").read_only, Some(false));
    assert_eq!(hints("demo_files_delete").destructive, Some(true));
    assert_eq!(hints("demo_files_revisions_update").idempotent, Some(false));
}

#[test]
fn top_level_methods_are_operations_too() {
    let mut document = document(json!({}));
    document["methods"] = json!({"tokeninfo": {
        "id": "oauth2.tokeninfo", "httpMethod": "POST", "path": "oauth2/v2/tokeninfo",
        "parameters": {"access_token": {"type": "string", "location": "query"}}
    }});
    let read = read_operations(&document, &ReadOptions::default()).unwrap();
    let operation = operation(&read, "oauth2_tokeninfo");
    assert_eq!(operation.request.path, "/oauth2/v2/tokeninfo");
    // A method's own `access_token` is its parameter; only the global one is hidden.
    assert!(input(operation)["properties"].get("access_token").is_some());
}

#[test]
fn the_server_is_the_root_and_the_service_path_and_paths_are_below_it() {
    let read = read();
    assert_eq!(read.servers[0].url, "https://demo.googleapis.com/demo/v1/");
    assert!(
        read.servers[0]
            .description
            .as_deref()
            .unwrap()
            .contains("batch/demo/v1")
    );
    let compiled = CompiledTemplate::new(&operation(&read, "demo_files_get").request).unwrap();
    let base = Url::parse(&read.servers[0].url).unwrap();
    let request = compiled
        .request(&base, json!({"fileId": "a/b"}).as_object().unwrap())
        .unwrap();
    assert_eq!(
        request.url.as_str(),
        "https://demo.googleapis.com/demo/v1/files/a%2Fb"
    );
}

#[test]
fn a_reserved_path_parameter_fills_its_segments_and_no_more() {
    let read = read();
    let update = operation(&read, "demo_files_revisions_update");
    assert_eq!(update.request.path, "/v1/{name}");
    let name = &update.request.parameters[0];
    assert_eq!(
        (name.name.as_str(), name.location, name.allow_reserved),
        ("name", Location::Path, true)
    );
    // `flatPath` is not used; `get`'s simple `{fileId}` is not reserved.
    assert!(!operation(&read, "demo_files_get").request.parameters[0].allow_reserved);
    let compiled = CompiledTemplate::new(&update.request).unwrap();
    let base = Url::parse("https://demo.googleapis.com/").unwrap();
    let fill = |name: &str| {
        compiled
            .request(
                &base,
                json!({"name": name, "updateMask": "email"})
                    .as_object()
                    .unwrap(),
            )
            .map(|request| request.url.to_string())
    };
    assert_eq!(
        fill("files/f1/revisions/r 2").unwrap(),
        "https://demo.googleapis.com/v1/files/f1/revisions/r%202?updateMask=email"
    );
    for bad in [
        "files/../../admin",
        "../x",
        "files/f1/revisions/r?alt=media",
        "f#x",
        "/x",
        "x//y",
        "x/",
    ] {
        assert!(fill(bad).is_err(), "{bad}");
    }
    // The property says the value's shape, from the document.
    assert_eq!(
        input(update)["properties"]["name"]["pattern"],
        "^files/[^/]+/revisions/[^/]+$"
    );
}

#[test]
fn parameters_keep_their_rules() {
    let read = read();
    let list = operation(&read, "demo_files_list");
    let properties = &input(list)["properties"];
    assert_eq!(
        properties["pageSize"],
        json!({"type": "integer", "format": "int32", "default": 100, "minimum": 1, "maximum": 1000})
    );
    assert_eq!(properties["orderBy"]["enum"], json!(["name", "size"]));
    assert_eq!(
        properties["orderBy"]["description"],
        "- `name`: By name.\n- `size`: By size."
    );
    assert_eq!(
        properties["ids"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    assert_eq!(
        properties["minSize"],
        json!({"type": "string", "format": "int64"})
    );
    // Of the global parameters, only `fields`.
    let names: Vec<&String> = properties.as_object().unwrap().keys().collect();
    assert_eq!(names, ["pageSize", "orderBy", "ids", "minSize", "fields"]);
    assert!(input(list).get("required").is_none());
    let get = operation(&read, "demo_files_get");
    assert_eq!(input(get)["required"], json!(["fileId"]));

    let compiled = CompiledTemplate::new(&list.request).unwrap();
    let base = Url::parse(&read.servers[0].url).unwrap();
    let request = compiled
        .request(
            &base,
            json!({"ids": ["a", "b&c"], "pageSize": 5, "fields": "files(id,name)"})
                .as_object()
                .unwrap(),
        )
        .unwrap();
    assert_eq!(
        request.url.as_str(),
        "https://demo.googleapis.com/demo/v1/files?pageSize=5&ids=a&ids=b%26c&fields=files%28id%2Cname%29"
    );
}

#[test]
fn bodies_and_answers_are_the_schemas_by_id() {
    let read = read();
    let create = operation(&read, "demo_files_create");
    let schema = input(create);
    let body = &schema["properties"]["body"];
    // The request's variant of `File`: without its read-only properties.
    assert_eq!(body["$ref"], "#/$defs/File.request");
    // `annotations.required` for this method.
    assert_eq!(body["required"], json!(["name"]));
    let file = &schema["$defs"]["File.request"]["properties"];
    // A request never carries a read-only property.
    assert!(file.get("id").is_none(), "{file}");
    assert_eq!(file["size"], json!({"type": "string", "format": "int64"}));
    assert_eq!(
        file["labels"]["additionalProperties"],
        json!({"type": "string"})
    );
    assert_eq!(file["owner"]["$ref"], "#/$defs/User");
    assert!(schema["$defs"].get("User").is_some());
    // The answer keeps it.
    let answer = &read.answers["demo_files_create"];
    assert!(
        answer["$defs"]["File"]["properties"].get("id").is_some(),
        "{answer:?}"
    );
    assert_eq!(
        create.request.accept.as_deref(),
        Some("application/json, */*;q=0.1")
    );
    // Another method's body does not require what `create` requires.
    let update = operation(&read, "demo_files_revisions_update");
    assert!(
        input(update)["properties"]["body"]
            .get("required")
            .is_none()
    );
}

#[test]
fn media_uploads_are_skipped_with_their_reason_and_downloads_said() {
    let read = read();
    assert_eq!(read.skipped.len(), 1, "{:?}", read.skipped);
    let media = &read.skipped[0];
    assert_eq!(
        media.location,
        "#/resources/files/methods/create/mediaUpload"
    );
    assert_eq!(media.method, "POST");
    assert_eq!(media.path, "/upload/demo/v1/files?uploadType=media");
    assert_eq!(media.reason.kind(), "bodyNotJson");
    assert!(media.reason.to_string().contains("*/*"), "{}", media.reason);
    let get = operation(&read, "demo_files_get");
    assert!(
        get.definition
            .description
            .as_deref()
            .unwrap_or("")
            .contains("alt=media")
    );
}

#[test]
fn the_scopes_are_an_oauth2_scheme_and_each_method_requires_its_own() {
    let read = read();
    let scheme = serde_json::to_value(&read.security.schemes["Oauth2"]).unwrap();
    assert_eq!(scheme["type"], "oauth2", "{scheme}");
    let text = scheme.to_string();
    assert!(
        text.contains("https://accounts.google.com/o/oauth2/auth"),
        "{text}"
    );
    assert!(
        text.contains("https://oauth2.googleapis.com/token"),
        "{text}"
    );
    assert!(
        text.contains("https://www.googleapis.com/auth/demo.readonly"),
        "{text}"
    );
    // Each scope is an alternative: any one grants the method.
    let create = serde_json::to_value(&read.security.requirements["demo_files_create"]).unwrap();
    assert_eq!(create.as_array().unwrap().len(), 2, "{create}");
    assert!(create.to_string().contains("auth/demo\""), "{create}");
    assert_eq!(read.security.requirements["demo_files_list"].len(), 1);
    assert!(!read.security.requirements.contains_key("demo_files_get"));
}

#[test]
fn a_skipped_method_is_located_in_the_discovery_document() {
    let mut resources = files();
    resources["files"]["methods"]["copy"] = json!({
        "id": "demo.files.copy", "httpMethod": "POST", "path": "files/{fileId}/copy",
        "parameters": {}
    });
    resources["files"]["methods"]["bad"] = json!({
        "id": "demo.files.bad", "httpMethod": "GET", "path": "files{/segments*}"
    });
    resources["files"]["methods"]["again"] = json!({
        "id": "demo.files.list", "httpMethod": "GET", "path": "files2"
    });
    resources["files"]["methods"]["nothing"] = json!({"httpMethod": "GET"});
    let read = read_operations(&document(resources), &ReadOptions::default()).unwrap();
    let skipped: Vec<(&str, &str)> = read
        .skipped
        .iter()
        .map(|skipped| (skipped.location.as_str(), skipped.reason.kind()))
        .collect();
    assert_eq!(
        skipped,
        [
            ("#/resources/files/methods/copy", "pathMismatch"),
            ("#/resources/files/methods/again", "duplicateName"),
            (
                "#/resources/files/methods/create/mediaUpload",
                "bodyNotJson"
            ),
            ("#/resources/files/methods/bad", "parameterStyle"),
            ("#/resources/files/methods/nothing", "malformed"),
        ]
    );
    assert_eq!(read.skipped[0].path, "files/{fileId}/copy");
    assert!(
        read.skipped[1]
            .reason
            .to_string()
            .contains("#/resources/files/methods/list"),
        "{}",
        read.skipped[1].reason
    );
}

#[test]
fn an_unknown_discovery_version_or_the_directory_is_a_located_error() {
    let mut document = document(files());
    document["discoveryVersion"] = json!("v2");
    let error = read_operations(&document, &ReadOptions::default()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "#/discoveryVersion: the Discovery version \"v2\" is not v1, the one read here"
    );
    let directory =
        json!({"kind": "discovery#directoryList", "discoveryVersion": "v1", "items": []});
    let error = read_operations(&directory, &ReadOptions::default()).unwrap_err();
    assert!(error.to_string().starts_with("#/kind:"), "{error}");
}

#[test]
fn a_data_wrapper_api_sends_its_body_inside_data() {
    let mut document = document(files());
    document["features"] = json!(["dataWrapper"]);
    let read = read_operations(&document, &ReadOptions::default()).unwrap();
    let body = &input(operation(&read, "demo_files_create"))["properties"]["body"];
    assert_eq!(body["required"], json!(["data"]));
    assert_eq!(body["properties"]["data"]["$ref"], "#/$defs/File.request");
}

#[test]
fn deprecated_methods_are_left_out_when_asked() {
    let mut resources = files();
    resources["files"]["methods"]["list"]["deprecated"] = json!(true);
    let read = read_operations(
        &document(resources),
        &ReadOptions::default().deprecated(false),
    )
    .unwrap();
    assert!(
        read.operations
            .iter()
            .all(|operation| operation.name() != "demo_files_list")
    );
}

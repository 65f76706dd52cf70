//! Google's Discovery documents, the real ones: the 611 that PyPI `google-api-python-client`
//! 2.202.0 ships (installed by `scripts/install-test-peers`).
//!
//! - A fixed fifth of them (every fifth file by name, and the seven APIs compared below) is read
//!   as a host reads them at run time: nothing fails, every skip has a reason and a location in
//!   the document, every template compiles, and every tenth input schema. All 611 take about 33 s in a debug build (as
//!   these tests are built), too long here: `toolkit-openapi/examples/discovery_corpus.rs`
//!   reads them all and prints the same totals.
//! - For 32 methods of Drive, Gmail, Cloud Storage, YouTube, Compute Engine, Pub/Sub and Vertex
//!   AI (the `{+name}` ones), the request our operation builds (method, URL, query, JSON body)
//!   is the one the official Python client builds (`build_from_document` with an `HttpMock`,
//!   offline; `scripts/discovery-python-requests.py`), but for the documented differences: the
//!   client adds `alt=json` to every query, orders the query as its arguments come, and writes
//!   a space in a query as `+` (we as `%20`): queries are compared as decoded pairs, sorted.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Map, Value, json};
use toolkit_core::input::InputCheck;
use toolkit_openapi::operations::{CompiledTemplate, Location};
use toolkit_openapi::{ReadOperations, ReadOptions, read_operations};
use url::Url;

/// The venv `scripts/install-test-peers` makes for the Python client.
fn venv() -> PathBuf {
    let venv =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/peers/google-api-python-client");
    assert!(
        venv.join("bin/python").is_file(),
        "google-api-python-client is missing at {}: run scripts/install-test-peers",
        venv.display()
    );
    venv
}

/// The Discovery documents the Python client ships.
fn documents() -> PathBuf {
    let lib = venv().join("lib");
    std::fs::read_dir(&lib)
        .unwrap()
        .find_map(|entry| {
            let dir = entry
                .ok()?
                .path()
                .join("site-packages/googleapiclient/discovery_cache/documents");
            dir.is_dir().then_some(dir)
        })
        .unwrap_or_else(|| panic!("no discovery_cache/documents below {}", lib.display()))
}

fn read(path: &Path) -> ReadOperations {
    let document: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    read_operations(&document, &ReadOptions::default())
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The APIs whose requests are compared with the Python client's.
const COMPARED: &[&str] = &[
    "drive.v3.json",
    "gmail.v1.json",
    "storage.v1.json",
    "youtube.v3.json",
    "compute.v1.json",
    "pubsub.v1.json",
    "aiplatform.v1.json",
];

#[test]
fn a_fifth_of_the_python_clients_documents_read_with_every_skip_explained() {
    let dir = documents();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .collect();
    names.sort();
    assert_eq!(
        names.len(),
        611,
        "google-api-python-client 2.202.0 ships 611 documents"
    );
    let started = Instant::now();
    let (mut documents, mut operations, mut methods) = (0, 0, 0);
    let mut reasons: BTreeMap<&'static str, usize> = BTreeMap::new();
    for (index, name) in names.iter().enumerate() {
        if index % 5 != 0 && !COMPARED.contains(&name.as_str()) {
            continue;
        }
        let path = dir.join(name);
        if name == "index.json" {
            // Google's directory of APIs, not one API: refused, located.
            let document: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            let error = read_operations(&document, &ReadOptions::default()).unwrap_err();
            assert!(error.to_string().starts_with("#/kind:"), "{error}");
            continue;
        }
        let document: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        methods += count_methods(&document);
        let read = read_operations(&document, &ReadOptions::default())
            .unwrap_or_else(|error| panic!("{name}: {error}"));
        documents += 1;
        operations += read.operations.len();
        let media = read
            .skipped
            .iter()
            .filter(|skipped| skipped.location.ends_with("/mediaUpload"))
            .count();
        // Every method is an operation or a located skip; a media upload is one more skip.
        assert_eq!(
            read.operations.len() + read.skipped.len() - media,
            count_methods(&document),
            "{name}"
        );
        for skipped in &read.skipped {
            assert!(
                skipped.location.starts_with("#/resources/")
                    || skipped.location.starts_with("#/methods/"),
                "{name}: {skipped:?}"
            );
            assert!(!skipped.reason.to_string().is_empty());
            *reasons.entry(skipped.reason.kind()).or_default() += 1;
        }
        for (index, operation) in read.operations.iter().enumerate() {
            CompiledTemplate::new(&operation.request)
                .unwrap_or_else(|problems| panic!("{name} {}: {problems:?}", operation.name()));
            // Compiling a schema is the slow part: every tenth.
            if index % 10 == 0 {
                assert!(
                    InputCheck::new(operation.definition.input_schema()).is_complete(),
                    "{name} {}",
                    operation.name()
                );
            }
        }
    }
    println!(
        "Discovery: {documents} documents, {methods} methods, {operations} operations, skipped {reasons:?}, in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(documents >= 120, "{documents}");
    // Only media uploads (their body is the media) and, in all 611, the repeated object query
    // parameter `extensions` of discoveryengine v1's and v1alpha's `dataConnector.mcp` are no
    // tools.
    assert!(
        reasons
            .keys()
            .all(|kind| ["bodyNotJson", "objectParameter"].contains(kind)),
        "{reasons:?}"
    );
}

fn count_methods(resource: &Value) -> usize {
    let own = resource
        .get("methods")
        .and_then(Value::as_object)
        .map_or(0, Map::len);
    let nested: usize = resource
        .get("resources")
        .and_then(Value::as_object)
        .map_or(0, |resources| resources.values().map(count_methods).sum());
    own + nested
}

/// The methods compared: (document, method id, arguments by their names on the wire).
fn cases() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "drive.v3.json",
            "drive.files.list",
            json!({"pageSize": 10, "q": "name contains 'x y'", "orderBy": "modifiedTime desc", "fields": "files(id,name)", "corpora": "user"}),
        ),
        (
            "drive.v3.json",
            "drive.files.get",
            json!({"fileId": "abc123", "supportsAllDrives": true}),
        ),
        (
            "drive.v3.json",
            "drive.files.create",
            json!({"supportsAllDrives": true, "body": {"name": "n.txt", "parents": ["p1"]}}),
        ),
        (
            "drive.v3.json",
            "drive.files.update",
            json!({"fileId": "f1", "addParents": "a,b", "body": {"name": "x"}}),
        ),
        (
            "drive.v3.json",
            "drive.files.delete",
            json!({"fileId": "f1"}),
        ),
        (
            "drive.v3.json",
            "drive.files.copy",
            json!({"fileId": "f 1/é", "body": {"name": "c"}}),
        ),
        (
            "drive.v3.json",
            "drive.permissions.create",
            json!({"fileId": "f1", "sendNotificationEmail": false, "body": {"role": "reader", "type": "user", "emailAddress": "a@b.c"}}),
        ),
        (
            "gmail.v1.json",
            "gmail.users.messages.list",
            json!({"userId": "me", "q": "from:a@b.c is:unread", "maxResults": 5, "labelIds": ["INBOX", "UNREAD"]}),
        ),
        (
            "gmail.v1.json",
            "gmail.users.messages.get",
            json!({"userId": "me", "id": "m1", "format": "metadata", "metadataHeaders": ["From", "Subject"]}),
        ),
        (
            "gmail.v1.json",
            "gmail.users.messages.send",
            json!({"userId": "me", "body": {"raw": "aGk="}}),
        ),
        (
            "gmail.v1.json",
            "gmail.users.labels.patch",
            json!({"userId": "me", "id": "L1", "body": {"name": "n"}}),
        ),
        (
            "gmail.v1.json",
            "gmail.users.messages.batchDelete",
            json!({"userId": "me", "body": {"ids": ["a", "b"]}}),
        ),
        (
            "storage.v1.json",
            "storage.objects.list",
            json!({"bucket": "b", "prefix": "a/b/", "delimiter": "/", "maxResults": 3, "versions": true}),
        ),
        (
            "storage.v1.json",
            "storage.objects.get",
            json!({"bucket": "b", "object": "dir/file name.txt"}),
        ),
        (
            "storage.v1.json",
            "storage.buckets.insert",
            json!({"project": "p", "body": {"name": "b"}}),
        ),
        (
            "storage.v1.json",
            "storage.objects.delete",
            json!({"bucket": "b", "object": "o", "generation": "123"}),
        ),
        (
            "storage.v1.json",
            "storage.objects.copy",
            json!({"sourceBucket": "s", "sourceObject": "a/b", "destinationBucket": "d", "destinationObject": "c", "body": {}}),
        ),
        (
            "youtube.v3.json",
            "youtube.videos.list",
            json!({"part": ["snippet", "statistics"], "id": ["v1", "v2"], "maxResults": 5}),
        ),
        (
            "youtube.v3.json",
            "youtube.playlistItems.insert",
            json!({"part": ["snippet"], "body": {"snippet": {"playlistId": "p", "resourceId": {"kind": "youtube#video", "videoId": "v"}}}}),
        ),
        (
            "youtube.v3.json",
            "youtube.search.list",
            json!({"part": ["snippet"], "q": "rust lang", "type": ["video"], "maxResults": 3}),
        ),
        (
            "youtube.v3.json",
            "youtube.comments.delete",
            json!({"id": "c1"}),
        ),
        (
            "compute.v1.json",
            "compute.instances.list",
            json!({"project": "p", "zone": "us-central1-a", "filter": "name = x", "maxResults": 10}),
        ),
        (
            "compute.v1.json",
            "compute.instances.insert",
            json!({"project": "p", "zone": "z", "requestId": "r", "body": {"name": "i", "machineType": "zones/z/machineTypes/n1"}}),
        ),
        (
            "compute.v1.json",
            "compute.instances.stop",
            json!({"project": "p", "zone": "z", "instance": "i"}),
        ),
        (
            "compute.v1.json",
            "compute.firewalls.patch",
            json!({"project": "p", "firewall": "f", "body": {"name": "f", "priority": 100}}),
        ),
        (
            "pubsub.v1.json",
            "pubsub.projects.topics.publish",
            json!({"topic": "projects/p/topics/t", "body": {"messages": [{"data": "aGk="}]}}),
        ),
        (
            "pubsub.v1.json",
            "pubsub.projects.topics.list",
            json!({"project": "projects/p", "pageSize": 5}),
        ),
        (
            "pubsub.v1.json",
            "pubsub.projects.subscriptions.pull",
            json!({"subscription": "projects/p/subscriptions/s", "body": {"maxMessages": 1}}),
        ),
        (
            "pubsub.v1.json",
            "pubsub.projects.topics.get",
            json!({"topic": "projects/my-proj/topics/t.1~x"}),
        ),
        (
            "aiplatform.v1.json",
            "aiplatform.projects.locations.endpoints.predict",
            json!({"endpoint": "projects/p/locations/us-central1/endpoints/e1", "body": {"instances": [{"a": 1}]}}),
        ),
        (
            "aiplatform.v1.json",
            "aiplatform.projects.locations.models.list",
            json!({"parent": "projects/p/locations/l", "filter": "x", "pageSize": 2, "readMask": "name"}),
        ),
        (
            "aiplatform.v1.json",
            "aiplatform.projects.locations.operations.delete",
            json!({"name": "projects/p/locations/l/operations/o"}),
        ),
    ]
}

/// What the Python client builds for each case.
fn python_requests(cases: &[(&str, &str, Value)]) -> Vec<Value> {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/discovery-python-requests.py");
    let given = json!({
        "documents": documents(),
        "cases": cases.iter().map(|(document, method, args)| json!({"document": document, "method": method, "args": args})).collect::<Vec<_>>(),
    });
    let mut child = Command::new(venv().join("bin/python"))
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    serde_json::to_writer(child.stdin.take().unwrap(), &given).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    serde_json::from_slice(&output.stdout).unwrap()
}

/// A URL's query as decoded pairs, sorted, without the client's `alt=json`.
fn query(url: &Url) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = url
        .query_pairs()
        .into_owned()
        .filter(|(key, value)| !(key == "alt" && value == "json"))
        .collect();
    pairs.sort();
    pairs
}

#[test]
fn our_requests_are_the_ones_googles_python_client_builds() {
    let cases = cases();
    let expected = python_requests(&cases);
    let dir = documents();
    let mut reads: BTreeMap<&str, ReadOperations> = BTreeMap::new();
    for ((document, method, args), python) in cases.iter().zip(&expected) {
        assert!(python.get("error").is_none(), "{method}: {python}");
        let read = reads
            .entry(document)
            .or_insert_with(|| read(&dir.join(document)));
        let name = method.replace('.', "_");
        let operation = read
            .operations
            .iter()
            .find(|operation| operation.name() == name)
            .unwrap_or_else(|| panic!("no operation {name}"));
        // The arguments by their wire names, as our properties.
        let mut input = Map::new();
        for (wire, value) in args.as_object().unwrap() {
            let property = if wire == "body" {
                "body".to_owned()
            } else {
                operation
                    .request
                    .parameters
                    .iter()
                    .find(|parameter| {
                        parameter.name == *wire && parameter.location != Location::Header
                    })
                    .unwrap_or_else(|| panic!("{name} has no parameter {wire}"))
                    .property
                    .clone()
            };
            input.insert(property, value.clone());
        }
        InputCheck::new(operation.definition.input_schema())
            .check(&Value::Object(input.clone()))
            .unwrap_or_else(|error| panic!("{name}: {error}"));
        let base = Url::parse(&read.servers[0].url).unwrap();
        let ours = CompiledTemplate::new(&operation.request)
            .unwrap()
            .request(&base, &input)
            .unwrap_or_else(|error| panic!("{name}: {error}"));
        let theirs = Url::parse(python["uri"].as_str().unwrap()).unwrap();
        assert_eq!(ours.method.as_str(), python["method"], "{name}");
        assert_eq!(
            (ours.url.scheme(), ours.url.host_str(), ours.url.path()),
            (theirs.scheme(), theirs.host_str(), theirs.path()),
            "{name}"
        );
        assert_eq!(query(&ours.url), query(&theirs), "{name}");
        let body: Value = ours
            .body
            .as_deref()
            .map_or(Value::Null, |bytes| serde_json::from_slice(bytes).unwrap());
        assert_eq!(body, python["body"], "{name}");
        if !body.is_null() {
            assert_eq!(ours.headers["content-type"], "application/json", "{name}");
        }
    }
    assert_eq!(expected.len(), 32);
}

/// Pub/Sub's real document served by the HTTP source to a server on 127.0.0.1: a resource name
/// fills its segments of `v1/{+topic}:publish`, and no name a model gives reaches beyond them.
#[tokio::test]
async fn the_http_source_sends_a_resource_name_into_its_segments_and_no_further() {
    use toolkit_core::{Reason, ToolSource};
    use toolkit_http::HttpSource;

    use crate::http::Server;
    use crate::support::object;

    let server = Server::start().await;
    let read = read(&documents().join("pubsub.v1.json"));
    let source = HttpSource::builder(
        "pubsub",
        format!("{}/", server.base),
        reqwest::Client::new(),
    )
    .operations(read.operations)
    .build()
    .unwrap();
    let context = toolkit_core::CallContext::new();
    source
        .call(
            "pubsub_projects_topics_publish",
            object(json!({"topic": "projects/p-1/topics/t.1", "body": {"messages": [{"data": "aGk="}]}})),
            &context,
        )
        .await
        .unwrap();
    let request = server.last();
    assert_eq!(request.method, "POST");
    assert_eq!(request.target, "/v1/projects/p-1/topics/t.1:publish");
    assert_eq!(
        serde_json::from_slice::<Value>(&request.body).unwrap(),
        json!({"messages": [{"data": "aGk="}]})
    );
    let sent = server.recorded().len();
    for topic in [
        "projects/p/../../v1/projects/q/topics/t",
        "../admin",
        "projects/p/topics/t:publish?alt=media",
        "projects/p/topics/t#x",
        "/projects/p",
        "projects//p",
        "projects/p/",
        "..\\admin",
    ] {
        let error = source
            .call(
                "pubsub_projects_topics_get",
                object(json!({ "topic": topic })),
                &context,
            )
            .await
            .unwrap_err();
        assert!(
            matches!(error.reason, Reason::InvalidInput { .. }),
            "{topic}: {error:?}"
        );
    }
    assert_eq!(server.recorded().len(), sent, "a refused call sent nothing");
    // What is not structure is encoded, inside its own segments.
    source
        .call(
            "pubsub_projects_topics_get",
            object(json!({"topic": "projects/a b/topics/%2F..%2Fx@y:z"})),
            &context,
        )
        .await
        .unwrap();
    assert_eq!(
        server.last().target,
        "/v1/projects/a%20b/topics/%252F..%252Fx@y:z"
    );
}

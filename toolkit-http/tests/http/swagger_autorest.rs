//! Swagger 2.0 read by our own conversion, judged by AutoRest's test server (npm
//! `@microsoft.azure/autorest.testserver` 3.3.51, installed by `scripts/install-test-peers`):
//! every one of its 74 Swagger 2.0 documents reads, each skip located and with its reason; then a
//! sample of operations of its body, URL, header, query (`collectionFormat`), form and Azure
//! extension documents is called through an [`HttpSource`] made from the operations read, on
//! the server, whose routes check what they get (a wrong request is a 400) and count each route
//! they matched in their coverage report.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::process::Command;
use toolkit_core::{CallContext, ToolSource};
use toolkit_http::HttpSource;
use toolkit_openapi::{ReadOperations, ReadOptions, decode_document, read_operations};

use crate::peers::ready_line;
use crate::processes::peers;

/// The share of the documents' operations that must be read as tools.
const GOAL: f64 = 0.80;

/// The installed package.
fn package() -> PathBuf {
    peers().join("autorest-testserver/node_modules/@microsoft.azure/autorest.testserver")
}

/// The JSON files of `directory`, sorted.
pub(crate) fn json_files(directory: &std::path::Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "json")
        })
        .collect();
    files.sort();
    files
}

/// Every Swagger 2.0 document of the package, by file name, read.
fn documents() -> Vec<(String, ReadOperations)> {
    let directory = package().join("swagger");
    assert!(
        directory.is_dir(),
        "AutoRest's test server is missing at {}: run scripts/install-test-peers",
        directory.display()
    );
    json_files(&directory)
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let document = decode_document(&text).unwrap();
            // Only Swagger 2.0 documents (all 74 JSON files of the folder today).
            document.get("swagger")?;
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let read = read_operations(&document, &ReadOptions::default())
                .unwrap_or_else(|error| panic!("{name}: {error}"));
            Some((name, read))
        })
        .collect()
}

#[test]
fn every_swagger_document_of_the_test_server_reads_with_located_skips() {
    let documents = documents();
    assert_eq!(documents.len(), 74);
    let (mut read, mut skipped) = (0, 0);
    let mut kinds: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for (name, document) in &documents {
        read += document.operations.len();
        skipped += document.skipped.len();
        for skip in &document.skipped {
            assert!(
                skip.location.starts_with("#/paths/") || skip.location.starts_with("#/x-ms-paths/"),
                "{name}: {skip:?}"
            );
            assert!(!skip.reason.to_string().is_empty(), "{name}: {skip:?}");
            *kinds.entry(skip.reason.kind()).or_default() += 1;
        }
    }
    #[allow(clippy::cast_precision_loss)]
    let share = read as f64 / (read + skipped) as f64;
    println!(
        "autorest.testserver: 74 Swagger 2.0 documents, {read} operations read, {skipped} skipped ({:.1} % read); skips by kind: {kinds:?}",
        share * 100.0
    );
    assert!(share >= GOAL, "{:.3} < {GOAL}", share);
}

/// One call: the document, the operation, its input.
struct Call {
    document: &'static str,
    operation: &'static str,
    input: Value,
}

fn call(document: &'static str, operation: &'static str, input: Value) -> Call {
    Call {
        document,
        operation,
        input,
    }
}

/// The one value of the `enum` of `property` in the operation's input schema (the documents
/// hold the exact strings the server expects, such as multi-byte ones).
fn only_value(read: &ReadOperations, operation: &str, property: &str) -> Value {
    let operation = read
        .operations
        .iter()
        .find(|candidate| candidate.name() == operation)
        .unwrap_or_else(|| panic!("no operation {operation}"));
    operation.definition.input_schema()["properties"][property]["enum"][0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampled_operations_are_accepted_by_the_test_server() {
    let documents = documents();
    let by_name = |name: &str| {
        &documents
            .iter()
            .find(|(file, _)| file == name)
            .unwrap_or_else(|| panic!("no document {name}"))
            .1
    };
    // A list joined by tabs has no 3.0 style: its operation is skipped, with the reason.
    let tsv = by_name("url.json")
        .skipped
        .iter()
        .find(|skip| skip.location == "#/paths/~1queries~1array~1tsv~1string~1valid/get")
        .unwrap();
    assert_eq!(tsv.reason.kind(), "parameterStyle");
    let strings = by_name("body-string.json");
    let urls = by_name("url.json");
    let calls = vec![
        // Bodies: a JSON string, integers, under the body parameter's own name.
        call("body-string.json", "string_putNull", json!({})),
        call(
            "body-string.json",
            "string_putEmpty",
            json!({ "stringBody": "" }),
        ),
        call(
            "body-string.json",
            "string_putMbcs",
            json!({ "stringBody": only_value(strings, "string_putMbcs", "stringBody") }),
        ),
        call(
            "body-string.json",
            "string_putWhitespace",
            json!({ "stringBody": only_value(strings, "string_putWhitespace", "stringBody") }),
        ),
        call("body-string.json", "string_getMbcs", json!({})),
        call(
            "body-integer.json",
            "int_putMax32",
            json!({ "intBody": 2_147_483_647 }),
        ),
        call(
            "body-integer.json",
            "int_putMin64",
            json!({ "intBody": i64::MIN }),
        ),
        call(
            "body-integer.json",
            "int_putUnixTimeDate",
            json!({ "intBody": 1_460_505_600 }),
        ),
        // The path, and the query in the styles of `collectionFormat`.
        call(
            "url.json",
            "paths_getBooleanTrue",
            json!({ "boolPath": true }),
        ),
        call(
            "url.json",
            "paths_stringUnicode",
            json!({ "stringPath": only_value(urls, "paths_stringUnicode", "stringPath") }),
        ),
        call(
            "url.json",
            "paths_stringUrlEncoded",
            json!({ "stringPath": "begin!*'();:@ &=+$,/?#[]end" }),
        ),
        call(
            "url.json",
            "queries_getIntNegativeOneMillion",
            json!({ "intQuery": -1_000_000 }),
        ),
        call("url.json", "queries_getBooleanNull", json!({})),
        call(
            "url.json",
            "queries_ArrayStringCsvValid",
            json!({ "arrayQuery": ["ArrayQuery1", "begin!*'();:@ &=+$,/?#[]end", "", ""] }),
        ),
        call(
            "url.json",
            "queries_ArrayStringSsvValid",
            json!({ "arrayQuery": ["ArrayQuery1", "begin!*'();:@ &=+$,/?#[]end", "", ""] }),
        ),
        call(
            "url.json",
            "queries_ArrayStringPipesValid",
            json!({ "arrayQuery": ["ArrayQuery1", "begin!*'();:@ &=+$,/?#[]end", "", ""] }),
        ),
        call(
            "url-multi-collectionFormat.json",
            "queries_ArrayStringMultiValid",
            json!({ "arrayQuery": ["ArrayQuery1", "begin!*'();:@ &=+$,/?#[]end", "", ""] }),
        ),
        call(
            "url-multi-collectionFormat.json",
            "queries_ArrayStringMultiEmpty",
            json!({}),
        ),
        // Headers.
        call(
            "header.json",
            "header_paramInteger",
            json!({ "scenario": "positive", "value": 1 }),
        ),
        call(
            "header.json",
            "header_paramString",
            json!({ "scenario": "valid", "value": "The quick brown fox jumps over the lazy dog" }),
        ),
        // A form of `formData` parameters, shared ones among them.
        call(
            "body-formdata-urlencoded.json",
            "formdataurlencoded_updatePetWithForm",
            json!({ "petId": 1, "body": { "pet_type": "dog", "pet_food": "meat", "pet_age": 42, "name": "Fido" } }),
        ),
        call(
            "body-formdata-urlencoded.json",
            "formdataurlencoded_partialConstantBody",
            json!({ "body": { "grant_type": "access_token", "service": "bar", "access_token": "foo" } }),
        ),
        // Azure's documents: shared path and query parameters, `x-ms-` headers.
        call(
            "azure-special-properties.json",
            "subscriptionInCredentials_postMethodGlobalValid",
            json!({ "subscriptionId": "1234-5678-9012-3456" }),
        ),
        call(
            "azure-special-properties.json",
            "apiVersionDefault_getMethodGlobalValid",
            json!({ "api-version": "2015-07-01-preview" }),
        ),
        call(
            "azure-special-properties.json",
            "x-ms-client-request-id_ParamGet",
            json!({ "x-ms-client-request-id": "9C4D50EE-2D56-4CD3-8152-34347DC9F2B0" }),
        ),
    ];

    // Its coverage files go to a directory of the test's, not into the installed package.
    let coverage = std::env::temp_dir().join(format!("autorest-coverage-{}", std::process::id()));
    std::fs::create_dir_all(&coverage).unwrap();
    let port = crate::processes::free_port();
    let mut server = Command::new("node")
        .arg(package().join("dist/cli/cli.js"))
        .args(["run", "--port", &port.to_string(), "--coverageDirectory"])
        .arg(&coverage)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let started = ready_line(&mut server, Duration::from_secs(60), |line| {
        line.contains("Started server on port").then_some(())
    })
    .await;
    assert!(started.is_some(), "the test server did not start");
    let base = format!("http://127.0.0.1:{port}");
    // The counters of its older routes, vanilla and Azure (its newer routes, such as the
    // forms', count elsewhere: their 200 is the proof).
    let report = || async {
        let mut counters = Map::new();
        for category in ["report", "report/azure"] {
            let answer = reqwest::get(format!("{base}/{category}"))
                .await
                .unwrap()
                .json::<Map<String, Value>>()
                .await
                .unwrap();
            counters.extend(answer);
        }
        counters
    };
    let before = report().await;

    let mut refused = Vec::new();
    for Call {
        document,
        operation,
        input,
    } in calls
    {
        let read = by_name(document);
        // Azure's clients send a request id with every request, which its routes ask for.
        let mut headers = reqwest::header::HeaderMap::new();
        if document.starts_with("azure") {
            headers.insert(
                "x-ms-client-request-id",
                reqwest::header::HeaderValue::from_static("9C4D50EE-2D56-4CD3-8152-34347DC9F2B0"),
            );
        }
        let client = reqwest::Client::builder()
            .default_headers(headers)
            .build()
            .unwrap();
        let source = HttpSource::builder(document, &base, client)
            .operations(read.operations.clone())
            .build()
            .unwrap();
        if let Err(error) = source
            .call(
                operation,
                input.as_object().unwrap().clone(),
                &CallContext::new(),
            )
            .await
        {
            refused.push(format!("{document} {operation} {input}: {error}"));
        }
    }
    assert!(refused.is_empty(), "refused:\n{}", refused.join("\n"));

    // The server counted each call against a route of its own.
    let after = report().await;
    let counted: Vec<&String> = after
        .iter()
        .filter(|(name, count)| before.get(*name) != Some(count))
        .map(|(name, _)| name)
        .collect();
    println!(
        "autorest.testserver coverage: {} routes hit: {counted:?}",
        counted.len()
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&coverage);
    assert!(counted.len() >= 23, "{counted:?}");
}

/// The documents Prism judges (Prism reads Swagger 2.0 itself; these are the larger ones it
/// starts on: others refer to example files the package does not ship).
const JUDGED: &[&str] = &[
    "lro.json",
    "body-array.json",
    "validation.json",
    "required-optional.json",
];

/// Every operation of four of the documents, read by our conversion, called through an
/// [`HttpSource`] on Prism (`target/peers/prism`, see `prism_judge`), which validates each request
/// against the 2.0 document as written: none may be refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prism_accepts_the_requests_of_converted_documents() {
    let directory = package().join("swagger");
    let judged = futures_util::future::join_all(JUDGED.iter().map(|name| {
        let file = directory.join(name);
        async move {
            let prism = crate::peers::start_prism(&file).await;
            let text = std::fs::read_to_string(&file).unwrap();
            let read =
                read_operations(&decode_document(&text).unwrap(), &ReadOptions::default()).unwrap();
            // Where the document's server puts its paths (`basePath`), on Prism.
            let prefix = read
                .servers
                .first()
                .map(|server| {
                    let url = server.url.as_str();
                    let path = url
                        .split_once("://")
                        .map_or(url, |(_, rest)| rest.find('/').map_or("", |at| &rest[at..]));
                    path.trim_end_matches('/').to_owned()
                })
                .unwrap_or_default();
            let base = format!("http://127.0.0.1:{}{prefix}", prism.port);
            let source = std::sync::Arc::new(
                HttpSource::builder(*name, &base, reqwest::Client::new())
                    .operations(read.operations.clone())
                    .security(
                        read.security.schemes.clone(),
                        read.security.requirements.clone(),
                        crate::prism_judge::AnyCredential(read.security.schemes.clone()),
                    )
                    .build()
                    .unwrap(),
            );
            let operations = read.operations.clone();
            let outcomes =
                crate::prism_judge::call_every(name, &operations, |operation, _, input| {
                    let source = std::sync::Arc::clone(&source);
                    async move {
                        let answer = source
                            .call(operation.name(), input, &CallContext::new())
                            .await;
                        (answer, false)
                    }
                })
                .await;
            drop(prism);
            (*name, outcomes)
        }
    }))
    .await;
    let (mut requests, mut refused, mut no_input) = (0, Vec::new(), 0);
    for (_, outcomes) in &judged {
        for (label, outcome) in outcomes {
            match outcome {
                crate::prism_judge::Outcome::Refused(reason) => {
                    requests += 1;
                    refused.push(format!("{label}: {reason}"));
                }
                crate::prism_judge::Outcome::NoInput => no_input += 1,
                _ => requests += 1,
            }
        }
    }
    println!(
        "Prism on {} converted Swagger 2.0 documents: {requests} requests, {} refused, {no_input} without an input",
        JUDGED.len(),
        refused.len()
    );
    assert!(refused.is_empty(), "refused:\n{}", refused.join("\n"));
    assert!(requests > 100, "{requests}");
}

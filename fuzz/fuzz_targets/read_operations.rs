//! Fuzzes document decoding (JSON or YAML text) and `read_operations`: nothing panics, every
//! operation of the document is read or skipped, and every operation read builds into an HTTP
//! source and round-trips as catalog data.
//!
//! `cargo +nightly fuzz run read_operations -- -max_total_time=600`
//! (seed it with the documents of the corpus: `cp ../shared/corpus/openapi/* fuzz/corpus/read_operations/`)
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use toolkit_runtime::http::{HttpSource, Operation};
use toolkit_runtime::openapi::{ReadOptions, decode_document, read_operations};

fn client() -> reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(reqwest::Client::new).clone()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(document) = decode_document(text) else {
        return;
    };
    let Ok(read) = read_operations(&document, &ReadOptions::default()) else {
        return;
    };
    for skipped in &read.skipped {
        assert!(skipped.location.starts_with("#/paths"), "{skipped:?}");
    }
    // Every operation the reader gives is a template a source accepts.
    if let Err(error) = HttpSource::builder("fuzz", "http://127.0.0.1:9", client())
        .operations(read.operations.clone())
        .build()
    {
        panic!("the reader gave operations no source accepts: {error}");
    }
    let text = serde_json::to_string(&read.operations).expect("operations serialize");
    let back: Vec<Operation> = serde_json::from_str(&text).expect("operations deserialize");
    assert_eq!(back, read.operations);
});

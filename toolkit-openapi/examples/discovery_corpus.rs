//! Reads every Google Discovery document of a directory (by default the 611 that PyPI
//! `google-api-python-client` ships, installed by `scripts/install-test-peers`) and prints the
//! totals: documents, operations, skips by reason, and the time taken.
//!
//! ```text
//! cargo run --release -p toolkit-openapi --example discovery_corpus [DIR]
//! ```
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use toolkit_openapi::{ReadOptions, read_operations};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = match std::env::args_os().nth(1) {
        Some(dir) => PathBuf::from(dir),
        None => {
            installed().ok_or("no documents: run scripts/install-test-peers or give a directory")?
        }
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    let started = Instant::now();
    let (mut documents, mut operations, mut failed) = (0, 0, Vec::new());
    let mut reasons: BTreeMap<&'static str, usize> = BTreeMap::new();
    for path in &paths {
        let document: serde_json::Value = serde_json::from_slice(&std::fs::read(path)?)?;
        match read_operations(&document, &options()) {
            Ok(read) => {
                documents += 1;
                operations += read.operations.len();
                for skipped in &read.skipped {
                    *reasons.entry(skipped.reason.kind()).or_default() += 1;
                }
            }
            Err(error) => failed.push(format!("{}: {error}", path.display())),
        }
    }
    println!(
        "{documents} documents read, {} refused, {operations} operations, skipped {:?}, in {:.1} s",
        failed.len(),
        reasons,
        started.elapsed().as_secs_f64()
    );
    for failure in failed {
        println!("  {failure}");
    }
    Ok(())
}

/// The documents of the Python client that `scripts/install-test-peers` installs.
fn installed() -> Option<PathBuf> {
    let lib =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/peers/google-api-python-client/lib");
    std::fs::read_dir(lib).ok()?.find_map(|entry| {
        let dir = entry
            .ok()?
            .path()
            .join("site-packages/googleapiclient/discovery_cache/documents");
        dir.is_dir().then_some(dir)
    })
}

/// The options read with: schemas standing alone, as a host reads at run time, unless
/// `SHARED_DEFS=1` asks for the generator's shared `$defs`.
fn options() -> ReadOptions {
    let shared = std::env::var_os("SHARED_DEFS").is_some_and(|value| value == "1");
    ReadOptions::default().shared_defs(shared)
}

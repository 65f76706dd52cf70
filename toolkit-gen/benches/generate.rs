//! Generating GitHub's REST description (13 MB, 1,223 operations): the document read by the
//! runtime's reader and every operation's input types emitted as one formatted module, as
//! `toolkit-gen openapi api.github.com.json -o out.rs` does. Goal: ≤ 2 s for the CLI, ≥ 99 % of
//! the operations fully typed (cargo-progenitor 0.15.1 panics on this document after 10.2 s).
//!
//! `scripts/install-test-peers && cargo bench -p toolkit-gen --bench generate`
#![allow(clippy::unwrap_used, clippy::panic)]

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use std::collections::{HashMap, HashSet};

use toolkit_gen::emit::{EmitOptions, SourceOptions, openapi_module, openapi_source};
use toolkit_runtime::openapi::{ReadOptions, read_operations};

fn github_description() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/peers/node_modules/@octokit/openapi/generated/api.github.com.json");
    std::fs::read_to_string(&path).unwrap_or_else(|error| {
        panic!(
            "GitHub's description is missing at {} ({error}): run scripts/install-test-peers",
            path.display()
        )
    })
}

fn generate_github(c: &mut Criterion) {
    let text = github_description();
    let document: serde_json::Value = serde_json::from_str(&text).unwrap();
    let read = read_operations(&document, &ReadOptions::default()).unwrap();
    let module = openapi_module("api.github.com.json", &read, &EmitOptions::default());
    let typed = module.tools.iter().filter(|t| t.is_typed()).count();
    println!(
        "github: {} operations, {typed} fully typed ({:.2} %), {} bytes of code",
        module.tools.len(),
        module.typed_share() * 100.0,
        module.code.len()
    );
    let roots: HashSet<&str> = module.tools.iter().map(|t| t.root_type.as_str()).collect();
    let all = duplicates(&module.code, &HashSet::new());
    let shared = duplicates(&module.code, &roots);
    #[allow(clippy::cast_precision_loss)]
    let share =
        |(types, duplicates): (usize, usize)| duplicates as f64 * 100.0 / types.max(1) as f64;
    println!(
        "github: {} types ({} tool inputs, one per tool); of the others, {} have a body equal to \
         another's ({:.2} %); counting the tool inputs, {} of {} ({:.2} %)",
        all.0,
        all.0 - shared.0,
        shared.1,
        share(shared),
        all.1,
        all.0,
        share(all)
    );
    let whole = openapi_source(
        "api.github.com.json",
        &read,
        &SourceOptions::new("github"),
        &EmitOptions::default(),
    );
    println!(
        "github: the whole module (types, source type, embedded operations): {} bytes, {} lines",
        whole.code.len(),
        whole.code.lines().count()
    );
    let mut group = c.benchmark_group("generate");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("github (parse + read + emit)", |b| {
        b.iter(|| {
            let document: serde_json::Value = serde_json::from_str(black_box(&text)).unwrap();
            let read = read_operations(&document, &ReadOptions::default()).unwrap();
            openapi_module("api.github.com.json", &read, &EmitOptions::default())
        });
    });
    group.bench_function("github (emit only)", |b| {
        b.iter(|| {
            openapi_module(
                "api.github.com.json",
                black_box(&read),
                &EmitOptions::default(),
            )
        });
    });
    group.finish();
}

/// The number of types in `code` (a formatted module), those named in `skip` aside, and how many
/// of them have a body (what follows the name, field documentation included) equal to an earlier
/// one's.
fn duplicates(code: &str, skip: &HashSet<&str>) -> (usize, usize) {
    let mut bodies: HashMap<String, usize> = HashMap::new();
    let mut lines = code.lines();
    let mut types = 0;
    while let Some(line) = lines.next() {
        let Some((kind, rest)) = ["pub struct ", "pub enum ", "pub type "]
            .iter()
            .find_map(|start| line.strip_prefix(start).map(|rest| (*start, rest)))
        else {
            continue;
        };
        let name_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let mut body = format!("{kind}{}", &rest[name_end..]);
        if !(line.ends_with(';') || line.ends_with("{}")) {
            for inner in lines.by_ref() {
                body.push('\n');
                body.push_str(inner);
                if inner == "}" {
                    break;
                }
            }
        }
        if line.contains("(__tk::HttpSource)") || skip.contains(&rest[..name_end]) {
            continue;
        }
        types += 1;
        *bodies.entry(body).or_default() += 1;
    }
    let duplicates = bodies.values().map(|count| count - 1).sum();
    (types, duplicates)
}

criterion_group!(benches, generate_github);
criterion_main!(benches);

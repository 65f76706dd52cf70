//! `toolkit-gen search`: tool search over a catalog, from the command line.
//!
//! The JSON printed for a query is exactly what the `tool_search` tool of
//! [`ToolSearch`] gives a model, so a whole evaluation runs in one
//! process: `--queries FILE` reads one query per line and prints one JSON result per line.

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};
use toolkit_runtime::{
    BoxFuture, JsonObject, Reason, ToolDefinition, ToolSource, ToolSourceError, Toolkit,
    ToolkitOptions, definition::decode_catalog, search::SearchOptions, search::ToolSearch,
};

/// What to search for: one query, or a file of them.
#[derive(Debug)]
pub enum Queries<'a> {
    /// One query.
    One(&'a str),
    /// A file with one query per line.
    File(&'a Path),
}

/// A catalog's tools, which a search lists and never runs.
struct Listed;

impl ToolSource for Listed {
    fn name(&self) -> &str {
        "catalog"
    }

    fn discover(&self) -> BoxFuture<'_, Result<Vec<ToolDefinition>, ToolSourceError>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    fn call<'a>(
        &'a self,
        _: &'a str,
        _: JsonObject,
        _: &'a toolkit_runtime::CallContext,
    ) -> BoxFuture<'a, Result<Value, ToolSourceError>> {
        Box::pin(async {
            Err(ToolSourceError::new(
                "catalog",
                Reason::unsupported("a catalog's tools are only searched"),
            ))
        })
    }
}

/// Searches the catalog in `catalog` for `queries`, writing one JSON result per query to `out`.
pub fn search(
    catalog: &Path,
    queries: Queries<'_>,
    limit: Option<u64>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ExitCode {
    let definitions = match std::fs::read_to_string(catalog)
        .map_err(|e| e.to_string())
        .and_then(|text| decode_catalog(&text).map_err(|e| e.to_string()))
    {
        Ok(definitions) => definitions,
        Err(problem) => {
            let _ = writeln!(err, "toolkit-gen: {}: {problem}", catalog.display());
            return ExitCode::FAILURE;
        }
    };
    let presented =
        match Toolkit::from_source(Arc::new(Listed), definitions, &ToolkitOptions::default()) {
            Ok(toolkit) => toolkit,
            Err(duplicate) => {
                let _ = writeln!(err, "toolkit-gen: {}: {duplicate}", catalog.display());
                return ExitCode::FAILURE;
            }
        };
    let toolkit = ToolSearch::toolkit(&presented, &SearchOptions::default());
    let runtime = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = writeln!(err, "toolkit-gen: {error}");
            return ExitCode::FAILURE;
        }
    };
    let search_one = |query: &str| -> Result<Value, String> {
        let mut input = json!({ "query": query });
        if let Some(limit) = limit {
            input["limit"] = json!(limit);
        }
        runtime
            .block_on(toolkit.call("tool_search", input))
            .map_err(|failure| failure.message)
    };
    let ok = match queries {
        Queries::One(query) => match search_one(query) {
            Ok(found) => writeln!(out, "{found}").is_ok(),
            Err(message) => {
                let _ = writeln!(err, "toolkit-gen: {message}");
                false
            }
        },
        Queries::File(path) => match std::fs::File::open(path) {
            Ok(file) => batch(std::io::BufReader::new(file), search_one, out, err),
            Err(error) => {
                let _ = writeln!(err, "toolkit-gen: cannot read {}: {error}", path.display());
                false
            }
        },
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Answers every line of `lines` with one line on `out`: what `search_one` found, or
/// `{"error": …}` for a line it refused (a query over [`MAX_QUERY_CHARS`] characters) or that
/// is not UTF-8, also named on `err` by its line number, so that the Nth answer is always the
/// Nth query's. Returns whether every line was answered with a result.
///
/// [`MAX_QUERY_CHARS`]: toolkit_runtime::search::MAX_QUERY_CHARS
fn batch(
    mut lines: impl BufRead,
    search_one: impl Fn(&str) -> Result<Value, String>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> bool {
    let mut all_found = true;
    let mut line = Vec::new();
    for number in 1.. {
        line.clear();
        match lines.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(error) => {
                let _ = writeln!(
                    err,
                    "toolkit-gen: the queries could not be read past line {}: {error}",
                    number - 1
                );
                return false;
            }
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let answer = std::str::from_utf8(text)
            .map_err(|_| "the query is not UTF-8".to_owned())
            .and_then(&search_one);
        let written = match answer {
            Ok(found) => writeln!(out, "{found}"),
            Err(message) => {
                all_found = false;
                let _ = writeln!(err, "toolkit-gen: line {number}: {message}");
                writeln!(out, "{}", json!({ "error": message }))
            }
        };
        if written.is_err() {
            return false;
        }
    }
    all_found
}

/// Distills `model`'s static token vectors into `output` (see
/// [`StaticEmbedder::distill`](toolkit_runtime::search::StaticEmbedder::distill)).
#[cfg(feature = "search-embeddings")]
pub fn distill(model: &Path, output: &Path) -> ExitCode {
    use toolkit_runtime::{search::Embedder, search::StaticEmbedder};
    let distilled = Embedder::load(model)
        .and_then(|model| StaticEmbedder::distill(&model))
        .and_then(|distilled| distilled.save(output).map(|()| distilled));
    match distilled {
        Ok(distilled) => {
            eprintln!(
                "toolkit-gen: wrote {} ({} tokens, {} dimensions)",
                output.display(),
                distilled.tokens(),
                distilled.dimensions()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("toolkit-gen: {}: {error}", model.display());
            ExitCode::FAILURE
        }
    }
}

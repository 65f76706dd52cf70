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
    BoxFuture, JsonObject, Reason, SearchOptions, ToolDefinition, ToolSearch, ToolSource,
    ToolSourceError, Toolkit, ToolkitOptions, decode_catalog,
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
    let mut one = |query: &str| -> bool {
        let mut input = json!({ "query": query });
        if let Some(limit) = limit {
            input["limit"] = json!(limit);
        }
        match runtime.block_on(toolkit.call("tool_search", input)) {
            Ok(found) => writeln!(out, "{found}").is_ok(),
            Err(failure) => {
                let _ = writeln!(err, "toolkit-gen: {}", failure.message);
                false
            }
        }
    };
    let ok = match queries {
        Queries::One(query) => one(query),
        Queries::File(path) => match std::fs::File::open(path) {
            Ok(file) => std::io::BufReader::new(file)
                .lines()
                .map_while(Result::ok)
                .all(|line| one(&line)),
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

/// Distills `model`'s static token vectors into `output` (see
/// [`StaticEmbedder::distill`](toolkit_runtime::StaticEmbedder::distill)).
#[cfg(feature = "search-embeddings")]
pub fn distill(model: &Path, output: &Path) -> ExitCode {
    use toolkit_runtime::{Embedder, StaticEmbedder};
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

//! The gateway's catalog: the definitions each source reported when last asked, kept in a JSON
//! file so a restart starts from what was known, and refreshed with `discover`.
//!
//! A refresh asks every source at once and builds a whole new catalog before anything sees it; a
//! source that fails to answer keeps the definitions it had. So a refresh never empties the
//! catalog half-way, and a server that is down for a minute does not take its tools away.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use toolkit_core::{ToolDefinition, ToolSource, definition::decode_catalog};

/// The definitions of each source, by the source's name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Catalog {
    sources: BTreeMap<String, Vec<ToolDefinition>>,
}

/// A source that could not be asked for its tools in a refresh.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefreshFailure {
    /// The source's name.
    pub source: String,
    /// What went wrong, for the log.
    pub problem: String,
}

impl Catalog {
    /// The definitions `source` has, if the catalog knows it.
    pub fn get(&self, source: &str) -> Option<&[ToolDefinition]> {
        self.sources.get(source).map(Vec::as_slice)
    }

    /// Sets the definitions of `source`.
    pub fn set(&mut self, source: impl Into<String>, definitions: Vec<ToolDefinition>) {
        self.sources.insert(source.into(), definitions);
    }

    /// Every source with its definitions, by name.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &[ToolDefinition])> {
        self.sources
            .iter()
            .map(|(source, definitions)| (source.as_str(), definitions.as_slice()))
    }

    /// How many tools the catalog holds, over all sources.
    pub fn len(&self) -> usize {
        self.sources.values().map(Vec::len).sum()
    }

    /// Whether the catalog holds no tool.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reads the catalog file at `path`; a file that does not exist is an empty catalog.
    ///
    /// # Errors
    ///
    /// The file cannot be read or holds no catalog; the message names every bad entry.
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self::default());
            }
            Err(error) => return Err(format!("cannot read {}: {error}", path.display())),
        };
        Self::decode(&text).map_err(|problem| format!("{}: {problem}", path.display()))
    }

    /// Reads a catalog from its JSON text: `{"sources": {"name": [definition, ...], ...}}`.
    ///
    /// # Errors
    ///
    /// The text is not of that shape; every bad definition is named.
    pub fn decode(text: &str) -> Result<Self, String> {
        let file: BTreeMap<String, BTreeMap<String, Value>> = serde_json::from_str(text)
            .map_err(|error| format!("not a catalog ({{\"sources\": {{...}}}}): {error}"))?;
        let mut catalog = Self::default();
        let mut problems = Vec::new();
        for (key, sources) in file {
            if key != "sources" {
                problems.push(format!("unknown key {key:?}"));
                continue;
            }
            for (source, definitions) in sources {
                match decode_catalog(&definitions.to_string()) {
                    Ok(definitions) => catalog.set(source, definitions),
                    Err(error) => problems.push(format!("source {source:?}: {error}")),
                }
            }
        }
        if problems.is_empty() {
            Ok(catalog)
        } else {
            Err(problems.join("; "))
        }
    }

    /// The catalog as JSON text, the same bytes for the same catalog.
    pub fn encode(&self) -> String {
        let file = serde_json::json!({ "sources": self.sources });
        serde_json::to_string_pretty(&file).unwrap_or_default()
    }

    /// Writes the catalog to `path` whole: to a file beside it first, then renamed over it, so a
    /// reader never sees half a catalog.
    ///
    /// # Errors
    ///
    /// The file cannot be written.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let mut partial = path.as_os_str().to_owned();
        partial.push(".partial");
        let partial = std::path::PathBuf::from(partial);
        std::fs::write(&partial, self.encode())
            .and_then(|()| std::fs::rename(&partial, path))
            .map_err(|error| format!("cannot write the catalog {}: {error}", path.display()))
    }

    /// Asks every source for its tools at once (each within its timeout) and returns the new
    /// catalog: what each source answered, or, for a source that failed, what it had here.
    /// Sources not in `sources` are dropped.
    pub async fn refreshed(
        &self,
        sources: &[(Arc<dyn ToolSource>, Duration)],
    ) -> (Self, Vec<RefreshFailure>) {
        let answers =
            futures_util::future::join_all(sources.iter().map(|(source, timeout)| async move {
                let answer = tokio::time::timeout(*timeout, source.discover()).await;
                (source.name().to_owned(), (answer, *timeout))
            }))
            .await;
        let mut catalog = Self::default();
        let mut failures = Vec::new();
        for (source, (answer, timeout)) in answers {
            let problem = match answer {
                Ok(Ok(definitions)) => {
                    catalog.set(source, definitions);
                    continue;
                }
                Ok(Err(error)) => error.to_string(),
                Err(_) => format!("no answer within {} s", timeout.as_secs_f64()),
            };
            if let Some(known) = self.get(&source) {
                catalog.set(source.clone(), known.to_vec());
            }
            failures.push(RefreshFailure { source, problem });
        }
        (catalog, failures)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use serde_json::json;
    use toolkit_core::{FnSource, FnTool};

    use super::*;
    use crate::tests::tool;

    #[test]
    fn a_catalog_survives_its_file() {
        let mut catalog = Catalog::default();
        catalog.set("notes", vec![tool("find"), tool("add")]);
        catalog.set("empty", vec![]);
        let dir = std::env::temp_dir().join(format!("toolkit-catalog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("catalog.json");
        catalog.save(&path).unwrap();
        assert_eq!(Catalog::load(&path).unwrap(), catalog);
        assert_eq!(
            Catalog::load(&dir.join("absent.json")).unwrap(),
            Catalog::default()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_bad_catalog_names_its_bad_entries() {
        let error =
            Catalog::decode(r#"{"sources": {"notes": [{"name": ""}], "ok": []}}"#).unwrap_err();
        assert!(error.starts_with("source \"notes\": "), "{error}");
        assert!(
            Catalog::decode("[]")
                .unwrap_err()
                .starts_with("not a catalog")
        );
    }

    struct Down;

    impl ToolSource for Down {
        fn name(&self) -> &str {
            "down"
        }
        fn discover(
            &self,
        ) -> toolkit_core::BoxFuture<'_, Result<Vec<ToolDefinition>, toolkit_core::ToolSourceError>>
        {
            Box::pin(async {
                Err(toolkit_core::ToolSourceError::new(
                    "down",
                    toolkit_core::Reason::unavailable("connection refused"),
                ))
            })
        }
        fn call<'a>(
            &'a self,
            _: &'a str,
            _: toolkit_core::JsonObject,
            _: &'a toolkit_core::CallContext,
        ) -> toolkit_core::BoxFuture<'a, Result<Value, toolkit_core::ToolSourceError>> {
            Box::pin(async { Ok(Value::Null) })
        }
    }

    #[tokio::test]
    async fn a_failed_source_keeps_its_tools_and_others_are_refreshed() {
        let notes = FnSource::builder("notes")
            .tool(FnTool::new(
                "find",
                |_: serde_json::Map<String, Value>| async { Ok(json!([])) },
            ))
            .build()
            .unwrap();
        let mut before = Catalog::default();
        before.set("notes", vec![tool("stale")]);
        before.set("down", vec![tool("kept")]);
        before.set("removed", vec![tool("gone")]);
        let wait = Duration::from_secs(5);
        let sources: Vec<(Arc<dyn ToolSource>, Duration)> =
            vec![(Arc::new(notes), wait), (Arc::new(Down), wait)];
        let (after, failures) = before.refreshed(&sources).await;
        let names = |source| {
            after.get(source).map(|d: &[ToolDefinition]| {
                d.iter().map(|d| d.name().to_owned()).collect::<Vec<_>>()
            })
        };
        assert_eq!(names("notes"), Some(vec!["find".to_owned()]));
        assert_eq!(names("down"), Some(vec!["kept".to_owned()]));
        assert_eq!(names("removed"), None);
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].source, "down");
    }
}

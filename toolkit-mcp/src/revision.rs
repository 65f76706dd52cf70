//! The revisions of MCP this client speaks, and how one is settled with a server.
//!
//! The stateless revision (2026-07-28) needs no handshake: every request carries its version and
//! the client's capabilities in `params._meta`, and `server/discover` tells which versions a
//! server speaks. The session revisions (2025-11-25 and older) begin with `initialize`.

use serde_json::{Map, Value, json};

use super::McpOptions;
use toolkit_core::JsonObject;

/// The stateless revision.
pub(crate) const MODERN: &str = "2026-07-28";

/// The session revisions, newest first: the order in which one is picked.
pub(crate) const SESSION_REVISIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// How the client speaks to a server, once settled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Revision {
    /// The stateless revision 2026-07-28: `_meta` on every request, no session.
    Modern,
    /// A session revision, begun with `initialize`, in the version the server answered.
    Session {
        /// The negotiated version, one of [`SESSION_REVISIONS`].
        version: &'static str,
    },
}

impl Revision {
    /// The protocol version string of this revision.
    pub(crate) fn version(&self) -> &'static str {
        match self {
            Self::Modern => MODERN,
            Self::Session { version } => version,
        }
    }

    /// Whether the revision has `notifications/cancelled` on HTTP (2026-07-28 cancels by closing
    /// the stream instead).
    pub(crate) fn cancels_by_notification(&self) -> bool {
        matches!(self, Self::Session { .. })
    }
}

/// The session revision named `version`, as our own `'static` string.
pub(crate) fn session_revision(version: &str) -> Option<&'static str> {
    SESSION_REVISIONS
        .into_iter()
        .find(|known| *known == version)
}

/// Who the client is, as `clientInfo` tells a server.
pub(crate) fn client_info() -> Value {
    json!({ "name": "toolkit", "version": env!("CARGO_PKG_VERSION") })
}

/// `params` with the `_meta` every request of the stateless revision carries.
pub(crate) fn with_modern_meta(mut params: JsonObject) -> JsonObject {
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(meta) = meta {
        meta.insert(
            "io.modelcontextprotocol/protocolVersion".into(),
            json!(MODERN),
        );
        // Kept when the request already declares some (see `input_required::declared`).
        meta.entry("io.modelcontextprotocol/clientCapabilities")
            .or_insert_with(|| json!({}));
        meta.insert("io.modelcontextprotocol/clientInfo".into(), client_info());
    }
    params
}

/// The params of `initialize` for `version`, declaring the `elicitation` capability (forms) when
/// the host answers elicitations, and `sampling` and `roots` too when the source relays them to a
/// served call's client (whose `roots/list` answer is the server's; a client that declared no
/// roots is answered `-32601` for it, as a client without the capability answers).
pub(crate) fn initialize_params(version: &str, options: &McpOptions) -> JsonObject {
    let mut params = Map::new();
    params.insert("protocolVersion".into(), json!(version));
    let mut capabilities = Map::new();
    if options.elicitation.is_some() || options.relay {
        capabilities.insert("elicitation".into(), json!({ "form": {} }));
    }
    if options.relay {
        capabilities.insert("sampling".into(), json!({}));
        capabilities.insert("roots".into(), json!({}));
    }
    let capabilities = Value::Object(capabilities);
    params.insert("capabilities".into(), capabilities);
    params.insert("clientInfo".into(), client_info());
    params
}

/// What a server's answer to `server/discover` says about how to speak to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Discovered {
    /// It speaks the stateless revision.
    Modern,
    /// It speaks no stateless revision we do: begin a session in this version.
    Session(&'static str),
    /// It lists versions, none of which we speak.
    NoCommonVersion(Vec<String>),
}

/// Reads a list of versions (`supportedVersions` of a DiscoverResult, or `data.supported` of
/// a -32022 error) into what we do with it.
pub(crate) fn choose(versions: &[String]) -> Discovered {
    if versions.iter().any(|version| version == MODERN) {
        return Discovered::Modern;
    }
    SESSION_REVISIONS
        .into_iter()
        .find(|ours| versions.iter().any(|theirs| theirs == ours))
        .map_or_else(
            || Discovered::NoCommonVersion(versions.to_vec()),
            Discovered::Session,
        )
}

/// The version strings of a JSON array; `None` when it is no array.
pub(crate) fn version_list(value: Option<&Value>) -> Option<Vec<String>> {
    Some(
        value?
            .as_array()?
            .iter()
            .filter_map(|version| version.as_str().map(str::to_owned))
            .collect(),
    )
}

/// The server's name and version, from an `initialize` result (`serverInfo`) or a
/// DiscoverResult (`_meta["io.modelcontextprotocol/serverInfo"]`).
pub(crate) fn server_info(result: &JsonObject) -> Option<Value> {
    result.get("serverInfo").cloned().or_else(|| {
        result
            .get("_meta")?
            .get("io.modelcontextprotocol/serverInfo")
            .cloned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(versions: &[&str]) -> Vec<String> {
        versions.iter().map(|v| (*v).to_owned()).collect()
    }

    #[test]
    fn a_relaying_source_declares_sampling_elicitation_and_roots() {
        let relaying = McpOptions::default().relay(true);
        let params = initialize_params("2025-11-25", &relaying);
        assert_eq!(
            params["capabilities"],
            json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {}})
        );
        let params = initialize_params("2025-11-25", &McpOptions::default());
        assert_eq!(params["capabilities"], json!({}));
    }

    #[test]
    fn a_modern_version_wins() {
        assert_eq!(choose(&list(&["2025-06-18", MODERN])), Discovered::Modern);
    }

    #[test]
    fn a_list_of_session_revisions_begins_a_session_in_the_newest() {
        assert_eq!(
            choose(&list(&["2024-11-05", "2025-06-18"])),
            Discovered::Session("2025-06-18")
        );
    }

    #[test]
    fn a_list_without_ours_is_said_so() {
        assert!(matches!(
            choose(&list(&["2031-01-01"])),
            Discovered::NoCommonVersion(_)
        ));
    }

    #[test]
    fn meta_is_added_and_kept() {
        let mut params = Map::new();
        params.insert("_meta".into(), json!({"progressToken": 1}));
        let params = with_modern_meta(params);
        assert_eq!(params["_meta"]["progressToken"], json!(1));
        assert_eq!(
            params["_meta"]["io.modelcontextprotocol/protocolVersion"],
            json!(MODERN)
        );
        assert_eq!(
            params["_meta"]["io.modelcontextprotocol/clientCapabilities"],
            json!({})
        );
    }
}

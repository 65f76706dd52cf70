//! Settling how a server is spoken to, from its answers: to `server/discover` (the stateless
//! revision, or which session revision to begin), and to `initialize` (the session's version).
//! The transports send the requests; the decisions are here, the same for HTTP and stdio.

use serde_json::Value;

use crate::jsonrpc::{self, RpcError};
use crate::revision::{self, Discovered, MODERN, Revision};
use crate::transport::Agreed;
use toolkit_core::{JsonObject, Reason};

/// What to do after `server/discover`.
#[derive(Debug, PartialEq)]
pub(crate) enum Next {
    /// Speak the stateless revision: settled.
    Modern(Agreed),
    /// Begin a session with `initialize` in this version.
    Initialize(&'static str),
}

/// After a DiscoverResult: the stateless revision if it lists it, else a session in the newest
/// session revision it lists (a server may answer `server/discover` and list only those, as a
/// narrowed rmcp does). A result without `supportedVersions` is no DiscoverResult (a server that
/// answers every method it does not know with an empty result): a server of the session
/// revisions, spoken to with `initialize`.
pub(crate) fn after_discovered(result: &JsonObject) -> Result<Next, Reason> {
    let Some(supported) = revision::version_list(result.get("supportedVersions")) else {
        return Ok(after_silence());
    };
    match revision::choose(&supported) {
        Discovered::Modern => Ok(Next::Modern(Agreed {
            revision: Revision::Modern,
            server_info: revision::server_info(result),
            capabilities: result.get("capabilities").cloned(),
        })),
        Discovered::Session(version) => Ok(Next::Initialize(version)),
        Discovered::NoCommonVersion(versions) => Err(no_common_version(&versions)),
    }
}

/// After an error answer to `server/discover`: -32022 names the versions to choose from; the
/// other codes of the stateless revision say the server is of it and refused us; any other code
/// (-32601 above all: a server of the stateless revision must answer `server/discover`) is a
/// server of the session revisions.
pub(crate) fn after_refusal(error: &RpcError) -> Result<Next, Reason> {
    match error.code {
        jsonrpc::UNSUPPORTED_PROTOCOL_VERSION => {
            let listed = error
                .data
                .as_ref()
                .and_then(|data| revision::version_list(data.get("supported")))
                .unwrap_or_default();
            match revision::choose(&listed) {
                Discovered::Session(version) => Ok(Next::Initialize(version)),
                Discovered::Modern => Err(Reason::invalid_response(format!(
                    "the server refused {MODERN} while listing it as supported"
                ))),
                Discovered::NoCommonVersion(versions) => Err(no_common_version(&versions)),
            }
        }
        jsonrpc::MISSING_CLIENT_CAPABILITY => Err(Reason::unsupported(
            "the server needs a client capability this client does not have",
        )),
        jsonrpc::HEADER_MISMATCH => Err(Reason::invalid_response(
            "the server refused the headers of server/discover",
        )),
        _ => Ok(Next::Initialize(revision::SESSION_REVISIONS[0])),
    }
}

/// A server that did not answer `server/discover` at all (stdio, past the wait; HTTP, with
/// something that is not MCP): begin a session in the newest session revision.
pub(crate) fn after_silence() -> Next {
    Next::Initialize(revision::SESSION_REVISIONS[0])
}

/// After the answer to `initialize`: the session's version (one of ours, or the server is not
/// spoken to) and who the server is.
pub(crate) fn after_initialize(outcome: Result<JsonObject, RpcError>) -> Result<Agreed, Reason> {
    let result = outcome.map_err(|error| {
        Reason::invalid_response(format!(
            "the server refused initialize ({}: {})",
            error.code,
            toolkit_core::text::cut_utf16(&error.message, 200)
        ))
    })?;
    let answered = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| Reason::invalid_response("an initialize result without protocolVersion"))?;
    let version = revision::session_revision(answered).ok_or_else(|| {
        Reason::unsupported(format!(
            "the server speaks MCP {answered:?}, which this client does not"
        ))
    })?;
    Ok(Agreed {
        revision: Revision::Session { version },
        server_info: revision::server_info(&result),
        capabilities: result.get("capabilities").cloned(),
    })
}

fn no_common_version(versions: &[String]) -> Reason {
    Reason::unsupported(format!(
        "the server speaks MCP {versions:?}, none of which this client does"
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap()
    }

    fn refusal(code: i64, data: Option<Value>) -> RpcError {
        RpcError {
            code,
            message: String::new(),
            data,
        }
    }

    #[test]
    fn a_discover_result_settles_the_era() {
        let modern =
            after_discovered(&object(json!({"supportedVersions": ["2026-07-28"]}))).unwrap();
        assert!(matches!(
            modern,
            Next::Modern(Agreed {
                revision: Revision::Modern,
                ..
            })
        ));
        let legacy =
            after_discovered(&object(json!({"supportedVersions": ["2025-03-26"]}))).unwrap();
        assert_eq!(legacy, Next::Initialize("2025-03-26"));
        assert!(after_discovered(&object(json!({"supportedVersions": ["1999-01-01"]}))).is_err());
        // An empty result is no DiscoverResult: a server of the session revisions.
        assert_eq!(
            after_discovered(&object(json!({}))).unwrap(),
            Next::Initialize("2025-11-25")
        );
    }

    #[test]
    fn a_refusal_says_whether_to_begin_a_session() {
        let listed = refusal(-32022, Some(json!({"supported": ["2024-11-05"]})));
        assert_eq!(
            after_refusal(&listed).unwrap(),
            Next::Initialize("2024-11-05")
        );
        assert_eq!(
            after_refusal(&refusal(-32601, None)).unwrap(),
            Next::Initialize("2025-11-25")
        );
        assert_eq!(
            after_refusal(&refusal(-32602, None)).unwrap(),
            Next::Initialize("2025-11-25")
        );
        assert!(matches!(
            after_refusal(&refusal(-32021, None)),
            Err(Reason::Unsupported { .. })
        ));
        assert!(
            after_refusal(&refusal(-32022, Some(json!({"supported": ["2026-07-28"]})))).is_err()
        );
    }

    #[test]
    fn initialize_must_answer_a_version_we_speak() {
        let ok = after_initialize(Ok(object(
            json!({"protocolVersion": "2025-06-18", "serverInfo": {"name": "s"}}),
        )))
        .unwrap();
        assert_eq!(
            ok.revision,
            Revision::Session {
                version: "2025-06-18"
            }
        );
        assert_eq!(ok.server_info, Some(json!({"name": "s"})));
        assert!(matches!(
            after_initialize(Ok(object(json!({"protocolVersion": "2026-07-28"})))),
            Err(Reason::Unsupported { .. })
        ));
        assert!(after_initialize(Err(refusal(-32602, None))).is_err());
    }
}

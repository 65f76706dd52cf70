//! One audit record ([`AuditRecord`]): its fields, as `docs/audit.md` documents them (schema
//! version [`SCHEMA_VERSION`]).

use serde::Serialize;
use serde_json::Value;

/// The version of the record's schema, its `v`: raised when a field changes meaning or goes, not
/// when one is added.
pub const SCHEMA_VERSION: u32 = 1;

/// What a record is of, its `kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// `tools/call` (or a tool a search's `tool_call` or code mode reached): `tool` is set.
    ToolCall,
    /// `resources/read`: `uri` is set.
    ResourceRead,
    /// `prompts/get`: `prompt` is set.
    PromptGet,
}

/// What the policy decided for what was called, its `decision`: only what the policy lets
/// through reaches a source and is recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditDecision {
    /// Allowed without asking.
    Allow,
    /// Allowed once a person approves (`decision = "approve"`).
    Approve,
}

/// Who approved a call that needed approval, its `approval`.
///
/// Filled today from what reaches the source: a call whose decision is `approve` reached it
/// only once approved, so its verdict is `approved` and `by` is unknown. The approval work
/// (issue 39) fills `by` (and an `edited` verdict) by putting an `ApprovalRecord` in the call's
/// context ([`CallContext::with_extension`](toolkit_core::CallContext::with_extension)),
/// which the audited source (`audit/audited.rs`) reads first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApprovalRecord {
    /// `approved`, or `edited` (approved with an input the person corrected).
    pub verdict: String,
    /// Who gave it (a principal's id, or the approver's name), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

impl ApprovalRecord {
    /// Approved, by someone the source is not told of.
    pub fn approved() -> Self {
        Self::of(false)
    }

    /// Approved as it was, or with an input the person changed (`edited`).
    pub fn of(edited: bool) -> Self {
        Self {
            verdict: if edited { "edited" } else { "approved" }.to_owned(),
            by: None,
        }
    }
}

/// One record: one tool call, resource read or prompt get that reached a source. It never holds
/// an input's value (only with `include_inputs`, redacted), a result, or a credential.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AuditRecord {
    /// The schema's version ([`SCHEMA_VERSION`]).
    pub v: u32,
    /// When the request reached the gateway's source, RFC 3339 in UTC.
    pub time: String,
    /// Who asked: the principal's id (`token:NAME`, `jwt:ISS#SUB`, `loopback`); `null` when the
    /// request came with none (a host's own call in process).
    pub principal: Option<String>,
    /// The MCP session (`Mcp-Session-Id`) the request came in; absent without one (stdio, a
    /// stateless request).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// What the record is of.
    pub kind: Kind,
    /// The source's name, as configured.
    pub source: String,
    /// The tool, by its name at the source (a tool call).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The resource's URI at the source (a resource read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// The prompt, by its name at the source (a prompt get).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// What the policy decided.
    pub decision: AuditDecision,
    /// Who approved it, for a decision `approve`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalRecord>,
    /// The SHA-256 of the input's JSON as passed to the source (lower-case hex): the arguments
    /// of a tool or prompt, `{"uri": URI}` of a read.
    pub input_sha256: String,
    /// The length of that JSON, in bytes.
    pub input_bytes: usize,
    /// The input itself, every credential the gateway holds replaced by `<credential>`: only
    /// with `include_inputs = true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// `ok`, or why it failed: `invalid_input`, `not_found`, `authentication`, `call_failed`,
    /// `unavailable`, `invalid_response`, `unsupported`, `unknown`; `cancelled` when the client
    /// went before the answer; `unfinished` when the gateway stopped before it.
    pub outcome: String,
    /// The resilience layer that answered in the source's stead (`rate`, `rate_per_person`,
    /// `queue`, `breaker`, `timeout`), when one did: the source was not asked, or not waited for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<&'static str>,
    /// How long it took, in milliseconds (to the microsecond).
    pub duration_ms: f64,
    /// The upstream's HTTP status, when known (no source reports one yet).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream_status: Option<u16>,
}

/// The lower-case hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    use std::fmt::Write as _;
    let digest = sha2::Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest.iter() {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// Now, as RFC 3339 in UTC.
pub(crate) fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

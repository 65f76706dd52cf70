//! A real MCP server for the tests: rmcp's handler of tools written as raw JSON (echo, failing,
//! blocking, structured, region with marks), narrowed to chosen revisions. `rmcp_peer.rs` serves
//! it over Streamable HTTP; the `rmcp-stdio-peer` binary over stdio.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock as Content,
    Implementation, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

/// What the peer does and counts.
#[derive(Clone, Debug)]
pub struct Peer {
    pub tools: Arc<Vec<Value>>,
    /// Tools per page of tools/list; 0 is all in one.
    pub page_size: usize,
    pub versions: Option<&'static [ProtocolVersion]>,
    /// How many calls of `blocking` were dropped before they ended.
    pub dropped: Arc<AtomicUsize>,
    /// How many tools/list requests came.
    pub listings: Arc<AtomicUsize>,
    /// A file to which a line is added when a call of `blocking` ends (for a peer in another
    /// process, whose counter a test cannot read).
    pub dropped_file: Option<std::path::PathBuf>,
}

/// The standard tools: echo, failing, blocking, structured, region (marked), unicode.
pub fn standard_tools() -> Vec<Value> {
    vec![
        json!({"name": "echo", "description": "Answers with the text it is given.",
               "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
               "annotations": {"readOnlyHint": true, "title": "Echo"}}),
        json!({"name": "failing", "description": "Reports that it failed.", "inputSchema": {"type": "object"}}),
        json!({"name": "blocking", "description": "Never answers.", "inputSchema": {"type": "object"}}),
        json!({"name": "structured", "description": "Answers with structured content.", "inputSchema": {"type": "object"}}),
        json!({"name": "region", "description": "Echoes its marked parameter.",
        "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"}
        }}}),
    ]
}

impl Peer {
    pub fn new(tools: Vec<Value>) -> Self {
        Self {
            tools: Arc::new(tools),
            page_size: 0,
            versions: None,
            dropped: Arc::new(AtomicUsize::new(0)),
            listings: Arc::new(AtomicUsize::new(0)),
            dropped_file: None,
        }
    }

    pub fn standard() -> Self {
        Self::new(standard_tools())
    }
}

struct CountOnDrop(Arc<AtomicUsize>, Option<std::path::PathBuf>);

impl Drop for CountOnDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
        if let Some(path) = &self.1 {
            use std::io::Write as _;
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path);
            let _ = file.and_then(|mut file| file.write_all(b"ended\n"));
        }
    }
}

impl ServerHandler for Peer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("rmcp-peer", "1.2.3"))
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        match self.versions {
            Some(versions) => Cow::Borrowed(versions),
            None => Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS),
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.listings.fetch_add(1, Ordering::SeqCst);
        let start: usize = match request.and_then(|r| r.cursor) {
            Some(cursor) => cursor
                .parse()
                .map_err(|_| McpError::invalid_params("bad cursor", None))?,
            None => 0,
        };
        let size = if self.page_size == 0 {
            self.tools.len()
        } else {
            self.page_size
        };
        let end = (start + size).min(self.tools.len());
        let tools: Vec<Value> = self.tools.get(start..end).unwrap_or_default().to_vec();
        let mut result = json!({"tools": tools});
        if end < self.tools.len() {
            result["nextCursor"] = json!(end.to_string());
        }
        serde_json::from_value(result).map_err(|e| McpError::internal_error(e.to_string(), None))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        // rmcp checks the Mcp-Param-* headers of a call against the tool it gets here.
        let tool = self.tools.iter().find(|tool| tool["name"] == name)?;
        serde_json::from_value(tool.clone()).ok()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let result = match request.name.as_ref() {
            "echo" => CallToolResult::success(vec![Content::text(
                arguments["text"].as_str().unwrap_or_default().to_owned(),
            )]),
            "failing" => CallToolResult::error(vec![Content::text("the tool failed on purpose")]),
            "blocking" => {
                // rmcp tells a handler that its client went away by its cancellation token.
                let _count = CountOnDrop(self.dropped.clone(), self.dropped_file.clone());
                tokio::select! {
                    _ = context.ct.cancelled() => {}
                    _ = tokio::time::sleep(Duration::from_secs(3600)) => {}
                }
                CallToolResult::success(vec![])
            }
            "structured" => {
                CallToolResult::structured(json!({"answer": 42, "arguments": arguments}))
            }
            "region" => CallToolResult::structured(json!({"arguments": arguments})),
            // Takes `steps` × `every_ms` milliseconds, reporting progress after each step when the
            // call asked for it (`_meta.progressToken`).
            "slow" => {
                let token = context.meta.get_progress_token();
                let every = Duration::from_millis(arguments["every_ms"].as_u64().unwrap_or(100));
                let steps = u32::try_from(arguments["steps"].as_u64().unwrap_or(1)).unwrap_or(1);
                for step in 1..=steps {
                    tokio::time::sleep(every).await;
                    if let Some(token) = &token {
                        let note = rmcp::model::ProgressNotificationParam::new(
                            token.clone(),
                            f64::from(step),
                        );
                        let _ = context.peer.notify_progress(note).await;
                    }
                }
                CallToolResult::success(vec![Content::text("done")])
            }
            // Reports progress twice when the call asked for it (`_meta.progressToken`), and
            // says whether it did.
            "progressing" => {
                let token = context.meta.get_progress_token();
                if let Some(token) = &token {
                    for step in 1..=2u8 {
                        let mut note = rmcp::model::ProgressNotificationParam::new(
                            token.clone(),
                            f64::from(step),
                        )
                        .with_total(2.0);
                        note.message = Some(format!("step {step} of 2"));
                        let _ = context.peer.notify_progress(note).await;
                    }
                }
                CallToolResult::success(vec![Content::text(format!(
                    "asked for progress: {}",
                    token.is_some()
                ))])
            }
            name if self.tools.iter().any(|tool| tool["name"] == name) => {
                CallToolResult::structured(json!({"tool": name, "arguments": arguments}))
            }
            other => {
                return Err(McpError::invalid_params(
                    format!("Unknown tool: {other}"),
                    None,
                ));
            }
        };
        Ok(result.into())
    }
}

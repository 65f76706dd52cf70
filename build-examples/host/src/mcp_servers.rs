//! Two MCP servers, served in process on 127.0.0.1 (rmcp, Streamable HTTP): `tasks`, whose
//! snapshot `typed-tools` was generated from (the live server has one tool more), and `notes`,
//! which nobody generated anything from and the host discovers at run time.

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

/// A server of tools written as JSON, over entries kept in memory.
#[derive(Clone)]
struct Server {
    name: &'static str,
    tools: Arc<Vec<Value>>,
    entries: Arc<Mutex<Vec<Value>>>,
}

fn tasks() -> Server {
    let snapshot: Value = serde_json::from_str(include_str!("../../typed-tools/specs/tasks.json"))
        .unwrap_or_default();
    let mut tools = snapshot["tools"].as_array().cloned().unwrap_or_default();
    // Since the snapshot was taken, the server has gained a tool.
    tools.push(json!({
        "name": "complete_task",
        "description": "Marks a task as done.",
        "inputSchema": { "type": "object", "properties": { "id": { "type": "integer" } }, "required": ["id"] },
        "annotations": { "idempotentHint": true }
    }));
    Server {
        name: "tasks",
        tools: Arc::new(tools),
        entries: Arc::new(Mutex::new(vec![
            json!({ "id": 1, "title": "Feed the fish", "status": "open" }),
        ])),
    }
}

fn notes() -> Server {
    Server {
        name: "notes",
        tools: Arc::new(vec![
            json!({
                "name": "search_notes",
                "description": "Finds notes that contain a word.",
                "inputSchema": { "type": "object", "properties": { "word": { "type": "string" } }, "required": ["word"] },
                "annotations": { "readOnlyHint": true }
            }),
            json!({
                "name": "wipe_notes",
                "description": "Deletes every note.",
                "inputSchema": { "type": "object" },
                "annotations": { "destructiveHint": true }
            }),
        ]),
        entries: Arc::new(Mutex::new(vec![
            json!("Rex is allergic to chicken."),
            json!("The fish tank needs a new filter."),
        ])),
    }
}

impl Server {
    fn call(&self, tool: &str, arguments: &Value) -> Result<Value, String> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        match (self.name, tool) {
            ("tasks", "list_tasks") => Ok(json!({ "tasks": *entries })),
            ("tasks", "add_task") => {
                let id = entries.len() + 1;
                let task = json!({ "id": id, "title": arguments["title"], "status": "open" });
                entries.push(task.clone());
                Ok(task)
            }
            ("tasks", "complete_task") => {
                let task = entries
                    .iter_mut()
                    .find(|task| task["id"] == arguments["id"])
                    .ok_or("no such task")?;
                task["status"] = json!("done");
                Ok(task.clone())
            }
            ("tasks", "delete-task") => {
                entries.retain(|task| task["id"] != arguments["id"]);
                Ok(json!({ "deleted": arguments["id"] }))
            }
            ("notes", "search_notes") => {
                let word = arguments["word"]
                    .as_str()
                    .unwrap_or_default()
                    .to_lowercase();
                let found: Vec<&Value> = entries
                    .iter()
                    .filter(|note| {
                        note.as_str()
                            .is_some_and(|n| n.to_lowercase().contains(&word))
                    })
                    .collect();
                Ok(json!({ "notes": found }))
            }
            ("notes", "wipe_notes") => {
                entries.clear();
                Ok(json!({ "wiped": true }))
            }
            _ => Err(format!("Unknown tool: {tool}")),
        }
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(self.name, "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        serde_json::from_value(json!({ "tools": *self.tools }))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let result = match self.call(request.name.as_ref(), &arguments) {
            Ok(answer) => CallToolResult::structured(answer),
            Err(words) => CallToolResult::error(vec![ContentBlock::text(words)]),
        };
        Ok(result.into())
    }
}

/// Serves `tasks` at `/tasks/mcp` and `notes` at `/notes/mcp` until the program ends; gives the
/// two URLs.
pub async fn serve() -> std::io::Result<(reqwest::Url, reqwest::Url)> {
    let router = [tasks(), notes()]
        .into_iter()
        .fold(axum::Router::new(), |router, server| {
            let path = format!("/{}/mcp", server.name);
            let config = StreamableHttpServerConfig::default().with_sse_keep_alive(None);
            let service: StreamableHttpService<Server, LocalSessionManager> =
                StreamableHttpService::new(move || Ok(server.clone()), Default::default(), config);
            router.nest_service(&path, service)
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move {
        let _ = axum::serve(toolkit_runtime::serve::without_delay(listener), router).await;
    });
    let url = |name: &str| {
        format!("http://{address}/{name}/mcp")
            .parse::<reqwest::Url>()
            .map_err(std::io::Error::other)
    };
    Ok((url("tasks")?, url("notes")?))
}

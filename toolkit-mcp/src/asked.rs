//! The requests of [`Mcp`] beside its tools (resources, prompts, completion): one request asked
//! and its error read, or every page of a listing, with the bounds a tool listing has.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::jsonrpc::{self, RpcError};
use super::results::MAX_SERVER_WORDS;
use super::source::{Mcp, json_length, no_longer_spoken};
use super::transport::{Fault, Request};
use toolkit_core::{JsonObject, Reason, ToolSourceError};

impl Mcp {
    /// Sends `method` with `params` within the timeout, and gives its result: a JSON-RPC error is
    /// the reason [`refused`] says, an answer over the size cap is `too_large`'s.
    pub(super) async fn ask(
        &self,
        method: &'static str,
        params: JsonObject,
        too_large: impl Fn(usize) -> Reason,
    ) -> Result<JsonObject, ToolSourceError> {
        self.bounded(async {
            let reply = self
                .send(Request::new(method, params))
                .await
                .map_err(|fault| {
                    self.error(match fault {
                        Fault::TooLarge => too_large(self.options.max_response_bytes),
                        Fault::Elsewhere => Fault::elsewhere_reason(),
                        Fault::Failed(reason) => reason,
                    })
                })?;
            let mut result = reply
                .outcome
                .map_err(|error| self.error(refused(method, &error)))?;
            match result.get("resultType").and_then(Value::as_str) {
                None | Some("complete") => {}
                Some(other) => {
                    let other = toolkit_core::text::cut_utf16(other, MAX_SERVER_WORDS);
                    return Err(self.error(Reason::unsupported(format!(
                        "the server answered {method} with a result of type {other:?}, which this client does not take here"
                    ))));
                }
            }
            // What the stateless revision says of the server itself is no part of the answer.
            if let Some(Value::Object(meta)) = result.get_mut("_meta") {
                meta.remove("io.modelcontextprotocol/serverInfo");
                if meta.is_empty() {
                    result.remove("_meta");
                }
            }
            Ok(result)
        })
        .await
    }

    /// Every page of the listing `method` (`resources/list`, `prompts/list`, ...), the items of
    /// each page's `key` array as the server wrote them, within the timeout, the page cap and the
    /// listing's byte cap of [`McpOptions`](super::McpOptions).
    pub(super) async fn every_page(
        &self,
        method: &'static str,
        key: &str,
    ) -> Result<Vec<Value>, ToolSourceError> {
        let max_pages = self.options.max_pages;
        let max_bytes = self.options.max_listing_bytes;
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = HashSet::new();
        let mut bytes = 0usize;
        self.bounded(async {
            for _ in 0..max_pages {
                let mut params = Map::new();
                if let Some(cursor) = &cursor {
                    params.insert("cursor".into(), json!(cursor));
                }
                let reply = self
                    .send(Request::new(method, params))
                    .await
                    .map_err(|fault| self.list_fault(fault))?;
                let result = reply
                    .outcome
                    .map_err(|error| self.error(refused(method, &error)))?;
                let Some(Value::Array(page)) = result.get(key) else {
                    return Err(self.error(Reason::invalid_response(format!(
                        "a {method} result without a `{key}` array"
                    ))));
                };
                bytes = bytes.saturating_add(json_length(page));
                if bytes > max_bytes {
                    return Err(self.error(Reason::invalid_response(format!(
                        "the server's {method} has more than {max_bytes} bytes of {key}"
                    ))));
                }
                items.extend(page.iter().cloned());
                match result.get("nextCursor") {
                    None | Some(Value::Null) => return Ok(()),
                    Some(Value::String(next)) => {
                        if !seen.insert(next.clone()) {
                            return Err(self.error(Reason::invalid_response(format!(
                                "the server gave a cursor of {method} twice (it would page forever)"
                            ))));
                        }
                        cursor = Some(next.clone());
                    }
                    Some(_) => {
                        return Err(self.error(Reason::invalid_response(format!(
                            "a {method} result whose nextCursor is no string"
                        ))));
                    }
                }
            }
            Err(self.error(Reason::invalid_response(format!(
                "the server's {method} has more than {max_pages} pages"
            ))))
        })
        .await?;
        Ok(items)
    }
}

/// The reason of a JSON-RPC error answered to `method`, decided by its code; the server's words
/// are passed on, cut, never read.
pub(super) fn refused(method: &str, error: &RpcError) -> Reason {
    let words = toolkit_core::text::cut_utf16(&error.message, MAX_SERVER_WORDS);
    match error.code {
        jsonrpc::METHOD_NOT_FOUND => Reason::unsupported(format!(
            "the server does not answer {method} (it is no method of it)"
        )),
        jsonrpc::INVALID_PARAMS | RESOURCE_NOT_FOUND => {
            Reason::not_found(format!("the server refused {method}: {words}"))
        }
        jsonrpc::UNSUPPORTED_PROTOCOL_VERSION => no_longer_spoken(),
        code => Reason::unknown(format!("the server failed {method} ({code}: {words})")),
    }
}

/// The code the spec gives a read of a resource the server does not have.
const RESOURCE_NOT_FOUND: i64 = -32002;

//! The approval webhook (`[approval] webhook`): a service of the host's asked about each call of
//! a tool the policy marks `approve`, before it runs.
//!
//! The service is sent a `POST` of JSON:
//!
//! ```json
//! {"tool": "files__write_file", "source": "files", "source_tool": "write_file",
//!  "input": {"path": "/tmp/a", "content": "x"}, "principal": "jwt:https://auth.example.com#alice",
//!  "call_id": "9f0c…"}
//! ```
//!
//! (`principal`, the id of who made the call, `null` when nobody is known; `call_id`, the
//! model's id of the call, else one made for this question) and answers `200` with
//! `{"verdict": "approve" | "decline" | "edit", "reason"?, "input"?, "by"?}`: `edit` runs the
//! call with `input` (checked again against the tool's parameters), `decline` stops it and the
//! model reads `reason`, `by` (who decided) is logged.
//!
//! Anything else declines the call, saying why, and the tool never runs: the service unreachable,
//! no answer within `timeout_seconds`, a status other than 2xx (a redirect too: none is
//! followed), an answer that is no such JSON or over [`MAX_ANSWER_BYTES`]. What the model reads
//! names the service by its host only, never its URL or the token.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use toolkit_core::BoxFuture;
use toolkit_core::approval::{ApprovalRequest, Approver, Verdict};

use super::config::{ApprovalConfig, ConfigError};

/// The largest answer read from the service, in bytes.
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// The approver that asks a webhook.
#[derive(Clone)]
pub struct Webhook {
    client: reqwest::Client,
    url: reqwest::Url,
    /// The URL's host, as the model and the logs read it.
    host: String,
    bearer: Option<String>,
    timeout: Duration,
}

impl std::fmt::Debug for Webhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhook")
            .field("host", &self.host)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// What the service answers.
#[derive(Deserialize)]
struct Answer {
    verdict: String,
    reason: Option<String>,
    input: Option<Value>,
    by: Option<String>,
}

impl Webhook {
    /// The webhook `config` names, its token read from the environment; `None` without one.
    ///
    /// # Errors
    ///
    /// The URL cannot be read, the token's variable is not set, or no HTTP client can be made.
    pub fn from_config(config: &ApprovalConfig) -> Result<Option<Self>, ConfigError> {
        let Some(webhook) = &config.webhook else {
            return Ok(None);
        };
        let url = reqwest::Url::parse(webhook)
            .map_err(|_| ConfigError("approval.webhook is not a URL".to_owned()))?;
        let loopback = url
            .host_str()
            .and_then(|host| {
                host.trim_matches(['[', ']'])
                    .parse::<std::net::IpAddr>()
                    .ok()
            })
            .is_some_and(|ip| ip.is_loopback())
            || url.host_str() == Some("localhost");
        if url.scheme() == "http" && !loopback {
            tracing::warn!(
                host = url.host_str().unwrap_or("?"),
                "approval.webhook is plain http beyond this machine: what is asked, and the token, \
                 travel unencrypted"
            );
        }
        let bearer = match &config.bearer_env {
            Some(variable) => Some(std::env::var(variable).map_err(|_| {
                ConfigError(format!(
                    "approval.bearer_env names the environment variable {variable}, which is not \
                     set (or not Unicode)"
                ))
            })?),
            None => None,
        };
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| {
                ConfigError(format!(
                    "approval.webhook: no HTTP client: {}",
                    error.without_url()
                ))
            })?;
        Ok(Some(Self {
            host: url.host_str().unwrap_or("?").to_owned(),
            client,
            url,
            bearer,
            timeout: config.timeout(),
        }))
    }

    /// The host of the webhook's URL (for logs: never the URL, which may hold a token).
    pub fn host(&self) -> &str {
        &self.host
    }

    async fn asked(&self, request: ApprovalRequest) -> Verdict {
        let (source, source_tool) = request.origin().unzip();
        let call_id = request
            .call_id()
            .map(str::to_owned)
            .or_else(toolkit_core::random::hex_128);
        let body = json!({
            "tool": request.tool_name(),
            "source": source,
            "source_tool": source_tool,
            "input": request.input(),
            "principal": request.context().principal().map(|principal| principal.id()),
            "call_id": call_id,
        });
        let answered = tokio::time::timeout(self.timeout, self.answer(&body)).await;
        let answer = match answered {
            Ok(Ok(answer)) => answer,
            Ok(Err(problem)) => {
                tracing::warn!(tool = request.tool_name(), host = %self.host, "approval webhook: {problem}; the call is declined");
                return self.unanswered(&problem);
            }
            Err(_) => {
                tracing::warn!(tool = request.tool_name(), host = %self.host, "approval webhook: no answer in time; the call is declined");
                return self.unanswered(&format!(
                    "it did not answer within {} seconds",
                    self.timeout.as_secs()
                ));
            }
        };
        tracing::info!(
            tool = request.tool_name(),
            verdict = %answer.verdict,
            by = answer.by.as_deref().unwrap_or(""),
            "approval webhook answered"
        );
        match answer.verdict.as_str() {
            "approve" => Verdict::Approve,
            "decline" => Verdict::Decline {
                reason: answer.reason,
            },
            "edit" => match answer.input {
                Some(Value::Object(input)) => Verdict::Edit(input),
                _ => self.unanswered("it answered `edit` without an `input` object"),
            },
            _ => self.unanswered("its `verdict` was none of approve, decline and edit"),
        }
    }

    /// Sends `body` and reads the answer, or says what went wrong (without the URL).
    async fn answer(&self, body: &Value) -> Result<Answer, String> {
        let mut post = self.client.post(self.url.clone()).json(body);
        if let Some(bearer) = &self.bearer {
            post = post.bearer_auth(bearer);
        }
        // The whole exchange is timed by the caller.
        let mut response = post
            .send()
            .await
            .map_err(|error| format!("it could not be reached ({})", kind(&error)))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("it answered HTTP {}", status.as_u16()));
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| format!("its answer could not be read ({})", kind(&error)))?
        {
            if bytes.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(format!("its answer is over {MAX_ANSWER_BYTES} bytes"));
            }
            bytes.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&bytes).map_err(|_| {
            "its answer is not JSON of the shape {\"verdict\": \"approve\" | \"decline\" | \
             \"edit\", \"reason\"?, \"input\"?, \"by\"?}"
                .to_owned()
        })
    }

    /// A decline saying the service could not be asked, and why.
    fn unanswered(&self, why: &str) -> Verdict {
        Verdict::decline(format!(
            "no approval could be had, so the tool did not run: the approval service at {} \
             was asked and {why}.",
            self.host
        ))
    }
}

/// What kind of failure `error` is, in words that carry no URL.
fn kind(error: &reqwest::Error) -> &'static str {
    if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "no connection"
    } else if error.is_body() || error.is_decode() {
        "a broken answer"
    } else {
        "a failed request"
    }
}

impl Approver for Webhook {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, Verdict> {
        Box::pin(self.asked(request))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    fn config(webhook: &str) -> ApprovalConfig {
        ApprovalConfig {
            webhook: Some(webhook.to_owned()),
            timeout_seconds: Some(1),
            bearer_env: None,
        }
    }

    fn request() -> ApprovalRequest {
        let definition = crate::tests::tool("files__write_file");
        let input = json!({"path": "/tmp/a"}).as_object().cloned().unwrap();
        ApprovalRequest::new(
            definition,
            Some(("files".into(), "write_file".into())),
            input,
            toolkit_core::CallContext::new(),
        )
    }

    #[tokio::test]
    async fn an_unreachable_service_declines_naming_its_host_only() {
        // A port nobody listens on (bound, then closed).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let webhook = Webhook::from_config(&config(&format!(
            "http://127.0.0.1:{port}/hook?token=secret"
        )))
        .unwrap()
        .unwrap();
        let verdict = webhook.approve(request()).await;
        let Verdict::Decline {
            reason: Some(reason),
        } = verdict
        else {
            panic!("{verdict:?}");
        };
        assert!(reason.contains("at 127.0.0.1 was asked"), "{reason}");
        assert!(
            !reason.contains("secret") && !reason.contains("/hook"),
            "{reason}"
        );
    }

    #[test]
    fn an_unset_token_variable_is_an_error_naming_it() {
        let mut config = config("https://approvals.example.com/");
        config.bearer_env = Some("TOOLKIT_GATEWAY_TEST_SURELY_UNSET".to_owned());
        let error = Webhook::from_config(&config).unwrap_err();
        assert!(
            error.0.contains("TOOLKIT_GATEWAY_TEST_SURELY_UNSET"),
            "{error}"
        );
        assert!(
            Webhook::from_config(&ApprovalConfig::default())
                .unwrap()
                .is_none()
        );
    }
}

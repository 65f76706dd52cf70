//! A source's calls made on behalf of the person behind them with their own token: exchanged at
//! the authorization server for one whose audience is the source (RFC 8693 token exchange), or,
//! only where configured, passed on as it is when its audience already names the source.
//!
//! An exchanged token is kept per person until shortly before it expires (at most
//! [`MAX_KEPT`] people at once), so a person's calls exchange once, not each time.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;
use toolkit_core::context::{Principal, SubjectToken};

use super::config::{OnBehalfConfig, read_env};

/// The most people whose exchanged token is kept at once.
pub const MAX_KEPT: usize = 1_024;

/// How long before its expiry an exchanged token is exchanged again.
const EARLY: Duration = Duration::from_secs(30);

/// How long a token whose answer gave no `expires_in` is kept.
const UNSAID_LIFETIME: Duration = Duration::from_secs(300);

const GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN: &str = "urn:ietf:params:oauth:token-type:access_token";

/// How a source gets a person's token.
#[derive(Debug)]
pub(crate) struct OnBehalf {
    source: String,
    way: Way,
    kept: Mutex<HashMap<String, (String, Instant)>>,
}

#[derive(Debug)]
enum Way {
    /// Exchanged at `endpoint`, the gateway authenticated as `client`.
    Exchange {
        http: reqwest::Client,
        endpoint: reqwest::Url,
        client: (String, Option<String>),
        audience: Option<String>,
        resource: Option<String>,
        scope: Option<String>,
    },
    /// Passed on when its `aud` names `audience`.
    PassThrough { audience: String },
}

/// The answer of a token endpoint.
#[derive(Deserialize)]
struct Answer {
    access_token: String,
    expires_in: Option<u64>,
}

impl OnBehalf {
    /// The way `config` says for source `source`.
    ///
    /// # Errors
    ///
    /// A message naming the source: neither or both ways, an unset variable, a bad URL.
    pub(crate) fn new(source: &str, config: &OnBehalfConfig) -> Result<Self, String> {
        let way = match (&config.token_endpoint, config.pass_through) {
            (Some(endpoint), false) => {
                let endpoint: reqwest::Url = endpoint
                    .parse()
                    .map_err(|error| format!("on_behalf_of.token_endpoint is no URL: {error}"))?;
                let client_id = config.client_id.clone().ok_or_else(|| {
                    "on_behalf_of.token_endpoint needs the gateway's client_id".to_owned()
                })?;
                let secret = config
                    .client_secret_env
                    .as_deref()
                    .map(|variable| read_env(source, variable).map_err(|error| error.0))
                    .transpose()?;
                let http = toolkit_http::client_builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .map_err(|error| format!("cannot build an HTTP client: {error}"))?;
                Way::Exchange {
                    http,
                    endpoint,
                    client: (client_id, secret),
                    audience: config.audience.clone(),
                    resource: config.resource.clone(),
                    scope: config.scope.clone(),
                }
            }
            (None, true) => Way::PassThrough {
                audience: config.audience.clone().ok_or_else(|| {
                    "on_behalf_of.pass_through needs the `audience` a token must name".to_owned()
                })?,
            },
            _ => {
                return Err(
                    "on_behalf_of takes a token_endpoint (exchange) or pass_through = true, one \
                     of the two"
                        .to_owned(),
                );
            }
        };
        Ok(Self {
            source: source.to_owned(),
            way,
            kept: Mutex::default(),
        })
    }

    /// The token `principal`'s calls of the source carry, from the token they presented.
    ///
    /// # Errors
    ///
    /// A message for the model (never a token): no token presented, its audience not the
    /// source's, or the exchange refused.
    pub(crate) async fn token(
        &self,
        principal: &Principal,
        subject: Option<&SubjectToken>,
    ) -> Result<String, String> {
        let subject = subject.ok_or_else(|| {
            "This source is called with the token of the person calling it, and their request \
             carried none the gateway could pass on (the gateway takes JWTs for it)."
                .to_owned()
        })?;
        match &self.way {
            Way::PassThrough { audience } => {
                let names = |value: &Value| match value {
                    Value::String(one) => one == audience,
                    Value::Array(many) => many.iter().any(|one| one.as_str() == Some(audience)),
                    _ => false,
                };
                if principal.claims().get("aud").is_some_and(names) {
                    Ok(subject.secret().to_owned())
                } else {
                    Err(format!(
                        "The token of the person calling this source is not for it (its audience \
                         does not name {audience}); it is not passed on."
                    ))
                }
            }
            Way::Exchange { .. } => {
                if let Some(token) = self.kept(principal) {
                    return Ok(token);
                }
                let (token, lifetime) = self.exchange(subject).await?;
                let mut kept = self
                    .kept
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let now = Instant::now();
                kept.retain(|_, (_, until)| *until > now);
                if kept.len() < MAX_KEPT {
                    kept.insert(
                        principal.id().to_owned(),
                        (token.clone(), now + lifetime.saturating_sub(EARLY)),
                    );
                }
                Ok(token)
            }
        }
    }

    fn kept(&self, principal: &Principal) -> Option<String> {
        let kept = self
            .kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.get(principal.id())
            .filter(|(_, until)| *until > Instant::now())
            .map(|(token, _)| token.clone())
    }

    async fn exchange(&self, subject: &SubjectToken) -> Result<(String, Duration), String> {
        let Way::Exchange {
            http,
            endpoint,
            client,
            audience,
            resource,
            scope,
        } = &self.way
        else {
            return Err("no exchange is configured".to_owned());
        };
        let mut form = vec![
            ("grant_type", GRANT),
            ("subject_token", subject.secret()),
            ("subject_token_type", ACCESS_TOKEN),
            ("requested_token_type", ACCESS_TOKEN),
        ];
        for (name, value) in [
            ("audience", audience),
            ("resource", resource),
            ("scope", scope),
        ] {
            if let Some(value) = value {
                form.push((name, value));
            }
        }
        let refused = |why: &str| {
            tracing::warn!(source = %self.source, "token exchange failed: {why}");
            "The authorization server did not give a token for this source on behalf of the \
             person calling it; the call was not made."
                .to_owned()
        };
        let answer = http
            .post(endpoint.clone())
            .basic_auth(&client.0, client.1.as_deref())
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form_encoded(&form))
            .send()
            .await
            .map_err(|error| refused(&error.without_url().to_string()))?;
        let status = answer.status();
        if !status.is_success() {
            return Err(refused(&format!("status {status}")));
        }
        let answer: Answer = answer.json().await.map_err(|error| {
            refused(&format!(
                "an answer that is no token: {}",
                error.without_url()
            ))
        })?;
        let lifetime = answer
            .expires_in
            .map_or(UNSAID_LIFETIME, Duration::from_secs);
        Ok((answer.access_token, lifetime))
    }
}

/// `pairs` as a form's body (`application/x-www-form-urlencoded`).
fn form_encoded(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    fn passing(audience: &str) -> OnBehalf {
        let config = OnBehalfConfig {
            token_endpoint: None,
            client_id: None,
            client_secret_env: None,
            audience: Some(audience.to_owned()),
            resource: None,
            scope: None,
            pass_through: true,
            scheme: None,
        };
        OnBehalf::new("pets", &config).unwrap()
    }

    fn holder(aud: Value) -> Principal {
        Principal::jwt("https://issuer.example", "alice")
            .with_claims(json!({ "aud": aud }).as_object().cloned().unwrap())
    }

    #[tokio::test]
    async fn a_token_is_passed_on_only_when_its_audience_names_the_source() {
        let on_behalf = passing("https://pets.example");
        let token = SubjectToken::new("the-persons-token");
        for aud in [
            json!("https://pets.example"),
            json!(["https://gateway.example/mcp", "https://pets.example"]),
        ] {
            let passed = on_behalf.token(&holder(aud), Some(&token)).await.unwrap();
            assert_eq!(passed, "the-persons-token");
        }
        for aud in [json!("https://gateway.example/mcp"), json!(["x"]), json!(7)] {
            let refused = on_behalf
                .token(&holder(aud), Some(&token))
                .await
                .unwrap_err();
            assert!(refused.contains("not for it"), "{refused}");
            assert!(!refused.contains("the-persons-token"));
        }
        let none = on_behalf
            .token(&holder(json!("https://pets.example")), None)
            .await
            .unwrap_err();
        assert!(none.contains("carried none"), "{none}");
    }

    #[test]
    fn one_way_and_only_one_is_configured() {
        let mut config = OnBehalfConfig {
            token_endpoint: None,
            client_id: None,
            client_secret_env: None,
            audience: None,
            resource: None,
            scope: None,
            pass_through: false,
            scheme: None,
        };
        assert!(OnBehalf::new("s", &config).is_err(), "neither");
        config.pass_through = true;
        assert!(
            OnBehalf::new("s", &config)
                .unwrap_err()
                .contains("audience"),
            "pass_through needs an audience"
        );
        config.token_endpoint = Some("https://issuer.example/token".into());
        assert!(OnBehalf::new("s", &config).is_err(), "both");
        config.pass_through = false;
        assert!(
            OnBehalf::new("s", &config)
                .unwrap_err()
                .contains("client_id"),
            "an exchange needs the gateway's client"
        );
    }
}

//! A credential given as text (an environment variable's value, say), read as its scheme's kind
//! wants it: [`Credentials::with_text`].

use std::collections::BTreeMap;
use std::fmt;

use super::SecurityScheme;
use super::{Credential, Credentials};

/// Why a credential's text cannot be used for its scheme. The message names the scheme, never
/// the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CredentialTextError(String);

impl fmt::Display for CredentialTextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CredentialTextError {}

impl Credentials {
    /// These credentials and `text` for the scheme `name` of `schemes` (a document's, as
    /// `openapi::read_operations` reads them), read as the scheme's kind wants it:
    ///
    /// | scheme | `text` |
    /// |---|---|
    /// | `apiKey` (header, query or cookie), `http` other than `basic` | the key or token, as it is |
    /// | `http` `basic` | `user:password` |
    /// | `oauth2` with a `clientCredentials` flow | `client_id:client_secret`: tokens are fetched by the flow given to [`with_client_credentials_flow`](Self::with_client_credentials_flow) (`toolkit_runtime::auth::ClientCredentials::flow()`, feature `auth`) from the flow's `tokenUrl` (resolved against `base_url` when relative; on another origin than `base_url`'s only if [`allow_token_origin`](Self::allow_token_origin) allowed it), kept until they expire, fetched again after a 401 |
    /// | another `oauth2`, `openIdConnect` | an access token |
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use toolkit_http::{Credentials, KeyLocation, SecurityScheme};
    ///
    /// let schemes = BTreeMap::from([(
    ///     "api_key".to_owned(),
    ///     SecurityScheme::ApiKey { name: "X-Api-Key".into(), location: KeyLocation::Header },
    /// )]);
    /// let credentials = Credentials::new()
    ///     .with_text(&schemes, "api_key", "the-key", "https://api.example.com")?;
    /// # Ok::<(), toolkit_http::CredentialTextError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`CredentialTextError`], naming the scheme and never the text: a scheme `schemes` lacks
    /// (the message lists those it has), a text of the wrong shape, a `tokenUrl` that is missing,
    /// on an origin not allowed, or refused, a mutual TLS scheme (its credential is the client's certificate).
    pub fn with_text(
        self,
        schemes: &BTreeMap<String, SecurityScheme>,
        name: &str,
        text: &str,
        base_url: &str,
    ) -> Result<Self, CredentialTextError> {
        let fail = |problem: String| CredentialTextError(format!("the scheme {name}: {problem}"));
        let scheme = schemes.get(name).ok_or_else(|| {
            let known: Vec<&str> = schemes.keys().map(String::as_str).collect();
            CredentialTextError(if known.is_empty() {
                format!("no scheme {name}: the document declares none")
            } else {
                format!(
                    "no scheme {name}: the document declares {}",
                    known.join(", ")
                )
            })
        })?;
        match scheme {
            SecurityScheme::Http { scheme } if scheme == "basic" => {
                let (user, password) = text
                    .split_once(':')
                    .ok_or_else(|| fail("the credential is not user:password".into()))?;
                Ok(self.with(
                    name,
                    Credential::Basic {
                        user: user.to_owned(),
                        password: password.to_owned(),
                    },
                ))
            }
            SecurityScheme::OAuth2 { flows } if flows.contains_key("clientCredentials") => {
                client_credentials(self, name, flows, text, base_url).map_err(fail)
            }
            SecurityScheme::MutualTls => Err(fail(
                "mutual TLS takes a client certificate on the HTTP client, not a value".into(),
            )),
            _ => Ok(self.with(name, Credential::Token(text.to_owned()))),
        }
    }
}

fn client_credentials(
    credentials: Credentials,
    name: &str,
    flows: &BTreeMap<String, super::OAuthFlow>,
    text: &str,
    base_url: &str,
) -> Result<Credentials, String> {
    let token_url = flows
        .get("clientCredentials")
        .and_then(|flow| flow.token_url.as_deref())
        .ok_or("its clientCredentials flow names no tokenUrl")?;
    let (id, secret) = text
        .split_once(':')
        .ok_or("the credential is not client_id:client_secret")?;
    let base = url::Url::parse(base_url).ok();
    let token_url = url::Url::parse(token_url)
        .or_else(|_| url::Url::parse(base_url).and_then(|base| base.join(token_url)))
        .map_err(|_| "its tokenUrl is not a URL")?;
    let origin = token_url.origin().ascii_serialization();
    let api_origin = base
        .as_ref()
        .map(|base| base.origin().ascii_serialization());
    if api_origin.as_deref() != Some(origin.as_str())
        && !credentials.token_origins.contains(&origin)
    {
        return Err(format!(
            "its tokenUrl is on {origin}, another origin than the API's ({}): the client secret \
             goes there only if the host allows that origin",
            api_origin.as_deref().unwrap_or("unknown")
        ));
    }
    let Some(flow) = credentials.client_credentials.clone() else {
        return Err(
            "OAuth 2 client credentials need a flow that fetches their tokens \
             (`Credentials::with_client_credentials_flow`; toolkit-runtime's feature `auth` gives \
             `auth::ClientCredentials::flow()`)"
                .into(),
        );
    };
    let tokens = flow(token_url, id, secret)?;
    Ok(credentials.with_shared_provider(name, tokens))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::{Arc, Mutex};

    use super::super::{ClientCredentialsFlow, CredentialProvider, KeyLocation, OAuthFlow};
    use super::*;

    fn schemes() -> BTreeMap<String, SecurityScheme> {
        BTreeMap::from([
            (
                "key".to_owned(),
                SecurityScheme::ApiKey {
                    name: "X-Key".into(),
                    location: KeyLocation::Header,
                },
            ),
            (
                "basic".to_owned(),
                SecurityScheme::Http {
                    scheme: "basic".into(),
                },
            ),
            (
                "machine".to_owned(),
                SecurityScheme::OAuth2 {
                    flows: BTreeMap::from([(
                        "clientCredentials".to_owned(),
                        OAuthFlow {
                            token_url: Some("/oauth/token".into()),
                            ..OAuthFlow::default()
                        },
                    )]),
                },
            ),
            ("tls".to_owned(), SecurityScheme::MutualTls),
        ])
    }

    fn problem(name: &str, text: &str) -> String {
        Credentials::new()
            .with_text(&schemes(), name, text, "http://127.0.0.1:9/v1")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn texts_of_the_wrong_shape_are_refused_naming_the_scheme_never_the_text() {
        assert!(problem("nope", "secret-1").contains("declares basic, key, machine, tls"));
        assert!(problem("basic", "secret-1").contains("user:password"));
        assert!(problem("tls", "secret-1").contains("client certificate"));
        assert!(problem("machine", "secret-1").contains("client_id:client_secret"));
        assert!(problem("machine", "id:secret-1").contains("with_client_credentials_flow"));
        for name in ["nope", "basic", "tls", "machine"] {
            assert!(!problem(name, "secret-1").contains("secret-1"));
        }
        let none = Credentials::new()
            .with_text(&BTreeMap::new(), "key", "k", "")
            .unwrap_err();
        assert!(none.to_string().contains("declares none"));
    }

    /// A flow that fetches nothing, and the token URLs it was given.
    fn recording_flow() -> (ClientCredentialsFlow, Arc<Mutex<Vec<String>>>) {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&asked);
        let flow: ClientCredentialsFlow = Arc::new(move |token_url, id, _secret| {
            seen.lock().unwrap().push(format!("{id}@{token_url}"));
            Ok(Arc::new(Credentials::new()) as Arc<dyn CredentialProvider>)
        });
        (flow, asked)
    }

    #[test]
    fn a_token_url_on_another_origin_needs_the_hosts_yes() {
        let (flow, asked) = recording_flow();
        let mut schemes = schemes();
        schemes.insert(
            "elsewhere".to_owned(),
            SecurityScheme::OAuth2 {
                flows: BTreeMap::from([(
                    "clientCredentials".to_owned(),
                    OAuthFlow {
                        token_url: Some("https://auth.example.com/token".into()),
                        ..OAuthFlow::default()
                    },
                )]),
            },
        );
        let api = "https://api.example.com/v1";
        let refused = Credentials::new()
            .with_client_credentials_flow(flow.clone())
            .with_text(&schemes, "elsewhere", "id:secret-1", api)
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("https://auth.example.com")
                && refused.contains("https://api.example.com")
                && !refused.contains("secret-1"),
            "{refused}"
        );
        assert!(
            Credentials::new()
                .with_client_credentials_flow(flow.clone())
                .allow_token_origin("https://auth.example.com/")
                .with_text(&schemes, "elsewhere", "id:secret-1", api)
                .is_ok()
        );
        // A relative tokenUrl is on the API's origin.
        assert!(
            Credentials::new()
                .with_client_credentials_flow(flow)
                .with_text(&schemes, "machine", "id:secret-1", api)
                .is_ok()
        );
        assert_eq!(
            *asked.lock().unwrap(),
            [
                "id@https://auth.example.com/token",
                "id@https://api.example.com/oauth/token"
            ]
        );
    }

    #[tokio::test]
    async fn each_kind_reads_its_text() {
        let credentials = Credentials::new()
            .with_text(&schemes(), "key", "k:1", "")
            .unwrap()
            .with_text(&schemes(), "basic", "ann:pass:word", "")
            .unwrap();
        assert_eq!(
            credentials.credential("key").await,
            Some(Credential::Token("k:1".into()))
        );
        assert_eq!(
            credentials.credential("basic").await,
            Some(Credential::Basic {
                user: "ann".into(),
                password: "pass:word".into()
            })
        );
    }
}

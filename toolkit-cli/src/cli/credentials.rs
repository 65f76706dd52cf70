//! `--credential SCHEME=VAR`: the credential of an OpenAPI document's security scheme, read from
//! the environment variable `VAR` (so that it is in no command line, shell history or process
//! list), and applied where the document says.
//!
//! What the variable holds depends on the scheme:
//!
//! | scheme                                   | the variable holds                          |
//! |------------------------------------------|---------------------------------------------|
//! | `apiKey` (header, query or cookie)       | the key, as it is                           |
//! | `http` `bearer` (or another token scheme)| the token                                   |
//! | `http` `basic`                           | `user:password`                             |
//! | `oauth2` with a `clientCredentials` flow | `client_id:client_secret` (tokens fetched from its `tokenUrl`, refreshed) |
//! | `oauth2` otherwise, `openIdConnect`      | an access token                             |

use std::collections::BTreeMap;

use reqwest::Url;
use toolkit_runtime::auth::ClientCredentials;
use toolkit_runtime::http::{Credential, Credentials, SecurityScheme};

/// The credentials `arguments` (each `SCHEME=VAR`) give for `schemes`, a document's security
/// schemes; `base_url` resolves a relative `tokenUrl`.
///
/// # Errors
///
/// A message for people, naming the scheme or the variable and never a value: an argument not
/// `SCHEME=VAR`, a scheme the document does not declare, a variable unset, a value of the wrong
/// shape for its scheme.
pub fn credentials(
    arguments: &[String],
    schemes: &BTreeMap<String, SecurityScheme>,
    base_url: &str,
) -> Result<Credentials, String> {
    credentials_from(arguments, schemes, base_url, |variable| {
        std::env::var(variable).ok()
    })
}

/// [`credentials`] with the variables read through `variables`.
fn credentials_from(
    arguments: &[String],
    schemes: &BTreeMap<String, SecurityScheme>,
    base_url: &str,
    variables: impl Fn(&str) -> Option<String>,
) -> Result<Credentials, String> {
    let mut credentials = Credentials::new();
    for argument in arguments {
        let (name, variable) = argument
            .split_once('=')
            .filter(|(name, variable)| !name.is_empty() && !variable.is_empty())
            .ok_or_else(|| format!("--credential {argument:?} is not SCHEME=VAR"))?;
        let scheme = schemes.get(name).ok_or_else(|| {
            let known: Vec<&str> = schemes.keys().map(String::as_str).collect();
            if known.is_empty() {
                format!("--credential {name}: the document declares no security scheme")
            } else {
                format!(
                    "--credential {name}: the document declares no such scheme (it declares {})",
                    known.join(", ")
                )
            }
        })?;
        let value = variables(variable)
            .ok_or_else(|| format!("--credential {name}={variable}: {variable} is not set"))?;
        credentials = match scheme {
            SecurityScheme::Http { scheme } if scheme == "basic" => {
                let (user, password) = value
                    .split_once(':')
                    .ok_or_else(|| format!("{variable} holds no user:password for {name}"))?;
                credentials.with(
                    name,
                    Credential::Basic {
                        user: user.to_owned(),
                        password: password.to_owned(),
                    },
                )
            }
            SecurityScheme::OAuth2 { flows } if flows.contains_key("clientCredentials") => {
                let token_url = flows["clientCredentials"]
                    .token_url
                    .as_deref()
                    .ok_or_else(|| format!("the scheme {name} names no tokenUrl"))?;
                let (id, secret) = value.split_once(':').ok_or_else(|| {
                    format!("{variable} holds no client_id:client_secret for {name}")
                })?;
                let token_url = resolve(token_url, base_url)
                    .ok_or_else(|| format!("the tokenUrl of {name} is not a URL"))?;
                let tokens = ClientCredentials::new(token_url, id, secret)
                    .map_err(|error| format!("--credential {name}: {error}"))?;
                credentials.with_provider(name, tokens)
            }
            SecurityScheme::MutualTls => {
                return Err(format!(
                    "--credential {name}: a mutual TLS scheme takes a client certificate, not a value"
                ));
            }
            _ => credentials.with(name, Credential::Token(value)),
        };
    }
    Ok(credentials)
}

/// `url` as it is when absolute, else relative to `base_url` (as a document's URLs may be).
fn resolve(url: &str, base_url: &str) -> Option<Url> {
    Url::parse(url)
        .ok()
        .or_else(|| Url::parse(base_url).ok()?.join(url).ok())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use toolkit_runtime::http::{KeyLocation, OAuthFlow};

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
        ])
    }

    #[test]
    fn bad_arguments_name_the_scheme_or_the_variable_never_a_value() {
        let variables = |variable: &str| {
            ["BASIC", "MACHINE"]
                .contains(&variable)
                .then(|| "no-colon-secret".to_owned())
        };
        let problem = |argument: &str| {
            credentials_from(
                &[argument.to_owned()],
                &schemes(),
                "http://127.0.0.1:1/v1",
                variables,
            )
            .unwrap_err()
        };
        assert!(problem("key").contains("is not SCHEME=VAR"));
        assert!(problem("=VAR").contains("is not SCHEME=VAR"));
        let unknown = problem("oauth=BASIC");
        assert!(unknown.contains("basic, key, machine"), "{unknown}");
        assert!(problem("key=UNSET").contains("is not set"));
        for argument in ["basic=BASIC", "machine=MACHINE"] {
            let message = problem(argument);
            assert!(!message.contains("no-colon-secret"), "{message}");
        }
        let none =
            credentials_from(&["key=X".to_owned()], &BTreeMap::new(), "", variables).unwrap_err();
        assert!(none.contains("declares no security scheme"), "{none}");
    }

    #[test]
    fn relative_token_urls_resolve_against_the_base_url() {
        assert_eq!(
            resolve("/oauth/token", "http://127.0.0.1:9/v1")
                .unwrap()
                .as_str(),
            "http://127.0.0.1:9/oauth/token"
        );
        assert_eq!(
            resolve("https://auth.example.com/t", "http://127.0.0.1:9/v1")
                .unwrap()
                .as_str(),
            "https://auth.example.com/t"
        );
        assert!(resolve("/t", "not a url").is_none());
    }
}

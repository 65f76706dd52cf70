//! A document's security: its schemes (`components.securitySchemes`) and which of them each
//! operation requires (`security`, the operation's over the document's).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::pointer::{self, location};
use super::{SkipReason, Skipped};
use crate::operations::{KeyLocation, OAuthFlow, SecurityRequirement, SecurityScheme};

/// A document's security, as [`read_operations`](super::read_operations) read it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Security {
    /// The schemes, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub schemes: BTreeMap<String, SecurityScheme>,
    /// Each operation's requirements (by tool name): alternatives, the first a host can meet
    /// is used. No entry, or an empty list, means none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requirements: BTreeMap<String, Vec<SecurityRequirement>>,
    /// The parameters that carry a scheme's credential, left out of the tools' inputs (a model
    /// never gives a credential).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub credential_parameters: Vec<CredentialParameter>,
    /// Schemes that could not be read, with where and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<Skipped>,
}

impl Security {
    /// Whether the document says nothing of security.
    pub fn is_empty(&self) -> bool {
        self.schemes.is_empty()
            && self.requirements.is_empty()
            && self.credential_parameters.is_empty()
            && self.problems.is_empty()
    }
}

/// A parameter left out of a tool's input because it carries a scheme's credential.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CredentialParameter {
    /// The tool.
    pub operation: String,
    /// The parameter's name.
    pub parameter: String,
    /// Where it goes.
    #[serde(rename = "in")]
    pub location: KeyLocation,
    /// The scheme whose credential it is.
    pub scheme: String,
}

/// The schemes of `document`; a scheme that cannot be read is listed in `skipped`.
pub(crate) fn schemes(
    document: &Value,
    skipped: &mut Vec<Skipped>,
) -> BTreeMap<String, SecurityScheme> {
    let mut read = BTreeMap::new();
    let Some(Value::Object(schemes)) = document
        .get("components")
        .and_then(|components| components.get("securitySchemes"))
    else {
        return read;
    };
    for (name, scheme) in schemes {
        let at = location(["components", "securitySchemes", name]);
        match scheme_of(document, scheme) {
            Ok(scheme) => {
                read.insert(name.clone(), scheme);
            }
            Err(reason) => skipped.push(Skipped {
                location: at,
                method: String::new(),
                path: String::new(),
                reason,
            }),
        }
    }
    read
}

fn scheme_of(document: &Value, scheme: &Value) -> Result<SecurityScheme, SkipReason> {
    let scheme = pointer::follow(document, scheme)?;
    let text = |key: &str| scheme.get(key).and_then(Value::as_str);
    let malformed = |what: &str| SkipReason::malformed(format!("the security scheme {what}"));
    match text("type") {
        Some("apiKey") => {
            let name = text("name")
                .filter(|n| !n.is_empty())
                .ok_or_else(|| malformed("has no `name`"))?;
            let location = match text("in") {
                Some("header") => KeyLocation::Header,
                Some("query") => KeyLocation::Query,
                Some("cookie") => KeyLocation::Cookie,
                _ => return Err(malformed("puts its key in no place of a request")),
            };
            Ok(SecurityScheme::ApiKey {
                name: name.to_owned(),
                location,
            })
        }
        Some("http") => Ok(SecurityScheme::Http {
            scheme: text("scheme")
                .filter(|s| !s.is_empty())
                .ok_or_else(|| malformed("has no `scheme`"))?
                .to_ascii_lowercase(),
        }),
        Some("oauth2") => {
            let mut flows = BTreeMap::new();
            if let Some(Value::Object(named)) = scheme.get("flows") {
                for (name, flow) in named {
                    let url = |key: &str| flow.get(key).and_then(Value::as_str).map(str::to_owned);
                    let scopes = flow
                        .get("scopes")
                        .and_then(Value::as_object)
                        .map(|scopes| scopes.keys().cloned().collect())
                        .unwrap_or_default();
                    flows.insert(
                        name.clone(),
                        OAuthFlow {
                            authorization_url: url("authorizationUrl"),
                            token_url: url("tokenUrl"),
                            refresh_url: url("refreshUrl"),
                            scopes,
                        },
                    );
                }
            }
            Ok(SecurityScheme::OAuth2 { flows })
        }
        Some("openIdConnect") => Ok(SecurityScheme::OpenIdConnect {
            url: text("openIdConnectUrl")
                .ok_or_else(|| malformed("has no `openIdConnectUrl`"))?
                .to_owned(),
        }),
        Some("mutualTLS") => Ok(SecurityScheme::MutualTls),
        _ => Err(malformed("has a `type` that is none of OpenAPI's")),
    }
}

/// The requirements `security` lists (`None` when it is no list).
pub(crate) fn requirements(security: Option<&Value>) -> Option<Vec<SecurityRequirement>> {
    let list = security?.as_array()?;
    Some(
        list.iter()
            .filter_map(Value::as_object)
            .map(|requirement| {
                requirement
                    .iter()
                    .map(|(scheme, scopes)| {
                        let scopes = scopes
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect();
                        (scheme.clone(), scopes)
                    })
                    .collect()
            })
            .collect(),
    )
}

/// The scheme that `name` at `location` carries the credential of, among the document's
/// `schemes` (whether or not the operation requires it: a credential is never a model's to
/// give): an API key of that name and place, or the `Authorization` header of an HTTP, OAuth 2
/// or OpenID Connect scheme.
pub(crate) fn carried_by<'a>(
    schemes: &'a BTreeMap<String, SecurityScheme>,
    name: &str,
    location: KeyLocation,
) -> Option<&'a str> {
    schemes
        .iter()
        .find(|(_, scheme)| match scheme {
            SecurityScheme::ApiKey {
                name: key,
                location: at,
            } => {
                *at == location
                    && if location == KeyLocation::Header {
                        key.eq_ignore_ascii_case(name)
                    } else {
                        key == name
                    }
            }
            SecurityScheme::Http { .. }
            | SecurityScheme::OAuth2 { .. }
            | SecurityScheme::OpenIdConnect { .. } => {
                location == KeyLocation::Header && name.eq_ignore_ascii_case("authorization")
            }
            SecurityScheme::MutualTls => false,
        })
        .map(|(scheme, _)| scheme.as_str())
}

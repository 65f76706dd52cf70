//! `--credential SCHEME=VAR`: the credential of an OpenAPI document's security scheme, read from
//! the environment variable `VAR` (so that it is in no command line, shell history or process
//! list), and applied where the document says. What the variable holds depends on the scheme's
//! kind (an API key or token as it is, HTTP basic as `user:password`, OAuth 2 client credentials
//! as `client_id:client_secret`): see `toolkit_runtime::http::Credentials::with_text`. When none
//! given meets what an operation requires, [`credential_hint`] tells the person which to give.

use std::collections::BTreeMap;

use toolkit_runtime::http::{Credentials, SecurityRequirement, SecurityScheme};

/// The credentials `arguments` (each `SCHEME=VAR`) give for `schemes`, a document's security
/// schemes; `base_url` resolves a relative `tokenUrl`, which may be on another origin than
/// `base_url`'s only if `token_origins` lists it.
///
/// # Errors
///
/// A message for people, naming the scheme or the variable and never a value: an argument not
/// `SCHEME=VAR`, a scheme the document does not declare, a variable unset, a value of the wrong
/// shape for its scheme.
pub fn credentials(
    arguments: &[String],
    token_origins: &[String],
    schemes: &BTreeMap<String, SecurityScheme>,
    base_url: &str,
) -> Result<Credentials, String> {
    // Client credentials become tokens through OAuth's flow, which the HTTP source leaves to
    // its host (as the gateway does).
    let mut credentials = Credentials::new()
        .with_client_credentials_flow(toolkit_runtime::auth::ClientCredentials::flow());
    for origin in token_origins {
        credentials = credentials.allow_token_origin(origin.clone());
    }
    credentials_from(credentials, arguments, schemes, base_url, |variable| {
        std::env::var(variable).ok()
    })
}

/// [`credentials`] with the variables read through `variables`.
fn credentials_from(
    mut credentials: Credentials,
    arguments: &[String],
    schemes: &BTreeMap<String, SecurityScheme>,
    base_url: &str,
    variables: impl Fn(&str) -> Option<String>,
) -> Result<Credentials, String> {
    for argument in arguments {
        let (name, variable) = argument
            .split_once('=')
            .filter(|(name, variable)| !name.is_empty() && !variable.is_empty())
            .ok_or_else(|| format!("--credential {argument:?} is not SCHEME=VAR"))?;
        let value = variables(variable)
            .ok_or_else(|| format!("--credential {name}={variable}: {variable} is not set"))?;
        credentials = credentials
            .with_text(schemes, name, &value, base_url)
            .map_err(|error| format!("--credential {name}={variable}: {error}"))?;
    }
    Ok(credentials)
}

/// What a person is told when `operation` needs a credential of one of the requirements
/// `wanted` and the `--credential SCHEME=VAR`s `given` meet none of them: the schemes it takes,
/// and the flag (or the gateway's key) that gives one. `None` when one is met or none is needed.
pub fn credential_hint(
    operation: &str,
    wanted: &[SecurityRequirement],
    given: &[String],
) -> Option<String> {
    let given: Vec<&str> = given
        .iter()
        .filter_map(|pair| pair.split_once('=').map(|(scheme, _)| scheme.trim()))
        .collect();
    let met = |requirement: &SecurityRequirement| {
        requirement
            .keys()
            .all(|scheme| given.contains(&scheme.as_str()))
    };
    if wanted.is_empty() || wanted.iter().any(met) {
        return None;
    }
    let schemes: Vec<String> = wanted
        .iter()
        .map(|requirement| {
            requirement
                .keys()
                .map(|scheme| format!("`{scheme}`"))
                .collect::<Vec<_>>()
                .join(" and ")
        })
        .collect();
    let first = wanted.first()?.keys().next()?;
    Some(format!(
        "`{operation}` needs a credential of the security scheme {}, and none was given: pass \
         `--credential {first}=VARIABLE` (VARIABLE: the environment variable that holds it); in \
         the gateway, the source's `credentials = {{ {first} = \"VARIABLE\" }}`",
        schemes.join(", or ")
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use toolkit_runtime::http::KeyLocation;

    use super::*;

    #[test]
    fn bad_arguments_name_the_scheme_or_the_variable_never_a_value() {
        let schemes = BTreeMap::from([(
            "key".to_owned(),
            SecurityScheme::ApiKey {
                name: "X-Key".into(),
                location: KeyLocation::Header,
            },
        )]);
        let variables = |variable: &str| (variable == "SET").then(|| "the-secret".to_owned());
        let problem = |argument: &str| {
            credentials_from(
                Credentials::new(),
                &[argument.to_owned()],
                &schemes,
                "",
                variables,
            )
            .unwrap_err()
        };
        assert!(problem("key").contains("is not SCHEME=VAR"));
        assert!(problem("=SET").contains("is not SCHEME=VAR"));
        assert!(problem("key=UNSET").contains("UNSET is not set"));
        let unknown = problem("oauth=SET");
        assert!(
            unknown.contains("no scheme oauth: the document declares key"),
            "{unknown}"
        );
        assert!(!unknown.contains("the-secret"));
        assert!(
            credentials_from(
                Credentials::new(),
                &["key=SET".to_owned()],
                &schemes,
                "",
                variables
            )
            .is_ok()
        );
    }
}

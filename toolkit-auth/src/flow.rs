//! The authorization code flow with PKCE (S256), `state` and `resource` (RFC 8707), and the
//! refresh of a grant — the requests made with the `oauth2` crate, over our own HTTP (bounded,
//! no redirects).

use std::time::Duration;

use oauth2::basic::{BasicClient, BasicErrorResponseType, BasicTokenResponse};
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge,
    RedirectUrl, RefreshToken, RequestTokenError, Scope, TokenResponse, TokenUrl,
};
use reqwest::Url;

use super::authorization_server::AuthorizationServer;
use super::callback::AuthorizationCallback;
use super::error::server_words;
use super::fetch::{AuthHttp, Unreached};
use super::grant::{ClientAuth, Grant, RegisteredClient, now};
use super::{AuthError, Secret};

/// What an authorization asks for.
pub(crate) struct Ask<'a> {
    pub server: &'a AuthorizationServer,
    pub client: &'a RegisteredClient,
    pub client_auth: ClientAuth,
    pub redirect_uri: &'a Url,
    pub resource: Option<&'a str>,
    pub scopes: &'a [String],
}

/// How a refresh ended when it did not give tokens.
pub(crate) enum RefreshFailed {
    /// The refresh token is no longer good (`invalid_grant`): authorize from scratch.
    Expired,
    /// Anything else.
    Failed(AuthError),
}

fn auth_type(client_auth: ClientAuth) -> AuthType {
    match client_auth {
        ClientAuth::ClientSecretBasic => AuthType::BasicAuth,
        ClientAuth::ClientSecretPost | ClientAuth::None => AuthType::RequestBody,
    }
}

/// The secret to send, by the method: none for a public client even if it has one.
fn secret_of(client: &RegisteredClient, client_auth: ClientAuth) -> Option<ClientSecret> {
    match client_auth {
        ClientAuth::None => None,
        _ => client
            .client_secret
            .as_ref()
            .map(|secret| ClientSecret::new(secret.expose().to_owned())),
    }
}

/// Sends the user to the authorization endpoint, checks the redirect, and exchanges the code.
pub(crate) async fn authorize(
    http: &AuthHttp,
    ask: &Ask<'_>,
    callback: &dyn AuthorizationCallback,
    wait: Duration,
) -> Result<Grant, AuthError> {
    let authorization_endpoint = ask.server.authorization_endpoint.clone().ok_or_else(|| {
        AuthError::refused(
            "the authorization server has no authorization endpoint (it offers no authorization by a user)",
        )
    })?;
    let mut oauth = BasicClient::new(ClientId::new(ask.client.client_id.clone()))
        .set_auth_uri(AuthUrl::from_url(authorization_endpoint))
        .set_token_uri(TokenUrl::from_url(ask.server.token_endpoint.clone()))
        .set_redirect_uri(RedirectUrl::from_url(ask.redirect_uri.clone()))
        .set_auth_type(auth_type(ask.client_auth));
    if let Some(secret) = secret_of(ask.client, ask.client_auth) {
        oauth = oauth.set_client_secret(secret);
    }
    // A fresh verifier per request (32 random bytes: 43 characters) and 128 random bits of state.
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let mut request = oauth
        .authorize_url(CsrfToken::new_random)
        .set_pkce_challenge(challenge)
        .add_scopes(ask.scopes.iter().cloned().map(Scope::new));
    if let Some(resource) = ask.resource {
        request = request.add_extra_param("resource", resource);
    }
    let (url, state) = request.url();
    let redirect = tokio::time::timeout(wait, callback.authorize(url))
        .await
        .map_err(|_| {
            AuthError::refused(format!(
                "no redirect came back from the authorization within {wait:?}"
            ))
        })??;
    let code = code_of(&redirect, ask, state.secret())?;

    let answer = oauth
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(verifier);
    let answer = match ask.resource {
        Some(resource) => answer.add_extra_param("resource", resource),
        None => answer,
    };
    let call = owned_call(http);
    let tokens = answer
        .request_async(&call)
        .await
        .map_err(|error| token_error(error).0)?;
    grant_of(
        &tokens,
        &Issued {
            issuer: &ask.server.issuer,
            token_endpoint: ask.server.token_endpoint.as_str(),
            resource: ask.resource,
            client: ask.client,
            client_auth: ask.client_auth,
            scopes: ask.scopes,
        },
        None,
    )
}

/// The code of the redirect `redirect`, once it is checked: it is the redirect URI, its `state`
/// is the one sent, its `iss` (RFC 9207) is the issuer's, and it carries no `error`.
fn code_of(redirect: &Url, ask: &Ask<'_>, state: &str) -> Result<String, AuthError> {
    if redirect.origin() != ask.redirect_uri.origin() || redirect.path() != ask.redirect_uri.path()
    {
        return Err(AuthError::refused(
            "the authorization came back to another address than the redirect URI",
        ));
    }
    let mut got_state = None;
    let mut code = None;
    let mut error = None;
    let mut iss = None;
    for (name, value) in redirect.query_pairs() {
        match name.as_ref() {
            "state" => got_state = Some(value.into_owned()),
            "code" => code = Some(value.into_owned()),
            "error" => error = Some(value.into_owned()),
            "iss" => iss = Some(value.into_owned()),
            _ => {}
        }
    }
    if got_state.as_deref() != Some(state) {
        return Err(AuthError::refused(
            "the authorization came back with another state than the one sent",
        ));
    }
    match iss {
        // An issuer known from metadata is checked (for endpoints an API document names, it is
        // not known: empty).
        Some(iss) if !ask.server.issuer.is_empty() && iss != ask.server.issuer => {
            return Err(AuthError::refused(
                "the authorization came back from another issuer than the one asked",
            ));
        }
        None if ask.server.iss_parameter_supported => {
            return Err(AuthError::refused(
                "the authorization came back without the issuer its server says it sends",
            ));
        }
        _ => {}
    }
    if let Some(error) = error {
        return Err(AuthError::refused(format!(
            "the authorization server refused the authorization: {}",
            server_words(&error, 64)
        )));
    }
    code.filter(|code| !code.is_empty())
        .ok_or_else(|| AuthError::refused("the authorization came back without a code"))
}

/// Refreshes `grant` with its refresh token, keeping what the server does not renew.
pub(crate) async fn refresh(http: &AuthHttp, grant: &Grant) -> Result<Grant, RefreshFailed> {
    let Some(refresh_token) = &grant.refresh_token else {
        return Err(RefreshFailed::Expired);
    };
    let token_url = Url::parse(&grant.token_endpoint).map_err(|_| {
        RefreshFailed::Failed(AuthError::refused("the stored token endpoint is not a URL"))
    })?;
    let mut oauth = BasicClient::new(ClientId::new(grant.client.client_id.clone()))
        .set_token_uri(TokenUrl::from_url(token_url))
        .set_auth_type(auth_type(grant.client_auth));
    if let Some(secret) = secret_of(&grant.client, grant.client_auth) {
        oauth = oauth.set_client_secret(secret);
    }
    let token = RefreshToken::new(refresh_token.expose().to_owned());
    let request = oauth.exchange_refresh_token(&token);
    let request = match &grant.resource {
        Some(resource) => request.add_extra_param("resource", resource.clone()),
        None => request,
    };
    let call = owned_call(http);
    let tokens = request.request_async(&call).await.map_err(|error| {
        let (error, invalid_grant) = token_error(error);
        if invalid_grant {
            RefreshFailed::Expired
        } else {
            RefreshFailed::Failed(error)
        }
    })?;
    let mut refreshed = grant_of(
        &tokens,
        &Issued {
            issuer: &grant.issuer,
            token_endpoint: &grant.token_endpoint,
            resource: grant.resource.as_deref(),
            client: &grant.client,
            client_auth: grant.client_auth,
            scopes: &grant.scopes,
        },
        grant.refresh_token.clone(),
    )
    .map_err(RefreshFailed::Failed)?;
    if refreshed.granted.is_none() {
        refreshed.granted = grant.granted.clone();
    }
    Ok(refreshed)
}

/// The `oauth2` crate's HTTP client: ours, in futures that own what they use (a future that
/// borrowed would not be `Send` for every lifetime the crate's bounds ask).
pub(crate) fn owned_call(
    http: &AuthHttp,
) -> impl Fn(
    oauth2::HttpRequest,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<oauth2::HttpResponse, Unreached>> + Send>,
> {
    let http = http.clone();
    move |request| {
        let http = http.clone();
        Box::pin(async move { http.oauth2(request).await })
    }
}

/// Who tokens were issued to, for what.
struct Issued<'a> {
    issuer: &'a str,
    token_endpoint: &'a str,
    resource: Option<&'a str>,
    client: &'a RegisteredClient,
    client_auth: ClientAuth,
    scopes: &'a [String],
}

/// The grant a token answer gives. `kept_refresh` is the refresh token to keep when the server
/// sends no new one.
fn grant_of(
    tokens: &BasicTokenResponse,
    ask: &Issued<'_>,
    kept_refresh: Option<Secret>,
) -> Result<Grant, AuthError> {
    if !tokens.token_type().as_ref().eq_ignore_ascii_case("bearer") {
        return Err(AuthError::refused(
            "the token endpoint issued a token that is not a bearer token",
        ));
    }
    if tokens.access_token().secret().is_empty() {
        return Err(AuthError::refused(
            "the token endpoint issued an empty token",
        ));
    }
    Ok(Grant {
        issuer: ask.issuer.to_owned(),
        token_endpoint: ask.token_endpoint.to_owned(),
        resource: ask.resource.map(str::to_owned),
        client: ask.client.clone(),
        client_auth: ask.client_auth,
        access_token: Secret::new(tokens.access_token().secret().clone()),
        refresh_token: tokens
            .refresh_token()
            .map(|token| Secret::new(token.secret().clone()))
            .or(kept_refresh),
        expires_at: tokens
            .expires_in()
            .map(|within| now().saturating_add(within.as_secs())),
        scopes: ask.scopes.to_vec(),
        granted: tokens
            .scopes()
            .map(|scopes| scopes.iter().map(|scope| scope.to_string()).collect()),
    })
}

type TokenError =
    RequestTokenError<Unreached, oauth2::StandardErrorResponse<BasicErrorResponseType>>;

/// What a failed token request reads as (words with no secret), and whether it was
/// `invalid_grant`.
fn token_error(error: TokenError) -> (AuthError, bool) {
    match error {
        RequestTokenError::ServerResponse(answer) => {
            let invalid_grant = *answer.error() == BasicErrorResponseType::InvalidGrant;
            (
                AuthError::refused(format!(
                    "the token endpoint refused the request: {}",
                    server_words(answer.error().as_ref(), 64)
                )),
                invalid_grant,
            )
        }
        RequestTokenError::Request(Unreached(description)) => {
            (AuthError::unavailable(description), false)
        }
        RequestTokenError::Parse(..) => (
            AuthError::refused("the token endpoint answered something that is not a token"),
            false,
        ),
        RequestTokenError::Other(_) => (
            AuthError::refused("the token endpoint's answer could not be read"),
            false,
        ),
    }
}

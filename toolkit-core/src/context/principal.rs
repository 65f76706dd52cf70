//! Who is behind a request: [`Principal`].
//!
//! A server that authenticates its clients (the gateway) knows, for each request it serves, who
//! sent it: the holder of an opaque token, the issuer and subject of a JWT, or the one person of
//! a server that listens on loopback without authentication. It puts that [`Principal`] in the
//! request's extensions and in the [`CallContext`](crate::CallContext) of each call it serves
//! ([`CallContext::principal`](crate::CallContext::principal)), so that what it keeps for one
//! person (sessions, tasks, subscriptions, relays, credentials) is never handed to another.

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

/// Who is behind a request: an identity compared by its [`id`](Principal::id) alone, and the
/// claims a policy may read. Cheap to clone.
///
/// ```
/// use toolkit_core::context::Principal;
///
/// let alice = Principal::token("alice");
/// let alice_by_jwt = Principal::jwt("https://issuer.example", "alice");
/// assert_eq!(alice.id(), "token:alice");
/// assert_ne!(alice, alice_by_jwt, "one name, two ways in: two principals");
/// assert_eq!(Principal::loopback(), Principal::loopback());
/// ```
#[derive(Clone)]
pub struct Principal {
    inner: Arc<Inner>,
}

struct Inner {
    /// What tells principals apart: `token:NAME`, `jwt:ISS#SUB`, or `loopback`.
    id: String,
    /// The name shown in logs and audit records.
    name: String,
    /// The token's claims (a JWT's payload), empty for an opaque token or loopback.
    claims: Map<String, Value>,
}

impl Principal {
    /// The holder of an opaque token, by the name the configuration gives it.
    pub fn token(name: &str) -> Self {
        Self::new(format!("token:{name}"), name.to_owned(), Map::new())
    }

    /// The subject `sub` of a JWT its issuer `iss` signed. Two issuers' subjects of one name are
    /// two principals.
    pub fn jwt(issuer: &str, subject: &str) -> Self {
        Self::new(
            format!("jwt:{issuer}#{subject}"),
            subject.to_owned(),
            Map::new(),
        )
    }

    /// The one person of a server without authentication (it listens on loopback, or on stdio).
    pub fn loopback() -> Self {
        Self::new("loopback".to_owned(), "loopback".to_owned(), Map::new())
    }

    fn new(id: String, name: String, claims: Map<String, Value>) -> Self {
        Self {
            inner: Arc::new(Inner { id, name, claims }),
        }
    }

    /// The same principal, with the claims of its token (for a policy to read).
    #[must_use]
    pub fn with_claims(self, claims: Map<String, Value>) -> Self {
        Self::new(self.inner.id.clone(), self.inner.name.clone(), claims)
    }

    /// What tells this principal from every other: `token:NAME`, `jwt:ISS#SUB` or `loopback`.
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// The name to show (a token's name, a JWT's subject).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The claims of the principal's token (a JWT's payload); empty for other kinds.
    pub fn claims(&self) -> &Map<String, Value> {
        &self.inner.claims
    }
}

/// Two principals are one when their [`id`](Principal::id)s are: claims change with each token.
impl PartialEq for Principal {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner) || self.inner.id == other.inner.id
    }
}

impl Eq for Principal {}

impl std::hash::Hash for Principal {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.inner.id.hash(state);
    }
}

/// The id alone: claims may be personal data, and stay out of logs.
impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Principal").field(&self.inner.id).finish()
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principals_are_told_apart_by_their_id_alone() {
        let mut claims = Map::new();
        claims.insert("groups".into(), Value::from(vec!["admins"]));
        let with = Principal::jwt("https://a.example", "bob").with_claims(claims);
        assert_eq!(with, Principal::jwt("https://a.example", "bob"));
        assert_ne!(with, Principal::jwt("https://b.example", "bob"));
        assert_ne!(Principal::token("bob"), Principal::jwt("x", "bob"));
        assert_eq!(with.name(), "bob");
        assert_eq!(with.claims()["groups"], Value::from(vec!["admins"]));
        assert_eq!(
            format!("{with:?}"),
            r#"Principal("jwt:https://a.example#bob")"#
        );
    }
}

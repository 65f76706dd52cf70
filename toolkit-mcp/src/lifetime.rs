//! How long a server's tool listing stays fresh: [`ListLifetime`], read from the `ttlMs` and
//! `cacheScope` a `tools/list` result of the stateless revision (2026-07-28) carries, and
//! [`ListLifetimeHandle`], where a source keeps the one of its last listing.
//!
//! A listing says a lifetime when one of its pages carries `ttlMs`; over several pages the
//! shortest counts. `ttlMs` is bounded: a negative (or non-numeric) one is 0 (stale at once),
//! one longer than [`MAX_LIST_TTL`] is that. A listing without `ttlMs` (every session revision,
//! and a stateless server that gives none) says nothing: the host keeps its own schedule.

use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant};

use serde_json::Value;

use toolkit_core::JsonObject;

/// The longest lifetime a listing is taken to have: a week, whatever larger `ttlMs` it says.
pub const MAX_LIST_TTL: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// Who may share a listing (`cacheScope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheScope {
    /// Any client may reuse it, whoever it authenticated as (`"public"`).
    Public,
    /// Only the authorization context that listed it may reuse it (`"private"`, also what an
    /// unknown value is taken for).
    Private,
}

/// The lifetime of a listing: when it was listed, how long it stays fresh, and who may share it.
///
/// ```
/// use std::time::{Duration, Instant};
/// use toolkit_mcp::ListLifetime;
///
/// let lifetime = ListLifetime { listed_at: Instant::now(), ttl: Duration::from_secs(60), scope: None };
/// assert!(!lifetime.is_stale());
/// assert!(lifetime.stale_at() > lifetime.listed_at);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListLifetime {
    /// When the listing began.
    pub listed_at: Instant,
    /// How long after [`listed_at`](Self::listed_at) it stays fresh (`ttlMs`, bounded).
    pub ttl: Duration,
    /// `cacheScope`, when the server said it.
    pub scope: Option<CacheScope>,
}

impl ListLifetime {
    /// When the listing goes stale.
    pub fn stale_at(&self) -> Instant {
        self.listed_at
            .checked_add(self.ttl)
            .unwrap_or(self.listed_at)
    }

    /// Whether the listing is stale now: a catalog built from it should be listed again.
    pub fn is_stale(&self) -> bool {
        Instant::now() >= self.stale_at()
    }
}

/// Where a source keeps the lifetime of its last listing, shared: a host that holds the source
/// behind a wrapper (a gateway) keeps a clone and reads it after each discovery.
#[derive(Clone, Debug, Default)]
pub struct ListLifetimeHandle(Arc<RwLock<Option<ListLifetime>>>);

impl ListLifetimeHandle {
    /// The lifetime of the last listing that said one; `None` before the first listing, or
    /// when the last said none.
    pub fn get(&self) -> Option<ListLifetime> {
        *self.0.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn set(&self, lifetime: Option<ListLifetime>) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = lifetime;
    }
}

/// What one page says of its lifetime: `ttlMs` bounded, and `cacheScope`; `None` when it has no
/// `ttlMs`.
pub(crate) fn said(result: &JsonObject) -> Option<(Duration, Option<CacheScope>)> {
    let ttl = result.get("ttlMs")?;
    let millis = ttl.as_f64().filter(|millis| *millis > 0.0).unwrap_or(0.0);
    let max = MAX_LIST_TTL.as_secs_f64() * 1_000.0;
    let ttl = Duration::from_secs_f64(millis.min(max) / 1_000.0);
    let scope = match result.get("cacheScope") {
        Some(Value::String(scope)) if scope == "public" => Some(CacheScope::Public),
        Some(Value::Null) | None => None,
        Some(_) => Some(CacheScope::Private),
    };
    Some((ttl, scope))
}

/// The lifetime of a listing begun at `listed_at` whose pages said `pages`: the shortest ttl,
/// private when any page is; `None` when no page said one.
pub(crate) fn of_listing(
    listed_at: Instant,
    pages: impl IntoIterator<Item = (Duration, Option<CacheScope>)>,
) -> Option<ListLifetime> {
    pages
        .into_iter()
        .fold(None, |lifetime: Option<ListLifetime>, (ttl, scope)| {
            Some(match lifetime {
                None => ListLifetime {
                    listed_at,
                    ttl,
                    scope,
                },
                Some(known) => ListLifetime {
                    listed_at,
                    ttl: known.ttl.min(ttl),
                    scope: match (known.scope, scope) {
                        (Some(CacheScope::Private), _) | (_, Some(CacheScope::Private)) => {
                            Some(CacheScope::Private)
                        }
                        (known, said) => known.or(said),
                    },
                },
            })
        })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;

    fn page(value: Value) -> JsonObject {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn ttl_is_bounded_both_ways() {
        let said = |value| said(&page(value));
        assert_eq!(said(json!({"tools": []})), None);
        assert_eq!(
            said(json!({"ttlMs": 1500, "cacheScope": "public"})),
            Some((Duration::from_millis(1500), Some(CacheScope::Public)))
        );
        assert_eq!(said(json!({"ttlMs": -5})), Some((Duration::ZERO, None)));
        assert_eq!(said(json!({"ttlMs": "soon"})), Some((Duration::ZERO, None)));
        assert_eq!(
            said(json!({"ttlMs": 1e300, "cacheScope": "team"})),
            Some((MAX_LIST_TTL, Some(CacheScope::Private)))
        );
        assert_eq!(said(json!({"ttlMs": u64::MAX})), Some((MAX_LIST_TTL, None)));
    }

    #[test]
    fn a_listing_lives_as_long_as_its_shortest_page() {
        let now = Instant::now();
        assert_eq!(of_listing(now, []), None);
        let lifetime = of_listing(
            now,
            [
                (Duration::from_secs(60), Some(CacheScope::Public)),
                (Duration::from_secs(5), Some(CacheScope::Private)),
            ],
        )
        .unwrap();
        assert_eq!(lifetime.ttl, Duration::from_secs(5));
        assert_eq!(lifetime.scope, Some(CacheScope::Private));
        assert_eq!(lifetime.stale_at(), now + Duration::from_secs(5));
        let stale = of_listing(now, [(Duration::ZERO, None)]).unwrap();
        assert!(stale.is_stale());
    }
}

//! One upstream's lists (resources, resource templates, prompts) as it last answered them, served
//! to every client until it is listed again: a client that asks for a list a thousand times asks
//! the upstream nothing. The first is asked when first needed, once however many wait for it; the
//! next when the gateway lists the upstream again (its refresh, its `list_changed`).

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

/// What an upstream listed, as it wrote the entries.
#[derive(Debug, Default)]
pub(super) struct Listing {
    /// `resources/list`.
    pub(super) resources: Vec<Value>,
    /// `resources/templates/list`.
    pub(super) templates: Vec<Value>,
    /// `prompts/list`.
    pub(super) prompts: Vec<Value>,
    /// `skills/list`, each entry as the MCP source read and checked it.
    pub(super) skills: Vec<Value>,
    /// A list failed with no earlier one to keep in its place: served, but not kept (the next
    /// client asks again rather than an empty list being served until the next relist).
    pub(super) short: bool,
}

/// An upstream's last [`Listing`], and the turn to ask for the next one.
#[derive(Debug, Default)]
pub(super) struct ListingSlot {
    last: Mutex<Option<Arc<Listing>>>,
    /// Held while the upstream is asked, so that two never ask it at once.
    asking: tokio::sync::Mutex<()>,
}

impl ListingSlot {
    fn last(&self) -> Option<Arc<Listing>> {
        self.last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The last listing; when there is none yet, the one `list` makes (given nothing to keep),
    /// asked once however many wait for it.
    pub(super) async fn get<F>(&self, list: impl FnOnce(Option<Arc<Listing>>) -> F) -> Arc<Listing>
    where
        F: Future<Output = Listing>,
    {
        if let Some(last) = self.last() {
            return last;
        }
        let _turn = self.asking.lock().await;
        if let Some(last) = self.last() {
            return last;
        }
        let listing = list(None).await;
        if listing.short {
            return Arc::new(listing);
        }
        self.keep(listing)
    }

    /// Lists again with `list`, given the last listing (what it keeps of a list that fails),
    /// after any listing under way.
    pub(super) async fn renew<F>(&self, list: impl FnOnce(Option<Arc<Listing>>) -> F)
    where
        F: Future<Output = Listing>,
    {
        let _turn = self.asking.lock().await;
        self.keep(list(self.last()).await);
    }

    fn keep(&self, listing: Listing) -> Arc<Listing> {
        let listing = Arc::new(listing);
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&listing));
        listing
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn many_waiting_for_the_first_listing_ask_once_and_a_renewal_sees_the_last() {
        let kept = Arc::new(ListingSlot::default());
        let asked = Arc::new(AtomicUsize::new(0));
        let waiters: Vec<_> = (0..32)
            .map(|_| {
                let (kept, asked) = (Arc::clone(&kept), Arc::clone(&asked));
                tokio::spawn(async move {
                    kept.get(|_| async {
                        asked.fetch_add(1, Ordering::SeqCst);
                        tokio::task::yield_now().await;
                        Listing {
                            prompts: vec![json!({"name": "first"})],
                            ..Listing::default()
                        }
                    })
                    .await
                })
            })
            .collect();
        for waiter in waiters {
            assert_eq!(
                waiter.await.unwrap().prompts,
                vec![json!({"name": "first"})]
            );
        }
        assert_eq!(asked.load(Ordering::SeqCst), 1);

        kept.renew(|last| async move {
            let last = last.unwrap();
            Listing {
                prompts: last.prompts.clone(),
                resources: vec![json!({"uri": "a://b"})],
                ..Listing::default()
            }
        })
        .await;
        // Kept: what would list (nothing) is not asked.
        let now = kept.get(|_| async { Listing::default() }).await;
        assert_eq!(now.prompts, vec![json!({"name": "first"})]);
        assert_eq!(now.resources, vec![json!({"uri": "a://b"})]);
    }

    #[tokio::test]
    async fn a_first_listing_that_failed_is_served_but_not_kept() {
        let kept = ListingSlot::default();
        let failed = kept
            .get(|_| async {
                Listing {
                    short: true,
                    ..Listing::default()
                }
            })
            .await;
        assert!(failed.prompts.is_empty());
        let next = kept
            .get(|_| async {
                Listing {
                    prompts: vec![json!({"name": "back"})],
                    ..Listing::default()
                }
            })
            .await;
        assert_eq!(next.prompts, vec![json!({"name": "back"})], "asked again");
    }
}

//! What each person is shown through the gateway when its policy names people: the toolkit of
//! their [`View`](super::policy::View), made from the catalog the gateway had when these views
//! were made ([`toolkit_serve::Views`]).

use toolkit_core::Toolkit;
use toolkit_core::context::Principal;
use toolkit_serve::Views;

use super::Gateway;
use super::policy::View;

/// The views of one catalog under the gateway's policy.
pub(crate) struct PolicyViews(Gateway);

impl PolicyViews {
    /// The views of `gateway`'s catalog as it is now.
    pub(crate) fn new(gateway: Gateway) -> Self {
        Self(gateway)
    }
}

impl Views for PolicyViews {
    fn key(&self, principal: &Principal) -> String {
        self.0.policy.view(principal).key()
    }

    fn toolkit(&self, key: &str) -> Toolkit {
        // A key is only ever one `key` wrote; the catalog assembled once at the start or the
        // refresh that made these views, so a view's toolkit assembles as well.
        let made = View::from_key(key)
            .ok_or_else(|| format!("no view is keyed {key:?}"))
            .and_then(|view| self.0.toolkit_for(&view));
        made.unwrap_or_else(|problem| {
            tracing::error!(
                "a person's view of the catalog cannot be assembled, none is shown: {problem}"
            );
            Toolkit::default()
        })
    }
}

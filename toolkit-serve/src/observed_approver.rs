//! An approver whose verdicts a server is told of: [`Observed`]
//! ([`McpServer::on_verdict`](super::McpServer::on_verdict)).

use std::sync::Arc;

use toolkit_core::BoxFuture;
use toolkit_core::approval::{ApprovalRequest, Approver, Verdict};

/// What is told of each verdict, with the request it answers.
#[derive(Clone)]
pub(crate) struct Verdicts(pub(crate) Arc<ProgressSent>);

/// Told of a verdict, with the request it answers.
type ProgressSent = dyn Fn(&ApprovalRequest, &Verdict) + Send + Sync;

impl std::fmt::Debug for Verdicts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Verdicts")
    }
}

/// `inner`, each of its verdicts told to `verdicts`.
pub(crate) struct Observed {
    inner: Arc<dyn Approver>,
    verdicts: Verdicts,
}

impl Observed {
    pub(crate) fn new(inner: Arc<dyn Approver>, verdicts: Verdicts) -> Self {
        Self { inner, verdicts }
    }
}

impl Approver for Observed {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, Verdict> {
        Box::pin(async move {
            let verdict = self.inner.approve(request.clone()).await;
            (self.verdicts.0)(&request, &verdict);
            verdict
        })
    }
}

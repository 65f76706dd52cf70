//! rmcp's Streamable HTTP service behind one reference count: [`SharedService`].
//!
//! axum clones a route's service for every request it routes, once for each layer the route
//! wears, and rmcp's `StreamableHttpService` (3.11) clones its whole configuration with it: the
//! lists of allowed hosts and origins, string by string. Measured with callgrind over 2,000
//! plain calls of one session: 14 clones a request, about 9,000 of the gateway's 130,000
//! instructions a call. Shared, a clone is one reference count, and the service is served
//! through its own `handle`, which is all its `Service::call` does after cloning itself.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use futures_util::future::BoxFuture;
use http_body_util::combinators::BoxBody;
use rmcp::ServerHandler;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::SessionManager;

/// A `StreamableHttpService` that clones as an [`Arc`].
pub(crate) struct SharedService<S, M>(Arc<StreamableHttpService<S, M>>);

impl<S, M> SharedService<S, M> {
    /// `service`, shared.
    pub(crate) fn new(service: StreamableHttpService<S, M>) -> Self {
        Self(Arc::new(service))
    }
}

impl<S, M> Clone for SharedService<S, M> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<S, M> tower_service::Service<Request<Body>> for SharedService<S, M>
where
    S: ServerHandler + Send + 'static,
    M: SessionManager,
{
    type Response = axum::http::Response<BoxBody<Bytes, Infallible>>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let service = Arc::clone(&self.0);
        Box::pin(async move { Ok(service.handle(request).await) })
    }
}

//! The future every source's method returns: [`BoxFuture`].

use std::future::Future;
use std::pin::Pin;

/// A boxed future that can move between threads, as [`ToolSource`](crate::ToolSource)'s methods
/// return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

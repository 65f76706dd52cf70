//! Integration tests of toolkit-openapi, in one binary (one link) with a module per concern: the
//! reader over real documents (the shared corpus, GitHub's and Stripe's descriptions, which
//! `scripts/install-test-peers` installs). No HTTP client, no server: the tests that send what
//! the reader makes are toolkit-http's.
#![allow(clippy::unwrap_used, clippy::panic)]

mod openapi_corpus;

#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
// The examples are `build.rs` files, whose `fn main` is the point.
#![allow(clippy::needless_doctest_main)]

pub mod audit;
pub mod builder;
// The command line's API (`toolkit-gen openapi`, `mcp`, `report`, …), not a `build.rs`'s: a
// build script needs `Builder` and its errors alone. Hidden from the docs, so the documented
// surface is `Builder`, `builder` (its options and errors) and `audit`.
#[doc(hidden)]
pub mod emit;
#[doc(hidden)]
pub mod inputs;
mod problem;

pub use builder::Builder;

#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
// The examples are `build.rs` files, whose `fn main` is the point.
#![allow(clippy::needless_doctest_main)]

#[cfg(feature = "audit")]
pub mod audit;
pub mod builder;
// No API: the emitter and the readers, behind `Builder` and `builder` (which the command line
// goes through as well). Reachable, hidden, only with feature `internals`, which this crate's
// own tests, benches and examples (a dev-dependency on itself) and the fuzz targets turn on; the
// documented surface is `Builder`, `builder` (its options, errors and what it returns) and
// `audit`.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod emit;
#[cfg(not(feature = "internals"))]
mod emit;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod inputs;
#[cfg(not(feature = "internals"))]
mod inputs;
mod problem;

pub use builder::Builder;

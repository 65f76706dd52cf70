#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
// The examples are `build.rs` files, whose `fn main` is the point.
#![allow(clippy::needless_doctest_main)]

pub mod audit;
pub mod builder;
pub mod emit;
pub mod inputs;
mod problem;

pub use builder::Builder;

//! The integration tests and benchmarks of `toolkit-runtime` live in `tests/` and `benches/`;
//! this library is empty.

//! The real corpus.

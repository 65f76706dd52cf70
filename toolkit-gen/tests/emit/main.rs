//! emit tests

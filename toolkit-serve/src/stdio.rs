//! Serving over stdio: rmcp over the stdin guard ([`transport`]), an upstream's result written as
//! it was ([`written_result`]).

pub(crate) mod transport;
pub(crate) mod written_result;

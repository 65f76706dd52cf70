//! End-to-end tests of toolkit live in `tests/e2e/`: a host's whole flow (discover, store the
//! catalog, read it back, assemble under policy, call), over real documents and real peers.

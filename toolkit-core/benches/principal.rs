//! What binding a principal adds to a served call (issue: at most 20 µs): the work the gateway
//! and the server do per call for it, on tables as full as a busy gateway's. Per call: the
//! principal cloned into the request and the call's context (`CallContext::with_extension`,
//! on a context that already carries the server's extensions), read back by a source
//! (`CallContext::principal`), and the server's clients told who used it (`Clients::seen`,
//! among 1,000 people) — the session owner's check is one lookup in a map of the same shape.
//!
//! `cargo bench -p toolkit-core --bench principal`

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use toolkit_core::CallContext;
use toolkit_core::context::{Clients, Principal};

/// A marker standing for the extensions a served call's context already carries.
struct Written;
struct Relay;

fn principal_per_call(c: &mut Criterion) {
    let clients = Arc::new(Clients::default());
    let people: Vec<Principal> = (0..1_000)
        .map(|n| Principal::jwt("https://issuer.example", &format!("person-{n}")))
        .collect();
    for person in &people {
        clients.seen(person);
    }
    let alice = people[500].clone();
    let served = CallContext::new()
        .with_extension(Written)
        .with_extension(Relay);
    let mut group = c.benchmark_group("principal_per_call");
    group.bench_function("bind_and_read", |b| {
        b.iter(|| {
            let principal = black_box(&alice).clone();
            clients.seen(&principal);
            let context = served.clone().with_extension(principal);
            black_box(context.principal().map(Principal::id).map(str::len))
        });
    });
    group.bench_function("clients_only_among_1000", |b| {
        b.iter(|| black_box(clients.only().is_some()));
    });
    group.finish();
}

criterion_group!(benches, principal_per_call);
criterion_main!(benches);

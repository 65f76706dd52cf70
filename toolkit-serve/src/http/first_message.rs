//! The head of a POST's event stream, held until the stream's first message: [`held`].
//!
//! rmcp opens the SSE answer of a POST at once, with a priming event (an empty `data:` with an
//! event id, for resumability), and writes the call's message when the call is answered. Passed on
//! as it comes, that is two writes to the client's socket per call, and the client is woken twice:
//! once for the head and the priming event, and again for the answer. Held here until the first
//! event that carries a message (or [`HOLD`], or the stream's end), the head, the priming event,
//! a fast call's answer and the chunked body's end go out in one write, as one packet. A slow
//! call's head still goes out after [`HOLD`], so the client learns the event id to resume with.

use std::time::Duration;

use axum::body::{Body, Bytes};
use futures_util::{Stream, StreamExt as _, stream};

/// How long the head of a POST's event stream waits for the stream's first message.
pub(crate) const HOLD: Duration = Duration::from_millis(5);

/// `events` as a body whose first chunks are those ready by its first message, [`HOLD`] or its
/// end, whichever comes first (this future completes then), and the rest as they come.
pub(crate) async fn held<S>(mut events: S) -> Body
where
    S: Stream<Item = Result<Bytes, axum::Error>> + Send + Unpin + 'static,
{
    let mut ready = Vec::new();
    let deadline = tokio::time::sleep(HOLD);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            biased;
            next = events.next() => match next {
                Some(Ok(chunk)) => {
                    let message = carries_message(&chunk);
                    ready.push(Ok(chunk));
                    if message {
                        break;
                    }
                }
                Some(Err(error)) => {
                    ready.push(Err(error));
                    break;
                }
                None => return Body::from_stream(stream::iter(ready)),
            },
            () = &mut deadline => break,
        }
    }
    Body::from_stream(stream::iter(ready).chain(events))
}

/// Whether `events` (whole SSE events) has a `data:` line with something on it: a message, not a
/// priming event or a comment.
fn carries_message(events: &[u8]) -> bool {
    events
        .split(|byte| *byte == b'\n' || *byte == b'\r')
        .any(|line| {
            line.strip_prefix(b"data:")
                .is_some_and(|data| !data.trim_ascii().is_empty())
        })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use tokio::sync::mpsc;

    const PRIMING: &[u8] = b"data: \nid: 0/0\nretry: 3000\n\n";
    const MESSAGE: &[u8] = b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\nid: 1/0\n\n";

    type Chunk = Result<Bytes, axum::Error>;

    fn chunks() -> (
        mpsc::UnboundedSender<Chunk>,
        impl Stream<Item = Chunk> + Send + Unpin + 'static,
    ) {
        let (sender, mut receiver) = mpsc::unbounded_channel();
        (sender, stream::poll_fn(move |cx| receiver.poll_recv(cx)))
    }

    async fn whole(body: Body) -> Bytes {
        axum::body::to_bytes(body, usize::MAX).await.unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn the_head_waits_for_the_first_message_and_the_chunks_keep_their_order() {
        let (sender, events) = chunks();
        sender.send(Ok(Bytes::from_static(PRIMING))).unwrap();
        let body = tokio::spawn(held(events));
        tokio::time::sleep(HOLD / 2).await;
        assert!(!body.is_finished(), "the head went out before any message");
        sender.send(Ok(Bytes::from_static(MESSAGE))).unwrap();
        drop(sender);
        let body = tokio::time::timeout(HOLD / 4, body)
            .await
            .expect("the head waited past its message")
            .unwrap();
        let bytes = whole(body).await;
        assert_eq!(bytes, [PRIMING, MESSAGE].concat());
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_call_s_head_goes_out_after_the_hold_and_its_message_follows() {
        let (sender, events) = chunks();
        sender.send(Ok(Bytes::from_static(PRIMING))).unwrap();
        let started = tokio::time::Instant::now();
        let mut body = held(events).await.into_data_stream();
        assert_eq!(started.elapsed(), HOLD);
        assert_eq!(body.next().await.unwrap().unwrap(), PRIMING);
        sender.send(Ok(Bytes::from_static(MESSAGE))).unwrap();
        drop(sender);
        assert_eq!(body.next().await.unwrap().unwrap(), MESSAGE);
        assert!(body.next().await.is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_that_ends_without_a_message_is_passed_whole_at_once() {
        let (sender, events) = chunks();
        sender.send(Ok(Bytes::from_static(PRIMING))).unwrap();
        drop(sender);
        let started = tokio::time::Instant::now();
        let body = held(events).await;
        assert!(started.elapsed() < HOLD);
        assert_eq!(whole(body).await, PRIMING);
    }

    #[test]
    fn a_message_is_a_data_line_with_something_on_it() {
        assert!(!carries_message(PRIMING));
        assert!(!carries_message(b": keep-alive\n\n"));
        assert!(carries_message(MESSAGE));
        assert!(carries_message(b"id: 3\r\ndata:{}\r\n\r\n"));
    }
}

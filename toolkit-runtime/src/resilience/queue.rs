//! The concurrency cap with a bounded queue: [`Queue`]. A call past the cap waits if fewer than
//! the queue's length wait already, and for at most its longest wait; else it is refused at once.
//! Written over tokio's `Semaphore` because tower's `ConcurrencyLimit` waits without bound (it
//! has no queue length and no longest wait).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::settings::Concurrency;

/// Why a call got no place.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Full {
    /// As many calls wait as the queue takes.
    Queue(usize),
    /// The call waited its longest wait.
    Waited(Duration),
}

/// The cap and its queue.
#[derive(Debug)]
pub(crate) struct Queue {
    running: Arc<Semaphore>,
    waiting: AtomicUsize,
    queue: usize,
    max_wait: Duration,
}

/// Takes a waiting call off the count however its wait ends (a dropped call included).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Queue {
    pub(crate) fn new(settings: &Concurrency) -> Self {
        Self {
            running: Arc::new(Semaphore::new(settings.limit.min(Semaphore::MAX_PERMITS))),
            waiting: AtomicUsize::new(0),
            queue: settings.queue,
            max_wait: settings.max_wait,
        }
    }

    /// A place to run, held until the permit is dropped.
    pub(crate) async fn place(&self) -> Result<OwnedSemaphorePermit, Full> {
        if let Ok(permit) = Arc::clone(&self.running).try_acquire_owned() {
            return Ok(permit);
        }
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.queue {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(Full::Queue(self.queue));
        }
        let _waiting = Waiting(&self.waiting);
        match tokio::time::timeout(self.max_wait, Arc::clone(&self.running).acquire_owned()).await {
            Ok(Ok(permit)) => Ok(permit),
            // The semaphore is never closed; a closed one is as good as a full queue.
            Ok(Err(_)) => Err(Full::Queue(self.queue)),
            Err(_) => Err(Full::Waited(self.max_wait)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_queue_and_the_wait_are_bounded() {
        let queue = Arc::new(Queue::new(
            &Concurrency::new(1)
                .queue(1)
                .max_wait(Duration::from_millis(100)),
        ));
        let running = queue.place().await;
        assert!(running.is_ok());
        let waiter = tokio::spawn({
            let queue = Arc::clone(&queue);
            async move { queue.place().await.map(drop) }
        });
        tokio::task::yield_now().await;
        assert_eq!(queue.place().await.map(drop), Err(Full::Queue(1)));
        assert_eq!(
            waiter.await.ok(),
            Some(Err(Full::Waited(Duration::from_millis(100))))
        );
        drop(running);
        assert!(queue.place().await.is_ok());
        assert_eq!(queue.waiting.load(Ordering::Acquire), 0);
    }
}

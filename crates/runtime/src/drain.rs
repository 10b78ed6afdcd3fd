//! Serving with a bounded drain: once the shutdown signal comes, the server
//! stops taking work and gets `drain` to finish what it holds (a gRPC
//! server waits for every open call, and a Watch stream held by a peer
//! never ends on its own); past that it is dropped, closing what is left.

use std::future::Future;
use std::pin::{pin, Pin};
use std::time::Duration;

use tokio::sync::oneshot;

/// How a server stopped.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum Drained {
    /// It finished on its own, before or within the drain.
    Cleanly,
    /// The drain ran out and it was dropped with work still open.
    TimedOut,
}

/// Runs the server `serve` builds from the signal it is handed (a future
/// that completes when `shutdown` does), and stops waiting for it `drain`
/// after that signal.
pub async fn serve_with_drain<S, E>(
    shutdown: impl Future<Output = ()> + Send + 'static,
    drain: Duration,
    serve: impl FnOnce(Pin<Box<dyn Future<Output = ()> + Send>>) -> S,
) -> (Result<(), E>, Drained)
where
    S: Future<Output = Result<(), E>>,
{
    let (signalled_tx, signalled) = oneshot::channel();
    let signal = Box::pin(async move {
        shutdown.await;
        let _ = signalled_tx.send(());
    });
    let mut server = pin!(serve(signal));
    tokio::select! {
        served = &mut server => (served, Drained::Cleanly),
        Ok(()) = signalled => match tokio::time::timeout(drain, &mut server).await {
            Ok(served) => (served, Drained::Cleanly),
            Err(_) => {
                tracing::warn!(drain_ms = drain.as_millis() as u64, "drain time ran out: closing what is still open");
                (Ok(()), Drained::TimedOut)
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that, once signalled, takes `linger` to finish.
    async fn server(signal: Pin<Box<dyn Future<Output = ()> + Send>>, linger: Duration) -> Result<(), ()> {
        signal.await;
        tokio::time::sleep(linger).await;
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_that_finishes_within_the_drain_stops_cleanly() {
        let (stop, stopped) = oneshot::channel::<()>();
        let run = tokio::spawn(serve_with_drain(
            async {
                let _ = stopped.await;
            },
            Duration::from_secs(5),
            |signal| server(signal, Duration::from_secs(1)),
        ));
        stop.send(()).unwrap();
        assert_eq!(run.await.unwrap(), (Ok(()), Drained::Cleanly));
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_that_outlasts_the_drain_is_dropped_at_its_end() {
        let (stop, stopped) = oneshot::channel::<()>();
        let started = tokio::time::Instant::now();
        let run = tokio::spawn(serve_with_drain(
            async {
                let _ = stopped.await;
            },
            Duration::from_secs(2),
            |signal| server(signal, Duration::from_secs(3_600)),
        ));
        stop.send(()).unwrap();
        assert_eq!(run.await.unwrap(), (Ok(()), Drained::TimedOut));
        assert_eq!(started.elapsed().as_secs(), 2);
    }
}

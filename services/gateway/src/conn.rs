//! A handle on one client connection that other parts of the gateway hold:
//! the queue of frames to send it, and a way to close it. Sending never
//! waits: a client too slow to read its queue is closed rather than
//! allowed to hold up a game's other watchers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::extract::ws::Utf8Bytes;
use tokio::sync::{mpsc, watch};

/// Frames queued per connection before it counts as too slow.
pub const OUTBOX: usize = 1024;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Why the gateway closes a connection: a WebSocket close code and reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Close {
    pub code: u16,
    pub reason: &'static str,
}

impl Close {
    pub const TOO_SLOW: Close = Close { code: 1008, reason: "too slow to read its messages" };
    pub const FLOODING: Close = Close { code: 1008, reason: "too many messages" };
    pub const IDLE: Close = Close { code: 1001, reason: "idle" };
    pub const RESTARTING: Close = Close { code: 1012, reason: "server restarting: reconnect" };
    pub const TOO_BIG: Close = Close { code: 1009, reason: "frame too large" };
}

#[derive(Debug)]
pub struct Conn {
    pub id: u64,
    tx: mpsc::Sender<Utf8Bytes>,
    close: watch::Sender<Option<Close>>,
    /// The player's measured one-way lag, from WebSocket ping round trips.
    pub lag_ms: AtomicU64,
    /// The client's address as the per-address limits count it.
    pub ip: Option<std::net::IpAddr>,
}

type Opened = (Arc<Conn>, mpsc::Receiver<Utf8Bytes>, watch::Receiver<Option<Close>>);

impl Conn {
    /// A connection of unknown address (tests).
    #[cfg(test)]
    pub fn new() -> Opened {
        Conn::opened(None)
    }

    /// A connection from `ip`.
    pub fn from_ip(ip: std::net::IpAddr) -> Opened {
        Conn::opened(Some(ip))
    }

    fn opened(ip: Option<std::net::IpAddr>) -> Opened {
        let (tx, rx) = mpsc::channel(OUTBOX);
        let (close, closed) = watch::channel(None);
        let conn = Conn { id: NEXT_ID.fetch_add(1, Ordering::Relaxed), tx, close, lag_ms: AtomicU64::new(0), ip };
        (Arc::new(conn), rx, closed)
    }

    /// Queues a frame; a connection whose queue is full is closed.
    pub fn send(&self, frame: Utf8Bytes) -> bool {
        match self.tx.try_send(frame) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.close(Close::TOO_SLOW);
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    pub fn close(&self, reason: Close) {
        self.close.send_if_modified(|current| {
            let first = current.is_none();
            if first {
                *current = Some(reason);
            }
            first
        });
    }
}

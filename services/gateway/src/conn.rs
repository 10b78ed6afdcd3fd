//! A handle on one client connection that other parts of the gateway hold:
//! the queue of frames to send it, and a way to close it. Sending never
//! waits: a client too slow to read its queue is closed rather than
//! allowed to hold up a game's other watchers.
//!
//! The queue is a plain deque behind a lock, allocated as frames arrive
//! and given back once a burst has been written, not a channel: a tokio
//! channel allocates its first block of 32 frames when it is made, about
//! 1.5 KiB with its bookkeeping, for every socket whether or not anything
//! is ever sent to it (docs/performance.md).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::ws::Utf8Bytes;
use tokio::sync::{watch, Notify};

/// Frames queued per connection before it counts as too slow.
pub const OUTBOX: usize = 1024;

/// Bytes queued per connection before it counts as too slow, whatever the
/// number of frames: a lobby answer can be 100 KB, and 1,024 of them held
/// for a client that does not read would be 100 MB. A frame larger than
/// this on its own still goes to a connection with nothing queued.
pub const OUTBOX_BYTES: usize = 1 << 20;

/// The queue's room kept once it is empty again; past it, the memory of a
/// burst goes back to the allocator.
const KEPT_ROOM: usize = 8;

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

#[derive(Debug, Default)]
struct Queue {
    frames: VecDeque<Utf8Bytes>,
    /// The bytes of `frames`.
    bytes: usize,
    /// Whether the connection's [`Outbox`] still reads.
    gone: bool,
}

#[derive(Debug)]
pub struct Conn {
    pub id: u64,
    queue: Mutex<Queue>,
    /// Told when a frame is queued; the outbox waits on it.
    queued: Notify,
    close: watch::Sender<Option<Close>>,
    /// The player's measured one-way lag, from WebSocket ping round trips.
    pub lag_ms: AtomicU64,
    /// The client's address as the per-address limits count it.
    pub ip: Option<std::net::IpAddr>,
    /// Games whose feeds this connection is subscribed to.
    pub following: AtomicUsize,
}

/// The reading end of a connection's queue: the frames to write to the
/// client, in the order sent. Once it is dropped, sending to the
/// connection does nothing.
#[derive(Debug)]
pub struct Outbox {
    conn: Arc<Conn>,
}

/// Nothing is queued now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Empty;

type Opened = (Arc<Conn>, Outbox, watch::Receiver<Option<Close>>);

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
        let (close, closed) = watch::channel(None);
        let conn = Arc::new(Conn {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            queue: Mutex::default(),
            queued: Notify::new(),
            close,
            lag_ms: AtomicU64::new(0),
            ip,
            following: AtomicUsize::new(0),
        });
        let outbox = Outbox { conn: conn.clone() };
        (conn, outbox, closed)
    }

    /// Queues a frame; a connection whose queue is full is closed.
    pub fn send(&self, frame: Utf8Bytes) -> bool {
        let mut queue = self.queue.lock().expect("queue lock");
        if queue.gone {
            return false;
        }
        let too_many = queue.frames.len() >= OUTBOX;
        let too_big = !queue.frames.is_empty() && queue.bytes + frame.len() > OUTBOX_BYTES;
        if too_many || too_big {
            drop(queue);
            self.close(Close::TOO_SLOW);
            return false;
        }
        queue.bytes += frame.len();
        queue.frames.push_back(frame);
        drop(queue);
        self.queued.notify_one();
        true
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

    /// Why the connection was closed, once it was.
    pub fn close_reason(&self) -> Option<Close> {
        self.close.borrow().clone()
    }
}

impl Outbox {
    /// The next frame, waiting until one is queued. Cancel-safe: a frame
    /// is taken only when it is returned.
    pub async fn recv(&mut self) -> Option<Utf8Bytes> {
        loop {
            if let Ok(frame) = self.try_recv() {
                return Some(frame);
            }
            self.conn.queued.notified().await;
        }
    }

    /// The next frame if one is queued now.
    pub fn try_recv(&mut self) -> Result<Utf8Bytes, Empty> {
        let mut queue = self.conn.queue.lock().expect("queue lock");
        let frame = queue.frames.pop_front().ok_or(Empty)?;
        queue.bytes -= frame.len();
        if queue.frames.is_empty() && queue.frames.capacity() > KEPT_ROOM {
            queue.frames = VecDeque::new();
        }
        Ok(frame)
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        let mut queue = self.conn.queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        queue.gone = true;
        queue.frames = VecDeque::new();
        queue.bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn frame(text: &str) -> Utf8Bytes {
        Utf8Bytes::from(text.to_owned())
    }

    #[tokio::test]
    async fn frames_come_out_in_order_and_a_waiting_outbox_is_woken() {
        let (conn, mut outbox, _closed) = Conn::new();
        assert_eq!(outbox.try_recv(), Err(Empty));
        assert!(conn.send(frame("a")));
        assert!(conn.send(frame("b")));
        assert_eq!(outbox.recv().await.as_deref(), Some("a"));
        assert_eq!(outbox.try_recv().as_deref(), Ok("b"));
        let waiting = tokio::spawn(async move { outbox.recv().await.map(|f| f.as_str().to_owned()) });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(conn.send(frame("c")));
        let got = tokio::time::timeout(Duration::from_secs(5), waiting).await.expect("woken").unwrap();
        assert_eq!(got.as_deref(), Some("c"));
    }

    #[tokio::test]
    async fn a_full_queue_closes_the_connection_and_a_gone_one_takes_nothing() {
        let (conn, mut outbox, closed) = Conn::new();
        for i in 0..OUTBOX {
            assert!(conn.send(frame(&i.to_string())), "frame {i}");
        }
        assert!(!conn.send(frame("one too many")));
        assert_eq!(*closed.borrow(), Some(Close::TOO_SLOW));
        for i in 0..OUTBOX {
            assert_eq!(outbox.try_recv().as_deref(), Ok(i.to_string().as_str()));
        }
        assert_eq!(outbox.try_recv(), Err(Empty));
        assert!(conn.queue.lock().unwrap().frames.capacity() <= KEPT_ROOM, "a burst's room is given back");
        drop(outbox);
        assert!(!conn.send(frame("after")), "nobody reads any more");
        assert!(conn.queue.lock().unwrap().frames.is_empty());
    }

    #[tokio::test]
    async fn a_queue_of_large_frames_closes_the_connection_by_its_bytes() {
        let (conn, mut outbox, closed) = Conn::new();
        let lobby = "x".repeat(100_000);
        let fits = OUTBOX_BYTES / lobby.len();
        for i in 0..fits {
            assert!(conn.send(frame(&lobby)), "frame {i}");
        }
        assert_eq!(*closed.borrow(), None);
        assert!(!conn.send(frame(&lobby)), "past the bytes allowed, long before the frames allowed");
        assert_eq!(*closed.borrow(), Some(Close::TOO_SLOW));
        while outbox.try_recv().is_ok() {}
        assert_eq!(conn.queue.lock().unwrap().bytes, 0);

        let (conn, _outbox, closed) = Conn::new();
        assert!(conn.send(frame(&"y".repeat(OUTBOX_BYTES + 1))), "a large frame alone still goes");
        assert_eq!(*closed.borrow(), None);
    }
}

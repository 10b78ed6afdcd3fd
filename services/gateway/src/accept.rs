//! The gateway's own accept loop, with the limits that must hold before
//! any HTTP is read:
//!
//! - every TCP connection is counted against its peer's address when it is
//!   accepted (IPv6 by its network prefix, as every per-address limit), and
//!   one past the cap is closed at once, so connections that never finish
//!   a request line take no more than their address's share of the
//!   process's file descriptors;
//! - each connection speaks HTTP/1.1 with a timer: a request's headers must
//!   arrive within the header-read timeout of the connection opening or of
//!   the answer before (hyper arms it for each request head, so an idle
//!   keep-alive connection is closed too).
//!
//! The count is released when the socket is dropped, which for a WebSocket
//! is when its session ends: the upgraded connection owns the socket.
//! Trusted proxies are not counted here: every client behind one shares
//! its address, and the per-client limits apply after routing instead.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;
use tracing::{debug, warn};

use crate::address::AddressPolicy;
use crate::metrics::Metrics;

/// Open TCP connections per peer address.
#[derive(Debug)]
pub struct Sockets {
    cap: u32,
    addresses: AddressPolicy,
    open: Mutex<HashMap<IpAddr, u32>>,
}

/// What [`Sockets::open`] makes of a new connection.
#[derive(Debug)]
pub enum Admission {
    /// Counted against its address until the slot is dropped.
    Counted(Slot),
    /// From a trusted proxy: not counted here.
    Uncounted,
    /// Its address already holds the cap.
    Refused,
}

/// One counted connection; dropping it gives its address's slot back.
#[derive(Debug)]
pub struct Slot {
    sockets: Arc<Sockets>,
    key: IpAddr,
}

impl Sockets {
    pub fn new(cap: u32, addresses: AddressPolicy) -> Arc<Sockets> {
        Arc::new(Sockets { cap, addresses, open: Mutex::default() })
    }

    /// Counts a connection from `peer`, unless it comes from a trusted
    /// proxy or its address already holds the cap.
    pub fn open(self: &Arc<Sockets>, peer: IpAddr) -> Admission {
        if self.addresses.is_trusted_proxy(peer) {
            return Admission::Uncounted;
        }
        let key = self.addresses.limit_key(peer);
        let mut open = self.open.lock().expect("sockets lock");
        let count = open.entry(key).or_insert(0);
        if *count >= self.cap {
            return Admission::Refused;
        }
        *count += 1;
        Admission::Counted(Slot { sockets: self.clone(), key })
    }

    /// Connections counted for `peer`'s address now.
    #[cfg(test)]
    pub fn count(&self, peer: IpAddr) -> u32 {
        let key = self.addresses.limit_key(peer);
        self.open.lock().expect("sockets lock").get(&key).copied().unwrap_or(0)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.sockets.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(count) = open.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.key);
            }
        }
    }
}

/// A TCP connection that holds its address's slot for as long as it lives.
#[derive(Debug)]
pub struct Counted {
    stream: TcpStream,
    _slot: Option<Slot>,
}

impl AsyncRead for Counted {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// How the accept loop serves each connection.
#[derive(Clone, Debug)]
pub struct Serving {
    pub header_read_timeout: Duration,
    /// Each socket's kernel send buffer; `None`: the system's.
    pub send_buffer: Option<usize>,
    /// How long open HTTP connections get to finish once draining starts.
    pub drain: Duration,
}

/// Accepts on `listener` and serves `app` on each connection until
/// `draining` turns true; then stops accepting, asks every HTTP connection
/// to close after its request in flight, and returns once they have (or
/// the drain time has passed). Upgraded WebSockets are not waited for
/// here: their sessions drain themselves.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    sockets: Arc<Sockets>,
    metrics: Arc<Metrics>,
    serving: Serving,
    mut draining: watch::Receiver<bool>,
) {
    let connections = TaskTracker::new();
    let (stop_tx, stop) = watch::channel(false);
    let drain_started = async move {
        let _ = draining.wait_for(|d| *d).await;
    };
    tokio::pin!(drain_started);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors, or a connection reset before
                    // it was taken: wait a moment rather than spin.
                    warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut drain_started => break,
        };
        let slot = match sockets.open(peer.ip()) {
            Admission::Counted(slot) => Some(slot),
            Admission::Uncounted => None,
            Admission::Refused => {
                metrics.closed.with_label_values(&["too many sockets from one address"]).inc();
                debug!(peer = %peer.ip(), "refused at accept: the address holds its share of connections");
                drop(stream);
                continue;
            }
        };
        // Small frames both ways: without NODELAY a frame that follows
        // another can wait for the client's delayed ACK (up to 40 ms).
        let _ = stream.set_nodelay(true);
        if let Some(bytes) = serving.send_buffer {
            let _ = socket2::SockRef::from(&stream).set_send_buffer_size(bytes);
        }
        let io = TokioIo::new(Counted { stream, _slot: slot });
        connections.spawn(serve_connection(io, peer, app.clone(), serving.header_read_timeout, stop.clone()));
    }
    drop(listener);
    let _ = stop_tx.send(true);
    connections.close();
    let _ = tokio::time::timeout(serving.drain, connections.wait()).await;
}

async fn serve_connection(
    io: TokioIo<Counted>,
    peer: SocketAddr,
    app: Router,
    header_read_timeout: Duration,
    mut stop: watch::Receiver<bool>,
) {
    let service = app.map_request(move |mut request: axum::http::Request<hyper::body::Incoming>| {
        request.extensions_mut().insert(ConnectInfo(peer));
        request
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(header_read_timeout).keep_alive(true);
    let connection = http.serve_connection(io, TowerToHyperService::new(service)).with_upgrades();
    tokio::pin!(connection);
    tokio::select! {
        served = connection.as_mut() => {
            if let Err(error) = served {
                debug!(%error, peer = %peer.ip(), "connection ended");
            }
            return;
        }
        () = async {
            let _ = stop.wait_for(|s| *s).await;
        } => {}
    }
    connection.as_mut().graceful_shutdown();
    if let Err(error) = connection.await {
        debug!(%error, peer = %peer.ip(), "connection ended while draining");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_address_holds_its_cap_of_sockets_and_a_trusted_proxy_none() {
        let addresses = AddressPolicy::new(vec!["10.0.0.1/32".parse().unwrap()], 64);
        let sockets = Sockets::new(2, addresses);
        let one: IpAddr = "192.0.2.1".parse().unwrap();
        let counted = |admission| matches!(admission, Admission::Counted(_));
        let first = sockets.open(one);
        let second = sockets.open(one);
        assert!(matches!((&first, &second), (Admission::Counted(_), Admission::Counted(_))));
        assert!(matches!(sockets.open(one), Admission::Refused), "a third from the same address");
        assert!(counted(sockets.open("192.0.2.2".parse().unwrap())), "another address has its own share");
        let _a = sockets.open("2001:db8:1:2::1".parse().unwrap());
        let _b = sockets.open("2001:db8:1:2::ffff".parse().unwrap());
        assert!(
            matches!(sockets.open("2001:db8:1:2::3".parse().unwrap()), Admission::Refused),
            "one /64 is one address"
        );
        for _ in 0..10 {
            let proxy = sockets.open("10.0.0.1".parse().unwrap());
            assert!(matches!(proxy, Admission::Uncounted), "a trusted proxy is not counted");
        }
        drop(first);
        assert_eq!(sockets.count(one), 1);
        assert!(counted(sockets.open(one)), "a closed socket gives its slot back");
        drop(second);
    }
}

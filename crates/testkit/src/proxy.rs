//! A loopback TCP proxy that loses answers: armed with a test of the
//! request bytes, it forwards the next request that passes it, then cuts
//! the connection as the server's reply arrives, both ways, without
//! passing the reply on. It can also swallow everything the server sends
//! while keeping the connections open ([`AnswerDropper::blackhole`]). The server has done what was asked; the client
//! sees a broken connection. Made for Redis (each command is written in one
//! piece by the clients Fogblast uses), usable in front of any server whose
//! requests fit in one read.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

type Matcher = Arc<dyn Fn(&[u8]) -> bool + Send + Sync>;

#[derive(Default)]
struct Shared {
    armed: Mutex<Option<Matcher>>,
    dropped: AtomicUsize,
    /// While set, everything the server sends is thrown away and the
    /// connections stay open: a link that silently stopped delivering.
    blackhole: std::sync::atomic::AtomicBool,
}

/// The proxy; it stops when dropped.
pub struct AnswerDropper {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

impl std::fmt::Debug for AnswerDropper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnswerDropper").field("addr", &self.addr).finish()
    }
}

impl AnswerDropper {
    /// Listens on a loopback port and forwards to `upstream` (`host:port`).
    pub async fn start(upstream: &str) -> AnswerDropper {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        let addr = listener.local_addr().expect("a bound address");
        let shared = Arc::new(Shared::default());
        let upstream = upstream.to_owned();
        let for_accept = shared.clone();
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(&upstream).await else { continue };
                tokio::spawn(relay(client, server, for_accept.clone()));
            }
        });
        AnswerDropper { addr, shared, accept }
    }

    /// `redis://` at the proxy, for a Redis behind it.
    pub fn redis_url(&self) -> String {
        format!("redis://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Loses the answer to the next request whose bytes `matches` accepts.
    pub fn drop_answer_to(&self, matches: impl Fn(&[u8]) -> bool + Send + Sync + 'static) {
        *self.shared.armed.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(matches));
    }

    /// Whether an armed loss is still waiting for its request.
    pub fn armed(&self) -> bool {
        self.shared.armed.lock().unwrap_or_else(PoisonError::into_inner).is_some()
    }

    /// From now on (`true`) or no longer, throws away whatever the server
    /// sends, keeping every connection open.
    pub fn blackhole(&self, on: bool) {
        self.shared.blackhole.store(on, Ordering::SeqCst);
    }

    /// How many answers were lost so far.
    pub fn dropped(&self) -> usize {
        self.shared.dropped.load(Ordering::SeqCst)
    }
}

impl Drop for AnswerDropper {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// Whether `haystack` holds `needle`: for matchers on request bytes.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle)
}

async fn relay(client: TcpStream, server: TcpStream, shared: Arc<Shared>) {
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let doomed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let doom = doomed.clone();
    let blackhole = shared.clone();
    let upward = async move {
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let n = match client_read.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            let chunk = &buffer[..n];
            {
                let mut armed = shared.armed.lock().unwrap_or_else(PoisonError::into_inner);
                if armed.as_ref().is_some_and(|matches| matches(chunk)) {
                    *armed = None;
                    doom.store(true, Ordering::SeqCst);
                    shared.dropped.fetch_add(1, Ordering::SeqCst);
                }
            }
            if server_write.write_all(chunk).await.is_err() {
                return;
            }
        }
    };
    let downward = async move {
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let n = match server_read.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            if doomed.load(Ordering::SeqCst) {
                // The reply is lost with the connection.
                return;
            }
            if blackhole.blackhole.load(Ordering::SeqCst) {
                continue;
            }
            if client_write.write_all(&buffer[..n]).await.is_err() {
                return;
            }
        }
    };
    // Either side ending ends both: the halves are dropped, the sockets close.
    tokio::select! {
        () = upward => {}
        () = downward => {}
    }
}

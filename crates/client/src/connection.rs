//! One WebSocket to a gateway: typed frames out, raw text frames in.
//!
//! Receiving hands back the frame's text as the socket delivered it, with
//! no copy and no parse, because the callers differ in what they need: the
//! load test reads a few fields of each frame with one borrowed parse and
//! must not pay for more on its latency path; tests keep the raw text to
//! check fields the types do not know. [`Connection::recv`] only awaits the
//! socket's next item, so it is cancel-safe: a frame is never lost when a
//! `select!` picks another branch.

use std::time::Duration;

use fogblast_protocol::{ClientFrame, Hello, Id, Request, ServerFrame};
use futures::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Message, Utf8Bytes};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How a connection ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Closed {
    /// A close frame, with its code and reason (1005 when it had none).
    Frame { code: u16, reason: String },
    /// The socket ended without a close frame (reset, end of stream).
    Dropped(String),
}

impl Closed {
    /// The close code, when the server sent a close frame.
    pub fn code(&self) -> Option<u16> {
        match self {
            Closed::Frame { code, .. } => Some(*code),
            Closed::Dropped(_) => None,
        }
    }
}

impl std::fmt::Display for Closed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Closed::Frame { code, reason } => write!(f, "closed by the server ({code} {reason:?})"),
            Closed::Dropped(why) => write!(f, "connection dropped ({why})"),
        }
    }
}

/// What can go wrong talking to a gateway.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The TCP connection or the WebSocket handshake failed.
    #[error("connecting to {url}: {source}")]
    Connect {
        url: String,
        #[source]
        source: tungstenite::Error,
    },
    /// A frame could not be written: the connection is gone.
    #[error("sending: {0}")]
    Send(#[source] tungstenite::Error),
    #[error("{0}")]
    Closed(Closed),
    /// The server sent a binary frame; the protocol has none.
    #[error("the server sent a binary frame of {0} bytes")]
    Binary(usize),
    /// A frame that is not a server frame of the protocol.
    #[error("unreadable frame ({source}): {text}")]
    Unreadable {
        text: String,
        #[source]
        source: serde_json::Error,
    },
    /// The server answered with an `error` frame.
    #[error("refused: {code}: {message}")]
    Refused { code: String, message: String },
    /// Nothing that was waited for came in time.
    #[error("no {what} within {limit:?}")]
    Timeout { what: String, limit: Duration },
}

/// What `welcome` says: who the connection is playing as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Welcome {
    pub player: String,
    /// The player's identity: send it in the next `hello` to be them again.
    pub token: String,
}

/// Settings of the socket itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConnectionOptions {
    /// The read buffer in bytes; the library's default is 128 KiB, which it
    /// zeroes on every read, so thousands of bots want it small.
    pub read_buffer: Option<usize>,
}

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// One WebSocket to a gateway's `/ws`.
pub struct Connection {
    ws: Ws,
    url: String,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").field("url", &self.url).finish_non_exhaustive()
    }
}

impl Connection {
    /// Connects to `url` (`ws://host:port/ws`).
    pub async fn connect(url: &str) -> Result<Connection, Error> {
        Connection::connect_with(url, ConnectionOptions::default()).await
    }

    pub async fn connect_with(url: &str, options: ConnectionOptions) -> Result<Connection, Error> {
        Connection::connect_with_headers(url, options, &[]).await
    }

    /// Connects with extra request headers, as a proxy in front of the
    /// gateway would add (`X-Forwarded-For`).
    pub async fn connect_with_headers(
        url: &str,
        options: ConnectionOptions,
        headers: &[(&str, &str)],
    ) -> Result<Connection, Error> {
        use tungstenite::client::IntoClientRequest;
        use tungstenite::http::{HeaderName, HeaderValue};
        let mut config = WebSocketConfig::default();
        if let Some(size) = options.read_buffer {
            config = config.read_buffer_size(size);
        }
        let connect = |source| Error::Connect { url: url.to_owned(), source };
        let mut request = url.into_client_request().map_err(connect)?;
        for (name, value) in headers {
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|e| connect(tungstenite::Error::from(e)))?;
            let value = HeaderValue::from_str(value).map_err(|e| connect(tungstenite::Error::from(e)))?;
            request.headers_mut().append(name, value);
        }
        let (ws, _) =
            tokio_tungstenite::connect_async_with_config(request, Some(config), true).await.map_err(connect)?;
        Ok(Connection { ws, url: url.to_owned() })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Sends a frame without an `id`.
    pub async fn send(&mut self, frame: ClientFrame) -> Result<(), Error> {
        self.send_request(&Request { frame, id: None }).await
    }

    /// Sends a frame with the `id` its answer will echo.
    pub async fn send_with_id(&mut self, frame: ClientFrame, id: impl Into<Id>) -> Result<(), Error> {
        self.send_request(&Request { frame, id: Some(id.into()) }).await
    }

    pub async fn send_request(&mut self, request: &Request) -> Result<(), Error> {
        let text = serde_json::to_string(request).expect("client frames always serialize");
        self.send_text(text).await
    }

    /// Sends any text, protocol or not.
    pub async fn send_text(&mut self, text: impl Into<String>) -> Result<(), Error> {
        self.send_message(Message::text(text.into())).await
    }

    /// Sends any WebSocket message (pings, binary, oversized frames).
    pub async fn send_message(&mut self, message: Message) -> Result<(), Error> {
        self.ws.send(message).await.map_err(Error::Send)
    }

    /// Queues a text without writing it; [`Connection::flush`] writes
    /// everything queued at once, as one burst.
    pub async fn feed_text(&mut self, text: impl Into<String>) -> Result<(), Error> {
        self.ws.feed(Message::text(text.into())).await.map_err(Error::Send)
    }

    pub async fn flush(&mut self) -> Result<(), Error> {
        self.ws.flush().await.map_err(Error::Send)
    }

    /// The next text frame, as it came. Control frames are answered by the
    /// library and skipped. Cancel-safe.
    pub async fn recv(&mut self) -> Result<Utf8Bytes, Error> {
        loop {
            match self.ws.next().await {
                Some(Ok(Message::Text(text))) => return Ok(text),
                Some(Ok(Message::Binary(data))) => return Err(Error::Binary(data.len())),
                Some(Ok(Message::Close(frame))) => {
                    return Err(Error::Closed(match frame {
                        Some(frame) => Closed::Frame { code: u16::from(frame.code), reason: frame.reason.to_string() },
                        None => Closed::Frame { code: 1005, reason: String::new() },
                    }))
                }
                Some(Ok(_)) => {}
                Some(Err(error)) => return Err(Error::Closed(Closed::Dropped(error.to_string()))),
                None => return Err(Error::Closed(Closed::Dropped("end of stream".into()))),
            }
        }
    }

    /// Says `hello` and reads up to its `welcome`; an `error` instead is
    /// [`Error::Refused`]. Frames before the welcome are skipped.
    pub async fn hello(&mut self, hello: Hello) -> Result<Welcome, Error> {
        self.send(ClientFrame::Hello(hello)).await?;
        loop {
            let text = self.recv().await?;
            match serde_json::from_str::<ServerFrame>(&text) {
                Ok(ServerFrame::Welcome { player, token, .. }) => return Ok(Welcome { player, token }),
                Ok(ServerFrame::Error { code, message, .. }) => {
                    return Err(Error::Refused { code: code.as_ws_code().to_owned(), message })
                }
                _ => {}
            }
        }
    }

    /// Closes politely and waits up to `limit` for the server's close.
    pub async fn close(mut self, limit: Duration) {
        let _ = tokio::time::timeout(limit, async {
            if self.ws.close(None).await.is_ok() {
                while let Some(Ok(_)) = self.ws.next().await {}
            }
        })
        .await;
    }
}

//! A connection with an inbox, for callers that talk to the gateway one
//! step at a time: send a request, then wait for the frame that answers it
//! while the frames around it stay queued for later waits. Every frame is
//! also kept in a log, in order, so a failing test can print all it saw.

use std::collections::VecDeque;
use std::time::Duration;

use fogblast_protocol::{ClientFrame, Hello, Id, ServerFrame};
use serde_json::Value;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

use crate::connection::{Closed, Connection, Error, Welcome};

/// One frame from the server: its text exactly as sent, and its JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct Received {
    text: String,
    json: Value,
}

impl Received {
    /// Reads a text frame; the protocol's frames are always JSON objects.
    pub fn parse(text: &str) -> Result<Received, Error> {
        let json = serde_json::from_str(text).map_err(|source| Error::Unreadable { text: text.to_owned(), source })?;
        Ok(Received { text: text.to_owned(), json })
    }

    /// The frame as the server wrote it.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The frame as JSON, with every field, known to the types or not.
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// Its type `t` (empty when it has none).
    pub fn kind(&self) -> &str {
        self.json["t"].as_str().unwrap_or("")
    }

    /// The frame as the protocol's type; an error for a frame the types
    /// do not describe (a newer server's kind, or a malformed one).
    pub fn frame(&self) -> Result<ServerFrame, Error> {
        serde_json::from_str(&self.text).map_err(|source| Error::Unreadable { text: self.text.clone(), source })
    }
}

/// A [`Connection`] whose frames wait in a queue until asked for.
#[derive(Debug)]
pub struct Client {
    connection: Connection,
    pending: VecDeque<Received>,
    log: Vec<Received>,
    closed: Option<Closed>,
}

impl Client {
    pub async fn connect(url: &str) -> Result<Client, Error> {
        Ok(Client::new(Connection::connect(url).await?))
    }

    pub fn new(connection: Connection) -> Client {
        Client { connection, pending: VecDeque::new(), log: Vec::new(), closed: None }
    }

    /// The socket, to send on it.
    pub fn connection(&mut self) -> &mut Connection {
        &mut self.connection
    }

    /// Every frame received so far, in order.
    pub fn log(&self) -> &[Received] {
        &self.log
    }

    /// How the connection ended, once it did.
    pub fn closed(&self) -> Option<&Closed> {
        self.closed.as_ref()
    }

    pub async fn send(&mut self, frame: ClientFrame) -> Result<(), Error> {
        self.connection.send(frame).await
    }

    pub async fn send_with_id(&mut self, frame: ClientFrame, id: impl Into<Id>) -> Result<(), Error> {
        self.connection.send_with_id(frame, id).await
    }

    pub async fn send_text(&mut self, text: impl Into<String>) -> Result<(), Error> {
        self.connection.send_text(text).await
    }

    pub async fn send_message(&mut self, message: Message) -> Result<(), Error> {
        self.connection.send_message(message).await
    }

    /// Says `hello` and waits up to `limit` for the `welcome`; frames
    /// before it stay queued.
    pub async fn hello(&mut self, hello: Hello, limit: Duration) -> Result<Welcome, Error> {
        self.send(ClientFrame::Hello(hello)).await?;
        let welcome = self.wait_for("welcome", limit, |f| f.kind() == "welcome" || f.kind() == "error").await?;
        match welcome.frame()? {
            ServerFrame::Welcome { player, token, .. } => Ok(Welcome { player, token }),
            ServerFrame::Error { code, message, .. } => {
                Err(Error::Refused { code: code.as_ws_code().to_owned(), message })
            }
            _ => unreachable!("only welcome and error match"),
        }
    }

    /// Reads one frame into the queue; `false` at `deadline` or once the
    /// connection ended.
    async fn read_one(&mut self, deadline: Instant) -> Result<bool, Error> {
        if self.closed.is_some() {
            return Ok(false);
        }
        let text = match tokio::time::timeout_at(deadline, self.connection.recv()).await {
            Err(_) => return Ok(false),
            Ok(Ok(text)) => text,
            Ok(Err(Error::Closed(closed))) => {
                self.closed = Some(closed);
                return Ok(false);
            }
            Ok(Err(error)) => return Err(error),
        };
        let received = Received::parse(&text)?;
        self.log.push(received.clone());
        self.pending.push_back(received);
        Ok(true)
    }

    /// The first queued or arriving frame that `matches`, taken from the
    /// queue (the others stay); `None` after `limit` or when the
    /// connection ended. A frame that is not JSON, or a binary one, is an
    /// error: the server never sends either.
    pub async fn find(
        &mut self,
        limit: Duration,
        matches: impl Fn(&Received) -> bool,
    ) -> Result<Option<Received>, Error> {
        let deadline = Instant::now() + limit;
        let mut checked = 0;
        loop {
            if let Some(i) = self.pending.iter().skip(checked).position(&matches) {
                return Ok(self.pending.remove(checked + i));
            }
            checked = self.pending.len();
            if !self.read_one(deadline).await? {
                return Ok(None);
            }
        }
    }

    /// Like [`Client::find`], with a timeout or the connection's end as
    /// an error naming `what` was waited for.
    pub async fn wait_for(
        &mut self,
        what: &str,
        limit: Duration,
        matches: impl Fn(&Received) -> bool,
    ) -> Result<Received, Error> {
        match self.find(limit, matches).await? {
            Some(frame) => Ok(frame),
            None => match &self.closed {
                Some(closed) => Err(Error::Closed(closed.clone())),
                None => Err(Error::Timeout { what: what.to_owned(), limit }),
            },
        }
    }

    /// The first frame `pick` turns into a value, typed: `pick` sees each
    /// frame the types describe (others are passed over and stay queued).
    pub async fn wait_typed<T>(
        &mut self,
        what: &str,
        limit: Duration,
        pick: impl Fn(ServerFrame) -> Option<T>,
    ) -> Result<T, Error> {
        let found = self.wait_for(what, limit, |f| f.frame().ok().and_then(&pick).is_some()).await?;
        Ok(pick(found.frame()?).expect("the frame matched"))
    }

    /// Everything that arrives within `window`, and what was queued.
    pub async fn drain(&mut self, window: Duration) -> Result<Vec<Received>, Error> {
        let deadline = Instant::now() + window;
        while self.read_one(deadline).await? {}
        Ok(self.pending.drain(..).collect())
    }

    /// Takes everything queued, without reading.
    pub fn take_pending(&mut self) -> Vec<Received> {
        self.pending.drain(..).collect()
    }

    /// Reads until the connection ends; `None` if it is still open after
    /// `limit`.
    pub async fn wait_closed(&mut self, limit: Duration) -> Result<Option<Closed>, Error> {
        let deadline = Instant::now() + limit;
        while self.closed.is_none() {
            if !self.read_one(deadline).await? && self.closed.is_none() {
                return Ok(None);
            }
        }
        Ok(self.closed.clone())
    }

    /// Closes politely, waiting up to `limit` for the server's close.
    pub async fn close(self, limit: Duration) {
        self.connection.close(limit).await;
    }
}

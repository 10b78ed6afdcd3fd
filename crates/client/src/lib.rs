//! A typed async client for a Fogblast gateway, for the project's tests,
//! load test and chaos bots, and for anyone writing a bot in Rust.
//!
//! Three layers, each usable alone:
//!
//! - [`Connection`]: one WebSocket at `/ws` that sends
//!   [`ClientFrame`](fogblast_protocol::ClientFrame)s (or any text, for
//!   tests that send malformed frames on purpose) and receives text frames
//!   as they came, unparsed. Its receive is cancel-safe, so bots can
//!   `select!` over several connections and timers, and it costs nothing
//!   per frame beyond the socket's own work: the caller parses once.
//! - [`Client`]: a connection with an inbox. Every frame is kept as a
//!   [`Received`] (the raw text, its JSON, and the typed
//!   [`ServerFrame`](fogblast_protocol::ServerFrame) on demand), and a
//!   caller waits for the first frame matching a predicate within a time
//!   limit while the others stay queued.
//! - [`Http`]: the gateway's HTTP API (game state, PGN export, players,
//!   leaderboards, health and metrics) over a pooled HTTP/1.1 client with
//!   a deadline on every request.

mod client;
mod connection;
mod http;

pub use client::{Client, Received};
pub use connection::{Closed, Connection, ConnectionOptions, Error, Welcome};
pub use fogblast_protocol as protocol;
pub use http::{get_blocking, Http, HttpError, Response};
/// The methods [`Http::send`] takes.
pub use reqwest::Method;
/// The WebSocket library underneath, for callers that inspect its errors
/// or send frames of their own (pings, oversized frames).
pub use tokio_tungstenite::tungstenite;

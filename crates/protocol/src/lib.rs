//! Fogblast's WebSocket protocol (`docs/protocol.md`) as types, so that the
//! contract other clients rely on is written once and checked by the
//! compiler: [`ClientFrame`] is everything a client may send, [`ServerFrame`]
//! everything a server sends, and their fields are the protocol's names and
//! enums rather than strings assembled by hand. Reading a frame keeps the
//! protocol's error codes and messages ([`parse`], [`BadFrame`]); writing one
//! is `serde_json::to_string`. [`convert`] is the one place where the wire
//! enums meet the gRPC and rules enums.
//!
//! The crate does no I/O: the gateway reads and writes sockets, tests and
//! tools may use the same types. Every JSON example in `docs/protocol.md` is
//! read back through these types by `tests/doc_examples.rs`.

mod client;
mod command;
pub mod convert;
mod id;
mod server;
mod vocab;

pub use client::{
    id_of, parse, BadFrame, ChatMessage, ClientFrame, Create, DrawOffer, GameRef, Hello, Join, Move, RematchRequest,
    Request, Resume, Seek, TakebackOffer,
};
pub use command::{chat_line, GameCommand, GatewayFrame, Routed};
pub use id::{Id, MAX_ID_BYTES};
pub use server::{
    ChatLine, Clock, EndFrame, LobbyFrame, LobbyUpdateFrame, MoveFrame, OpenBoard, PairedOpponent, Player, Players,
    ServerFrame, StateFrame,
};
pub use vocab::{
    ChatRoom, Color, ColorChoice, DrawAction, EndReason, Level, Opponent, RatingRange, RematchAction, Status,
    TakebackAction, TimeControl, Variant, Viewer,
};

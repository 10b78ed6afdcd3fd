//! Fogblast's gRPC contracts: the messages, clients and servers generated
//! from `proto/`, one module per package, so every service and test speaks
//! the same types; plus the id newtypes, the one error-code enum that
//! every edge (gRPC, HTTP, WebSocket) maps from, and the notices services
//! send players through the bus with the subjects they travel on.

/// The generated code, nested by protobuf package so that one package can
/// name another's types.
#[allow(clippy::all, missing_debug_implementations)]
mod generated {
    pub mod fogblast {
        pub mod engine {
            pub mod v1 {
                tonic::include_proto!("fogblast.engine.v1");
            }
        }
        pub mod game {
            pub mod v1 {
                tonic::include_proto!("fogblast.game.v1");
            }
        }
        pub mod events {
            pub mod v1 {
                tonic::include_proto!("fogblast.events.v1");
            }
        }
        pub mod record {
            pub mod v1 {
                tonic::include_proto!("fogblast.record.v1");
            }
        }
        pub mod rating {
            pub mod v1 {
                tonic::include_proto!("fogblast.rating.v1");
            }
        }
        pub mod matchmaker {
            pub mod v1 {
                tonic::include_proto!("fogblast.matchmaker.v1");
            }
        }
        pub mod notices {
            pub mod v1 {
                tonic::include_proto!("fogblast.notices.v1");
            }
        }
    }
}

/// `fogblast.engine.v1`: the pool of computer players.
pub use generated::fogblast::engine::v1 as engine;
/// `fogblast.events.v1`: events published for other services.
pub use generated::fogblast::events::v1 as events;
/// `fogblast.game.v1`: the sharded game service.
pub use generated::fogblast::game::v1 as game;
/// `fogblast.matchmaker.v1`: quick pairing and the lobby of open boards.
pub use generated::fogblast::matchmaker::v1 as matchmaker;
/// `fogblast.rating.v1`: ratings, the game archive and leaderboards.
pub use generated::fogblast::rating::v1 as rating;
/// `fogblast.record.v1`: how the game service keeps a game in its store.
pub use generated::fogblast::record::v1 as record;

mod command;
pub mod error;
pub mod ids;
pub mod notices;
pub mod public_events;
pub mod tournament_events;
pub mod variant;

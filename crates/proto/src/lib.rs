//! Fogblast's gRPC contracts: the messages, clients and servers generated
//! from `proto/`, one module per package, so every service and test speaks
//! the same types.

/// `fogblast.engine.v1`: the pool of computer players.
pub mod engine {
    tonic::include_proto!("fogblast.engine.v1");
}

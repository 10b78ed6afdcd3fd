//! What every Fogblast service runs on, written once: the admin HTTP server
//! (`/metrics`, `/healthz`, `/readyz`), the gRPC server's shared settings, serving with a bounded drain after
//! the shutdown signal, and the defaults of a settings struct read from its
//! own clap flags (or from given flags), so a default is written in one place only.

mod admin;
mod defaults;
mod drain;
mod grpc;

pub use admin::{serve_admin, Readiness};
pub use defaults::{defaults, from_flags};
pub use drain::{serve_with_drain, Drained};
pub use grpc::{grpc_server, PENDING_RESETS_PER_CONNECTION};

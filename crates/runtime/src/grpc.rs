//! The gRPC server every service serves its API with.

use tonic::transport::Server;

/// Streams a peer may reset before the server has taken them up, on one
/// connection, before the server ends that connection (h2's guard against
/// the "rapid reset" flood, 20 by default). A service's callers are the
/// cluster's own processes, and each one cancels the calls it stops
/// waiting for: when a service falls behind, dozens of calls on one
/// connection time out at once. With the default, that ended the whole
/// connection and failed every call on it, the ones about to be answered
/// too, so falling behind turned into failing. This bound still ends a
/// connection that resets without end.
pub const PENDING_RESETS_PER_CONNECTION: usize = 4_096;

/// A gRPC server builder with the settings every service shares.
pub fn grpc_server() -> Server {
    Server::builder().http2_max_pending_accept_reset_streams(Some(PENDING_RESETS_PER_CONNECTION))
}

//! What every end-to-end test shares, one module per job: [`procs`], a
//! cluster of real `fogblast` processes (game shards, gateways, engine
//! pools, matchmakers, the rating service) on loopback, over the real
//! Redis and NATS JetStream under names of the cluster's own; [`client`], a
//! test client on the client crate that speaks the protocol of
//! `docs/ws-protocol.md` and fails the test on what it did not expect; and
//! [`lines`], lines of play, found with the rules crate, that end the way a
//! test wants.

mod client;
mod lines;
mod procs;

use std::time::Duration;

pub use client::*;
pub use lines::*;
pub use procs::*;

/// How long a test waits for a frame it expects.
pub const WAIT: Duration = Duration::from_secs(10);

pub use fogblast_testkit::{nats_url, redis_url};

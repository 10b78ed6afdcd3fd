//! Fogblast end to end: real `fogblast` processes (game shards, gateways,
//! engine pools, matchmakers, rating services, `fogblast up`) on loopback,
//! over the real Redis, NATS JetStream and Postgres, driven through the
//! client crate as players would. One module per area; `support` starts
//! the processes and holds the test client and the lines of play. Areas
//! that only play through the protocol (`play`, `lobby`, `computer`) run
//! on the in-process sandbox (`fogblast-sandbox`) instead, which starts in
//! milliseconds; those that kill, pause or signal processes keep them real.
//!
//! One binary rather than one per area, so the support code is built once
//! and tests of different areas share the machine's cores evenly: Cargo
//! runs the tests of a binary in parallel (one per core by default), and
//! each area's tests start clusters of their own or share
//! [`support::shared_cluster`].

mod support;

mod analysis;
mod bots;
mod computer;
mod disk_full;
mod endpoints;
mod events;
mod failover;
mod fog_computer;
mod frozen_matchmaker;
mod fuzz;
mod hostile;
mod identity;
mod loadtest;
mod lobby;
mod monitoring;
mod play;
mod presence;
mod puzzles;
mod rated;
mod reconnect;
mod soak;
mod tournaments;
mod trace;
mod up;

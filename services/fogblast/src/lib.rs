//! What the `fogblast` server binary and the `fogblast-tools` binary share:
//! log set-up, the allocator's settings and the signals that start a
//! graceful shutdown. Everything else of each binary lives under its own
//! `main.rs`.

pub mod allocator;
pub mod signals;

//! What a gateway reports to Prometheus at `/metrics`. Each gateway has
//! its own registry, so several in one process keep separate counts.

use prometheus::{HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry};

/// Command latency buckets, with bounds at the service-level objectives'
/// thresholds: 50 ms for a move's acknowledgement, 1 s for a stall
/// (docs/operations.md, "Service-level objectives").
const COMMAND_BUCKETS: [f64; 16] =
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    pub connections: IntGauge,
    pub players: IntGauge,
    pub game_feeds: IntGauge,
    pub frames_in: IntCounter,
    pub frames_out: IntCounter,
    /// Errors sent to clients, by code.
    pub errors: IntCounterVec,
    /// Connections closed by the gateway, by reason.
    pub closed: IntCounterVec,
    /// Time to answer a client's command, by message type.
    pub command_seconds: HistogramVec,
}

impl Metrics {
    pub fn new() -> Result<Metrics, prometheus::Error> {
        let registry = Registry::new();
        let connections = IntGauge::new("fogblast_gateway_connections", "Open WebSocket connections.")?;
        let players = IntGauge::new("fogblast_gateway_players", "Players with at least one connection here.")?;
        let game_feeds = IntGauge::new("fogblast_gateway_game_feeds", "Games with a Watch stream from this gateway.")?;
        let frames_in = IntCounter::new("fogblast_gateway_frames_received_total", "Frames received from clients.")?;
        let frames_out = IntCounter::new("fogblast_gateway_frames_sent_total", "Frames queued to clients.")?;
        let errors =
            IntCounterVec::new(Opts::new("fogblast_gateway_errors_total", "Error frames sent, by code."), &["code"])?;
        let closed = IntCounterVec::new(
            Opts::new("fogblast_gateway_closed_total", "Connections the gateway closed, by reason."),
            &["reason"],
        )?;
        let command_seconds = HistogramVec::new(
            HistogramOpts::new("fogblast_gateway_command_seconds", "Time to answer a command, by type.")
                .buckets(COMMAND_BUCKETS.to_vec()),
            &["t"],
        )?;
        registry.register(Box::new(connections.clone()))?;
        registry.register(Box::new(players.clone()))?;
        registry.register(Box::new(game_feeds.clone()))?;
        registry.register(Box::new(frames_in.clone()))?;
        registry.register(Box::new(frames_out.clone()))?;
        registry.register(Box::new(errors.clone()))?;
        registry.register(Box::new(closed.clone()))?;
        registry.register(Box::new(command_seconds.clone()))?;
        Ok(Metrics {
            registry,
            connections,
            players,
            game_feeds,
            frames_in,
            frames_out,
            errors,
            closed,
            command_seconds,
        })
    }

    pub fn registry(&self) -> Registry {
        self.registry.clone()
    }
}

//! What the load test counts while it runs, shared by every bot without a
//! lock on the hot path: connections held, games, acknowledged moves, and
//! latency histograms; error codes are rare and sit behind a mutex. The
//! coordinator reads them for the progress lines and the final report.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Values below this many microseconds get a bucket each.
const EXACT: u64 = 128;
/// Buckets per power of two above that: about 1% resolution.
const SUB_BITS: u32 = 6;
const SUB: usize = 1 << SUB_BITS;
/// Powers of two covered above `EXACT` (up to 2^36 µs, about 19 hours).
const OCTAVES: usize = 29;
const BUCKETS: usize = EXACT as usize + OCTAVES * SUB;

/// A latency histogram in microseconds, log-linear, lock-free to record.
#[derive(Debug)]
pub struct Histogram {
    counts: Box<[AtomicU64]>,
    max_us: AtomicU64,
}

/// The figures read off a histogram.
#[derive(Clone, Copy, Debug, Default)]
pub struct Summary {
    pub count: u64,
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
}

impl Default for Histogram {
    fn default() -> Histogram {
        Histogram { counts: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(), max_us: AtomicU64::new(0) }
    }
}

fn bucket(us: u64) -> usize {
    if us < EXACT {
        return us as usize;
    }
    let msb = 63 - us.leading_zeros();
    let shift = msb - SUB_BITS;
    let sub = ((us >> shift) as usize) & (SUB - 1);
    let octave = (msb - EXACT.trailing_zeros()) as usize;
    (EXACT as usize + octave * SUB + sub).min(BUCKETS - 1)
}

/// The middle of a bucket's range, in microseconds.
fn value(index: usize) -> u64 {
    if index < EXACT as usize {
        return index as u64;
    }
    let octave = (index - EXACT as usize) / SUB;
    let sub = ((index - EXACT as usize) % SUB) as u64;
    let shift = octave as u32 + EXACT.trailing_zeros() - SUB_BITS;
    let low = (SUB as u64 + sub) << shift;
    low + ((1u64 << shift) >> 1)
}

impl Histogram {
    pub fn record(&self, latency: Duration) {
        let us = latency.as_micros().min(u128::from(u64::MAX)) as u64;
        self.counts[bucket(us)].fetch_add(1, Ordering::Relaxed);
        self.max_us.fetch_max(us, Ordering::Relaxed);
    }

    /// Forgets everything recorded (concurrent records may survive; fine
    /// for the progress lines this is used for).
    pub fn reset(&self) {
        for count in self.counts.iter() {
            count.store(0, Ordering::Relaxed);
        }
        self.max_us.store(0, Ordering::Relaxed);
    }

    pub fn summary(&self) -> Summary {
        let counts: Vec<u64> = self.counts.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        let count: u64 = counts.iter().sum();
        let max = Duration::from_micros(self.max_us.load(Ordering::Relaxed));
        let percentile = |p: f64| {
            if count == 0 {
                return Duration::ZERO;
            }
            let rank = ((count as f64 * p).ceil() as u64).clamp(1, count);
            let mut seen = 0;
            for (index, n) in counts.iter().enumerate() {
                seen += n;
                if seen >= rank {
                    return Duration::from_micros(value(index)).min(max);
                }
            }
            max
        };
        Summary { count, p50: percentile(0.50), p99: percentile(0.99), max }
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        write!(f, "p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms", ms(self.p50), ms(self.p99), ms(self.max))
    }
}

/// Everything the bots count.
#[derive(Debug, Default)]
pub struct Stats {
    /// WebSocket connections open and greeted (`welcome` received).
    pub connections: AtomicI64,
    pub peak_connections: AtomicI64,
    /// Pairs that got both connections greeted, and those that gave up.
    pub pairs_ready: AtomicU64,
    pub pairs_failed: AtomicU64,
    /// Idle connections held now, and those that could not connect.
    pub idle_held: AtomicU64,
    pub idle_failed: AtomicU64,
    /// Connection attempts that failed (each retry counts).
    pub connect_failures: AtomicU64,
    /// Connections the server closed, or that broke, while in use.
    pub disconnects: AtomicU64,
    /// Set when a connect failed for lack of file descriptors.
    pub out_of_files: AtomicBool,
    /// Games joined by both bots, and games that ended with an `end` frame.
    pub games_started: AtomicU64,
    pub games_finished: AtomicU64,
    /// Moves acknowledged (the mover got its own `move` frame back), in all
    /// and within the measured window.
    pub moves: AtomicU64,
    pub window_moves: AtomicU64,
    /// Whether the measured window is open.
    pub measuring: AtomicBool,
    /// Send to the opponent's receipt, within the window.
    pub relay: Histogram,
    /// Send to the mover's own acknowledgement, within the window.
    pub ack: Histogram,
    /// Relay latency since the last progress line.
    pub relay_recent: Histogram,
    /// Error frames by code, and other trouble by a short name, with a
    /// few of the games it happened in.
    errors: Mutex<BTreeMap<String, Trouble>>,
}

/// How often one kind of trouble happened, and where.
#[derive(Clone, Debug, Default)]
pub struct Trouble {
    pub count: u64,
    pub games: Vec<String>,
}

/// Games named per kind of trouble, for looking into the servers' logs.
const EXAMPLES: usize = 3;

impl Stats {
    pub fn count_error(&self, what: &str) {
        self.count_error_in(what, None);
    }

    /// Counts trouble in `game`, keeping the first few games' ids.
    pub fn count_error_in(&self, what: &str, game: Option<&str>) {
        let mut errors = self.errors.lock().expect("errors lock");
        let trouble = errors.entry(what.to_owned()).or_default();
        trouble.count += 1;
        if let Some(game) = game.filter(|g| !g.is_empty()) {
            if trouble.games.len() < EXAMPLES {
                trouble.games.push(game.to_owned());
            }
        }
    }

    pub fn errors(&self) -> BTreeMap<String, Trouble> {
        self.errors.lock().expect("errors lock").clone()
    }

    pub fn connected(&self) {
        let now = self.connections.fetch_add(1, Ordering::Relaxed) + 1;
        self.peak_connections.fetch_max(now, Ordering::Relaxed);
    }

    pub fn disconnected(&self) {
        self.connections.fetch_sub(1, Ordering::Relaxed);
    }

    pub fn measuring(&self) -> bool {
        self.measuring.load(Ordering::Relaxed)
    }

    pub fn moved(&self, ack: Duration) {
        self.moves.fetch_add(1, Ordering::Relaxed);
        if self.measuring() {
            self.window_moves.fetch_add(1, Ordering::Relaxed);
            self.ack.record(ack);
        }
    }

    pub fn relayed(&self, latency: Duration) {
        self.relay_recent.record(latency);
        if self.measuring() {
            self.relay.record(latency);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_the_range_in_order_and_stay_close() {
        let mut last = 0;
        for us in (0..5_000_000u64).step_by(37).chain([u64::MAX / 2, u64::MAX]) {
            let index = bucket(us);
            assert!(index >= last, "{us}");
            last = index;
            if us < 1 << 36 {
                let v = value(index) as f64;
                assert!((v - us as f64).abs() <= us as f64 / 64.0 + 0.5, "{us} -> {v}");
            }
        }
    }

    #[test]
    fn percentiles_of_a_known_spread() {
        let h = Histogram::default();
        for ms in 1..=100u64 {
            h.record(Duration::from_millis(ms));
        }
        let s = h.summary();
        assert_eq!(s.count, 100);
        assert!((s.p50.as_secs_f64() * 1e3 - 50.0).abs() < 1.0, "{s}");
        assert!((s.p99.as_secs_f64() * 1e3 - 99.0).abs() < 1.5, "{s}");
        assert_eq!(s.max, Duration::from_millis(100));
        h.reset();
        assert_eq!(h.summary().count, 0);
    }
}

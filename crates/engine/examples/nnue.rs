//! Trains the atomic evaluation network (`crates/engine/src/atomic.nnue`)
//! on positions from the engine's own games, written by the `texel` example's
//! `generate` (a FEN, the game's result for White and the search's score for
//! White on each line).
//!
//!     cargo run --release -p fogblast-engine --example nnue -- train \
//!         --data /tmp/a.data,/tmp/b.data --epochs 20 --lambda 0.5 --residual \
//!         --out crates/engine/src/atomic.nnue
//!
//! The network is trained in floating point with Adam on the mean squared
//! error between `sigmoid(eval / 400)` and the target `L × result + (1 − L) ×
//! sigmoid(score / 400)`, both for the side to move, then quantised to the
//! engine's fixed-point layout ([`fogblast_engine::nnue`]). With
//! `--residual` the network learns a correction to the hand-written
//! evaluation instead of a whole evaluation. With `--mirror` each training
//! position is also learnt with its files mirrored (a to h), which the rules
//! treat alike but for castling. One block of a thousand
//! positions in twenty is held out (whole games, whose positions are alike)
//! and its error printed after each epoch; the epoch with the least is
//! the one written. With `--init FILE` training starts from that network's
//! weights rather than random ones.

use std::io::{BufRead, BufReader};

use fogblast_engine::evaluate;
use fogblast_engine::nnue::{feature, Network, HIDDEN, INPUTS, QA, QB, SCALE};
use fogblast_rules::{Color, Position, Variant};

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

/// The largest weight magnitude, so that quantised sums stay within i16 and
/// the output products within i32.
const CLIP: f32 = 1.98;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let number = |name: &str, default: f64| flag(name).map_or(default, |v| v.parse().expect("a number"));
    match args.first().map(String::as_str) {
        Some("train") => {
            let settings = Settings {
                epochs: number("--epochs", 20.0) as usize,
                lambda: number("--lambda", 0.5) as f32,
                rate: number("--lr", 0.001) as f32,
                batch: number("--batch", 16_384.0) as usize,
                residual: args.iter().any(|a| a == "--residual"),
                mirror: args.iter().any(|a| a == "--mirror"),
                seed: number("--seed", 1.0) as u64,
                init: flag("--init"),
            };
            let files = flag("--data").unwrap_or_else(|| "atomic.data".to_owned());
            let out = flag("--out").unwrap_or_else(|| "atomic.nnue".to_owned());
            train(&files, &out, &settings);
        }
        _ => eprintln!(
            "usage: nnue train --data FILE[,FILE...] [--epochs N] [--lambda L] [--lr R] [--batch N] \
             [--residual] [--mirror] [--seed N] [--init FILE] [--out FILE]"
        ),
    }
}

struct Settings {
    epochs: usize,
    lambda: f32,
    rate: f32,
    batch: usize,
    residual: bool,
    mirror: bool,
    seed: u64,
    /// A network file to start from instead of random weights.
    init: Option<String>,
}

/// One training position, seen from the side to move.
struct Sample {
    /// Active features from the side to move's view, then the other's.
    ours: Vec<u16>,
    theirs: Vec<u16>,
    target: f32,
    /// The hand-written evaluation in network units, for a residual net.
    base: f32,
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

fn load(files: &str, settings: &Settings) -> Vec<Sample> {
    let mut samples = Vec::new();
    for path in files.split(',') {
        let file = BufReader::new(std::fs::File::open(path).expect("data file"));
        for line in file.lines().map_while(Result::ok) {
            let mut fields = line.split(';');
            let (Some(fen), Some(result), Some(score)) = (fields.next(), fields.next(), fields.next()) else {
                continue;
            };
            let (Ok(pos), Ok(result), Ok(score)) =
                (Position::from_fen(fen, Variant::Atomic), result.trim().parse::<f32>(), score.trim().parse::<f32>())
            else {
                continue;
            };
            let us = pos.turn();
            let (result, score) = if us == Color::White { (result, score) } else { (1.0 - result, -score) };
            let view = |side: Color| {
                pos.board().pieces().map(|(sq, piece)| feature(side, piece, sq) as u16).collect::<Vec<_>>()
            };
            let base = if settings.residual { evaluate(&pos) as f32 / SCALE as f32 } else { 0.0 };
            samples.push(Sample {
                ours: view(us),
                theirs: view(!us),
                target: settings.lambda * result + (1.0 - settings.lambda) * sigmoid(score / SCALE as f32),
                base,
            });
        }
    }
    samples
}

/// The network in floating point, with Adam's moments for every weight.
struct Float {
    w1: Vec<f32>,
    b1: Vec<f32>,
    w2: Vec<f32>,
    b2: f32,
}

impl Float {
    fn zeros() -> Float {
        Float { w1: vec![0.0; INPUTS * HIDDEN], b1: vec![0.0; HIDDEN], w2: vec![0.0; 2 * HIDDEN], b2: 0.0 }
    }

    /// The floating-point weights a quantised network stands for.
    fn from_network(network: &Network) -> Float {
        let (qa, qb) = (QA as f32, QB as f32);
        Float {
            w1: network.input_weights.iter().flatten().map(|&w| f32::from(w) / qa).collect(),
            b1: network.input_bias.iter().map(|&b| f32::from(b) / qa).collect(),
            w2: network.output_weights.iter().map(|&w| f32::from(w) / qb).collect(),
            b2: network.output_bias as f32 / (qa * qb),
        }
    }

    fn params(&mut self) -> impl Iterator<Item = &mut f32> {
        self.w1.iter_mut().chain(self.b1.iter_mut()).chain(self.w2.iter_mut()).chain(std::iter::once(&mut self.b2))
    }

    fn sums(&self, features: &[u16]) -> [f32; HIDDEN] {
        let mut acc: [f32; HIDDEN] = std::array::from_fn(|j| self.b1[j]);
        for &f in features {
            let row = &self.w1[f as usize * HIDDEN..][..HIDDEN];
            acc.iter_mut().zip(row).for_each(|(a, w)| *a += w);
        }
        acc
    }

    /// The output in network units (centipawns ÷ [`SCALE`]) and the sums.
    fn forward(&self, s: &Sample) -> (f32, [f32; HIDDEN], [f32; HIDDEN]) {
        let (us, them) = (self.sums(&s.ours), self.sums(&s.theirs));
        let activated = |a: f32| a.clamp(0.0, 1.0).powi(2);
        let out = self.b2
            + us.iter().zip(&self.w2[..HIDDEN]).map(|(a, w)| activated(*a) * w).sum::<f32>()
            + them.iter().zip(&self.w2[HIDDEN..]).map(|(a, w)| activated(*a) * w).sum::<f32>();
        (out, us, them)
    }

    /// Adds the sample's gradient to `grad`; returns its squared error.
    fn backward(&self, s: &Sample, grad: &mut Float) -> f32 {
        let (out, us, them) = self.forward(s);
        let p = sigmoid(out + s.base);
        let g = 2.0 * (p - s.target) * p * (1.0 - p);
        grad.b2 += g;
        for (half, sums, features) in [(0, &us, &s.ours), (HIDDEN, &them, &s.theirs)] {
            let mut d = [0.0f32; HIDDEN];
            for j in 0..HIDDEN {
                let a = sums[j];
                let clamped = a.clamp(0.0, 1.0);
                grad.w2[half + j] += g * clamped * clamped;
                if a > 0.0 && a < 1.0 {
                    d[j] = g * self.w2[half + j] * 2.0 * a;
                }
            }
            grad.b1.iter_mut().zip(&d).for_each(|(b, d)| *b += d);
            for &f in features {
                let row = &mut grad.w1[f as usize * HIDDEN..][..HIDDEN];
                row.iter_mut().zip(&d).for_each(|(w, d)| *w += d);
            }
        }
        (p - s.target).powi(2)
    }

    fn quantised(&self, residual: bool) -> Network {
        let q = |x: f32, scale: i32| (x * scale as f32).round() as i16;
        Network {
            residual,
            input_weights: (0..INPUTS).map(|f| std::array::from_fn(|j| q(self.w1[f * HIDDEN + j], QA))).collect(),
            input_bias: std::array::from_fn(|j| q(self.b1[j], QA)),
            output_weights: std::array::from_fn(|j| q(self.w2[j], QB)),
            output_bias: (self.b2 * (QA * QB) as f32).round() as i32,
        }
    }
}

fn validation_error(net: &Float, samples: &[Sample]) -> f32 {
    let sum: f32 = samples.iter().map(|s| (sigmoid(net.forward(s).0 + s.base) - s.target).powi(2)).sum();
    sum / samples.len() as f32
}

fn train(files: &str, out: &str, settings: &Settings) {
    let all = load(files, settings);
    let (mut training, held): (Vec<_>, Vec<_>) = all.into_iter().enumerate().partition(|(i, _)| (i / 1000) % 20 != 0);
    let held: Vec<Sample> = held.into_iter().map(|(_, s)| s).collect();
    if settings.mirror {
        let flip = |features: &[u16]| features.iter().map(|f| f ^ 7).collect::<Vec<_>>();
        let mirrored: Vec<(usize, Sample)> = training
            .iter()
            .map(|(i, s)| (*i, Sample { ours: flip(&s.ours), theirs: flip(&s.theirs), target: s.target, base: s.base }))
            .collect();
        training.extend(mirrored);
    }
    eprintln!("{} training positions, {} held out", training.len(), held.len());
    let mut rng = Rng(settings.seed);
    let mut net = match &settings.init {
        Some(path) => {
            let bytes = std::fs::read(path).expect("the network to start from");
            let network = Network::from_bytes(&bytes).expect("a network file");
            assert_eq!(network.residual, settings.residual, "--residual must match the network started from");
            Float::from_network(&network)
        }
        None => {
            let mut net = Float::zeros();
            // Small random first layer, positive biases so most neurons
            // start active; a residual net's output starts at zero (the
            // hand-written evaluation unchanged).
            net.w1.iter_mut().for_each(|w| *w = rng.unit() * 0.15);
            net.b1.iter_mut().for_each(|b| *b = 0.25 + rng.unit() * 0.1);
            if !settings.residual {
                net.w2.iter_mut().for_each(|w| *w = rng.unit() * 0.1);
            }
            net
        }
    };
    let mut best_error = validation_error(&net, &held);
    let mut best = net.quantised(settings.residual);
    eprintln!("epoch 0: held-out error {best_error:.6}");
    let (mut m, mut v) = (Float::zeros(), Float::zeros());
    let (beta1, beta2) = (0.9f32, 0.999f32);
    let mut step = 0i32;
    for epoch in 1..=settings.epochs {
        // Shuffle.
        for i in (1..training.len()).rev() {
            training.swap(i, (rng.next() % (i as u64 + 1)) as usize);
        }
        // The rate falls to a tenth over the last half.
        let progress = epoch as f32 / settings.epochs as f32;
        let rate = if progress <= 0.5 { settings.rate } else { settings.rate * 0.1f32.powf((progress - 0.5) * 2.0) };
        let mut total = 0.0f64;
        for batch in training.chunks(settings.batch) {
            let mut grad = Float::zeros();
            for (_, s) in batch {
                total += f64::from(net.backward(s, &mut grad));
            }
            step += 1;
            let scale = 1.0 / batch.len() as f32;
            let (c1, c2) = (1.0 - beta1.powi(step), 1.0 - beta2.powi(step));
            let grads: Vec<f32> = grad.params().map(|g| *g * scale).collect();
            for (((w, m), v), g) in net.params().zip(m.params()).zip(v.params()).zip(grads) {
                if g == 0.0 && *m == 0.0 {
                    continue;
                }
                *m = beta1 * *m + (1.0 - beta1) * g;
                *v = beta2 * *v + (1.0 - beta2) * g * g;
                *w -= rate * (*m / c1) / ((*v / c2).sqrt() + 1e-8);
                *w = w.clamp(-CLIP, CLIP);
            }
        }
        let error = validation_error(&net, &held);
        eprintln!(
            "epoch {epoch}: rate {rate:.6}, training error {:.6}, held-out error {error:.6}",
            total / training.len() as f64,
        );
        if error < best_error {
            best_error = error;
            best = net.quantised(settings.residual);
        }
    }
    let quantised = best;
    std::fs::write(out, quantised.to_bytes()).expect("write the network");
    let start = Position::new(Variant::Atomic);
    let acc = fogblast_engine::nnue::Accumulator::new(&quantised, start.board());
    eprintln!("wrote {out}; output at the start position {} cp", quantised.evaluate(&acc, start.turn()));
}

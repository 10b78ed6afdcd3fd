//! `fogblast events tail`: prints the public event stream (docs/events.md)
//! as it arrives, from now or from a point in time or a stream sequence:
//! the games of one variant or all, or the tournaments; as one line of text
//! per event, or as the stream's JSON. It reads through an ordered consumer of its
//! own, which the server forgets when it exits.

use std::io::Write;
use std::time::Duration;

use anyhow::{bail, Context};
use async_nats::jetstream::consumer::{pull::OrderedConfig, DeliverPolicy};
use fogblast_proto::events::game_event::Kind;
use fogblast_proto::events::tournament_event::Kind as TournamentKind;
use fogblast_proto::events::{GameEvent, TournamentEvent};
use fogblast_proto::game::Variant;
use fogblast_proto::public_events::{self, Encoding};
use fogblast_proto::tournament_events;
use futures::StreamExt;
use prost::Message;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

#[derive(Debug, clap::Args)]
pub struct EventsArgs {
    #[command(subcommand)]
    pub command: EventsCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum EventsCommand {
    /// Print the public event stream (games, or with --tournaments the tournaments) as it arrives.
    Tail(TailArgs),
}

#[derive(Debug, clap::Args)]
pub struct TailArgs {
    /// The NATS server, or a cluster's seed servers, comma separated.
    #[arg(long, env = "NATS_URL", default_value = "nats://127.0.0.1:4222")]
    pub nats_url: String,
    /// The deployment's JetStream stream (`--nats-stream` of its services); the public events are in the stream
    /// beside it, named with `_PUBLIC` after it.
    #[arg(long, env = "FOGBLAST_NATS_STREAM", default_value = "FOGBLAST_GAMES")]
    pub nats_stream: String,
    /// The deployment's subject prefix (`--nats-subject-prefix` of its services).
    #[arg(long, env = "FOGBLAST_NATS_SUBJECT_PREFIX", default_value = "")]
    pub nats_subject_prefix: String,
    /// Start at this time instead of now: RFC 3339 (`2026-12-01T18:00:00Z`) or a span back from now (`90s`, `15m`,
    /// `2h`, `7d`).
    #[arg(long, conflicts_with = "from_sequence")]
    pub from: Option<String>,
    /// Start at this stream sequence (each event's sequence is printed with it).
    #[arg(long)]
    pub from_sequence: Option<u64>,
    /// Only this variant's games: `standard`, `atomic` or `fog`.
    #[arg(long)]
    pub variant: Option<String>,
    /// The tournaments' events instead of the games'.
    #[arg(long, conflicts_with = "variant")]
    pub tournaments: bool,
    /// Print each event as the stream's JSON, one object per line.
    #[arg(long)]
    pub json: bool,
    /// Exit after this many events [default: run until interrupted].
    #[arg(long)]
    pub count: Option<u64>,
}

pub fn run(args: EventsArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    match args.command {
        EventsCommand::Tail(args) => runtime.block_on(tail(args)),
    }
}

/// A `--from` value as a time.
fn start_time(from: &str, now: OffsetDateTime) -> anyhow::Result<OffsetDateTime> {
    if let Ok(time) = OffsetDateTime::parse(from, &Rfc3339) {
        return Ok(time);
    }
    let split = from.find(|c: char| !c.is_ascii_digit()).unwrap_or(from.len());
    let (number, unit) = from.split_at(split);
    let number: u64 = number.parse().with_context(|| format!("--from {from:?}: not RFC 3339 nor a span like 15m"))?;
    let seconds = match unit {
        "s" => number,
        "m" => number * 60,
        "h" => number * 3600,
        "d" => number * 86_400,
        _ => bail!("--from {from:?}: a span ends in s, m, h or d"),
    };
    Ok(now - Duration::from_secs(seconds))
}

fn variant(name: &str) -> anyhow::Result<Variant> {
    match fogblast_rules::Variant::from_name(name) {
        Some(variant) => Ok(variant.into()),
        None => bail!("--variant {name:?}: one of standard, atomic, fog"),
    }
}

async fn tail(args: TailArgs) -> anyhow::Result<()> {
    let encoding = if args.json { Encoding::Json } else { Encoding::Protobuf };
    let variant = args.variant.as_deref().map(variant).transpose()?;
    let deliver_policy = match (&args.from, args.from_sequence) {
        (Some(from), _) => DeliverPolicy::ByStartTime { start_time: start_time(from, OffsetDateTime::now_utc())? },
        (None, Some(start_sequence)) => DeliverPolicy::ByStartSequence { start_sequence },
        (None, None) => DeliverPolicy::New,
    };
    let client = async_nats::connect(fogblast_bus::nats_servers(&args.nats_url)?)
        .await
        .with_context(|| format!("connecting to {}", args.nats_url))?;
    let jetstream = async_nats::jetstream::new(client);
    let public = fogblast_bus::public_stream(&args.nats_stream);
    let stream = jetstream.get_stream(&public).await.with_context(|| format!("stream {public}"))?;
    let filter =
        if args.tournaments { tournament_events::filter(encoding) } else { public_events::filter(encoding, variant) };
    let filter_subject = format!("{}{filter}", args.nats_subject_prefix);
    let consumer = stream
        .create_consumer(OrderedConfig { filter_subject, deliver_policy, ..Default::default() })
        .await
        .context("creating a consumer")?;
    let mut messages = consumer.messages().await.context("reading the stream")?;
    let mut printed = 0;
    let mut out = std::io::stdout().lock();
    while args.count.is_none_or(|count| printed < count) {
        let Some(message) = messages.next().await else { break };
        let message = message.context("reading the stream")?;
        let sequence = message.info().map(|info| info.stream_sequence).unwrap_or_default();
        let line = match encoding {
            Encoding::Json => String::from_utf8_lossy(&message.payload).into_owned(),
            Encoding::Protobuf if args.tournaments => match TournamentEvent::decode(message.payload.as_ref()) {
                Ok(event) => describe_tournament(&event, sequence),
                Err(error) => format!("#{sequence} unreadable event: {error}"),
            },
            Encoding::Protobuf => match GameEvent::decode(message.payload.as_ref()) {
                Ok(event) => describe(&event, sequence),
                Err(error) => format!("#{sequence} unreadable event: {error}"),
            },
        };
        writeln!(out, "{line}")?;
        out.flush()?;
        printed += 1;
    }
    Ok(())
}

fn time_of(at_ms: u64) -> String {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(at_ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_default()
}

/// One line for a tournament's event: its sequence, time, kind, tournament
/// and the leaders.
fn describe_tournament(event: &TournamentEvent, sequence: u64) -> String {
    let name = event.info.as_ref().map_or("", |info| info.name.as_str());
    let kind = event.kind.as_ref().map_or("unknown", tournament_events::kind_token);
    let head = format!("#{sequence} {} tournament {kind} {} {name:?}", time_of(event.at_ms), event.tournament_id);
    let leaders = |top: &[fogblast_proto::events::TournamentStanding]| {
        top.iter().take(3).map(|l| format!("{}. {} {}", l.rank, l.name, l.score)).collect::<Vec<_>>().join(", ")
    };
    match &event.kind {
        Some(TournamentKind::Started(started)) => format!("{head} {} players", started.players),
        Some(TournamentKind::Standings(standings)) => format!("{head} {}", leaders(&standings.top)),
        Some(TournamentKind::Finished(finished)) => format!("{head} {}", leaders(&finished.top)),
        _ => head,
    }
}

/// One line for an event: its sequence, time, variant, kind, game and what happened.
fn describe(event: &GameEvent, sequence: u64) -> String {
    let at = time_of(event.at_ms);
    let head = format!(
        "#{sequence} {at} {} {} {} v{}",
        public_events::variant_token(event.variant()),
        event.kind.as_ref().map_or("unknown", public_events::kind_token),
        event.game_id,
        event.version
    );
    let name = |p: &Option<fogblast_proto::events::PublicPlayer>| match p {
        Some(p) if p.computer => "the computer".to_owned(),
        Some(p) => p.name.clone(),
        None => "(free seat)".to_owned(),
    };
    let tail = match &event.kind {
        Some(Kind::Created(c)) => {
            format!("{} vs {}{}", name(&c.white), name(&c.black), if c.rated { ", rated" } else { "" })
        }
        Some(Kind::Started(s)) => format!("{} vs {}", name(&s.white), name(&s.black)),
        Some(Kind::Moved(m)) => {
            let uci = m.uci.clone().unwrap_or_else(|| "(hidden)".to_owned());
            let exploded =
                if m.exploded.is_empty() { String::new() } else { format!(" exploded {}", m.exploded.join(" ")) };
            format!("ply {} {uci}{exploded}", m.ply)
        }
        Some(Kind::TakenBack(t)) => format!("back to ply {}", t.ply),
        Some(Kind::Finished(f)) => {
            format!("{} by {} after {} moves", f.result, public_events::reason_name(f.reason()), f.moves.len())
        }
        None => String::new(),
    };
    format!("{head} {tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_reads_a_time_or_a_span_back_from_now() {
        let now = OffsetDateTime::parse("2026-12-01T18:00:00Z", &Rfc3339).unwrap();
        assert_eq!(start_time("15m", now).unwrap(), OffsetDateTime::parse("2026-12-01T17:45:00Z", &Rfc3339).unwrap());
        assert_eq!(start_time("2d", now).unwrap(), OffsetDateTime::parse("2026-11-29T18:00:00Z", &Rfc3339).unwrap());
        assert_eq!(start_time("2026-12-01T10:00:00Z", now).unwrap().hour(), 10);
        assert!(start_time("soon", now).is_err() && start_time("5y", now).is_err());
    }
}

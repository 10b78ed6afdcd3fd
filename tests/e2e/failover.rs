//! Failover as players feel it: a game shard killed outright (SIGKILL, so
//! it says nothing to anyone) while a dozen games are under way on three
//! shards. The shards run a 3 s lease, the default, so a game that moves
//! again within a second did not wait for the dead shard's lease: its
//! peers saw its port refuse connections and dropped the lease at once.
//! The time measured is the player's: from the kill to the mover's
//! acknowledgement of a move sent right after it.
//!
//! A shard frozen with SIGSTOP keeps its port, so it is left to its lease:
//! its games must move again within the lease plus a second, the movers
//! are not charged for the freeze, and when it wakes it has fenced itself
//! and rejoins without a stale write.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fogblast_proto::ids::{GameId, ShardId};
use fogblast_routing::{placement, Member};
use fogblast_rules::{Variant, WinReason};

use crate::support::{find_line, move_frame, play, start_game, start_game_with_clock, strings, Client, Cluster};

const GAMES: usize = 12;
const SHARDS: usize = 3;
/// Every game under way has ten minutes a side.
const CLOCK_MS: u32 = 600_000;

/// How a move resumed after a fault: when it was acknowledged, and how much
/// more the mover was charged than the time it took to move.
struct Resumed {
    took: Duration,
    overcharged: Duration,
}

/// Games under way on three shards, the busiest shard's index and how
/// many of the games it owns.
struct UnderWay {
    cluster: Cluster,
    line: crate::support::Line,
    games: Vec<(String, Client, Client)>,
    /// When each white player saw black's first move: its clock runs since.
    turn_seen: Vec<Instant>,
    members: Vec<Member>,
}

impl UnderWay {
    async fn start(test: &str, lease_ms: u64) -> UnderWay {
        let mut cluster = Cluster::start(test, 0, 0);
        for i in 0..SHARDS {
            let shard = cluster.spawn_shard_with_lease(&format!("shard-{i}"), lease_ms);
            cluster.shards.push(shard);
        }
        for i in 0..2 {
            let gateway = cluster.spawn_gateway(&format!("gateway-{i}"));
            cluster.gateways.push(gateway);
        }
        let line = find_line(Variant::Atomic, WinReason::KingExploded, 12, 60);
        let mut games = Vec::new();
        let mut turn_seen = Vec::new();
        for i in 0..GAMES {
            let mut white = Client::join(&format!("white{i}"), cluster.gateway(i % 2), None).await;
            let mut black = Client::join(&format!("black{i}"), cluster.gateway(1 - i % 2), None).await;
            let game = start_game_with_clock(&mut white, &mut black, "atomic", Some((CLOCK_MS, 0))).await;
            play(&mut white, &mut black, &game, &line.moves, 0, 2).await;
            turn_seen.push(Instant::now());
            games.push((game, white, black));
        }
        let members = (0..SHARDS)
            .map(|i| Member {
                shard: ShardId::parse(&cluster.shard_id(&format!("shard-{i}"))).unwrap(),
                addr: String::new(),
                epoch: 0,
            })
            .collect();
        UnderWay { cluster, line, games, turn_seen, members }
    }

    /// Where a game lives, by the placement every process computes.
    fn owner(&self, game: &str) -> usize {
        owner_among(&self.members, game)
    }

    /// The shard owning the most games.
    fn busiest(&self) -> usize {
        (0..SHARDS).max_by_key(|&s| self.games.iter().filter(|(g, _, _)| self.owner(g) == s).count()).unwrap()
    }

    /// Every white player sends ply 2 at once; for the games on `shard`,
    /// sorted by the time from `since` to the acknowledgement, how each
    /// resumed.
    async fn resume(&mut self, shard: usize, since: Instant) -> Vec<Resumed> {
        let members = self.members.clone();
        let uci = self.line.moves[2].clone();
        let moves = self.games.iter_mut().zip(&self.turn_seen).map(|((game, white, _), &turn_seen)| {
            let uci = uci.clone();
            let on_shard = owner_among(&members, game) == shard;
            async move {
                let sent = Instant::now();
                white.send(move_frame(game, &uci, 2)).await;
                let ack = white.expect_move(2).await;
                assert_eq!(ack["uci"], uci.as_str());
                let took = since.elapsed();
                let charged = Duration::from_millis(u64::from(CLOCK_MS) - ack["clock"]["white_ms"].as_u64().unwrap());
                (Resumed { took, overcharged: charged.saturating_sub(sent - turn_seen) }, on_shard)
            }
        });
        let mut resumed: Vec<Resumed> =
            futures::future::join_all(moves).await.into_iter().filter(|r| r.1).map(|r| r.0).collect();
        resumed.sort_by_key(|r| r.took);
        resumed
    }

    /// The games go on to their ends with every move once.
    async fn finish(&mut self) {
        let line = self.line.moves.clone();
        for (game, white, black) in &mut self.games {
            black.expect_move(2).await;
            play(white, black, game, &line, 3, line.len()).await;
            for client in [&mut *white, &mut *black] {
                let end = client.expect("end").await;
                assert_eq!(strings(&end["moves"]), line, "{}: {end}", client.name);
            }
        }
    }
}

fn owner_among(members: &[Member], game: &str) -> usize {
    let owner = placement::owner(&GameId::parse(game).unwrap(), members).unwrap();
    members.iter().position(|m| m.shard == owner.shard).unwrap()
}

#[tokio::test]
async fn a_killed_shard_s_games_move_again_within_a_second() {
    let mut under_way = UnderWay::start("failover-kill", 3_000).await;
    // The shard that registered last holds the newest epoch, so the others
    // must take a newer one before writing its games.
    let last = SHARDS - 1;
    let owns = |s: usize| under_way.games.iter().any(|(g, _, _)| under_way.owner(g) == s);
    let victim = if owns(last) { last } else { under_way.busiest() };
    under_way.cluster.shards[victim].kill();
    let resumed = under_way.resume(victim, Instant::now()).await;
    let times: Vec<Duration> = resumed.iter().map(|r| r.took).collect();
    assert!(!times.is_empty(), "the busiest shard owns a game");
    let (p50, max) = (times[times.len() / 2], *times.last().unwrap());
    let overcharged = resumed.iter().map(|r| r.overcharged).max().unwrap();
    println!(
        "kill -9 of 1 of {SHARDS} shards: {} of {GAMES} games moved again after p50 {p50:?}, max {max:?}; \
         movers charged at most {overcharged:?} more than their own time",
        times.len()
    );
    assert!(overcharged < Duration::from_millis(250), "the outage is not the movers' time: {overcharged:?}");
    assert!(max < Duration::from_secs(1), "every game moves again within a second: {times:?}");
    assert!(p50 < Duration::from_millis(500), "most within half a second: {times:?}");
    under_way.finish().await;
    let cluster = &under_way.cluster;
    assert!(!cluster.shards[victim].is_running());
    for (i, shard) in cluster.shards.iter().enumerate() {
        if i != victim {
            shard.assert_healthy();
            let logs = shard.logs();
            assert!(!logs.contains("game carries a newer epoch"), "no takeover's first commit was refused:\n{logs}");
        }
    }
}

#[tokio::test]
async fn a_frozen_shard_s_games_move_again_within_its_lease_and_a_second() {
    const LEASE: Duration = Duration::from_millis(1_500);
    let mut under_way = UnderWay::start("failover-freeze", LEASE.as_millis() as u64).await;
    let victim = under_way.busiest();
    under_way.cluster.shards[victim].freeze();
    let resumed = under_way.resume(victim, Instant::now()).await;
    let times: Vec<Duration> = resumed.iter().map(|r| r.took).collect();
    assert!(!times.is_empty(), "the busiest shard owns a game");
    let (p50, max) = (times[times.len() / 2], *times.last().unwrap());
    let overcharged = resumed.iter().map(|r| r.overcharged).max().unwrap();
    println!(
        "SIGSTOP of 1 of {SHARDS} shards, lease {LEASE:?}: {} of {GAMES} games moved again after p50 {p50:?}, \
         max {max:?}; movers charged at most {overcharged:?} more than their own time",
        times.len()
    );
    assert!(max < LEASE + Duration::from_secs(1), "every game moves within the lease and a second: {times:?}");
    assert!(times[0] > LEASE / 2, "the frozen shard's games waited for its lease: {times:?}");
    assert!(overcharged < Duration::from_millis(250), "the freeze is not the movers' time: {overcharged:?}");
    // Woken, it finds its lease gone, serves nothing stale and rejoins.
    under_way.cluster.shards[victim].thaw();
    under_way.finish().await;
    for shard in &under_way.cluster.shards {
        shard.assert_healthy();
    }
}

#[tokio::test]
async fn games_made_while_shards_start_up_are_never_stuck() {
    // The shards one after another, games made the moment each is up (the
    // gateways are ready once the first is): a shard that registered
    // before the last one has an older view of membership for a moment.
    let mut cluster = Cluster::start("failover-startup", 0, 0);
    let line = find_line(Variant::Atomic, WinReason::KingExploded, 12, 60);
    let mut slowest = Duration::ZERO;
    for i in 0..SHARDS {
        let shard = cluster.spawn_shard_with_lease(&format!("shard-{i}"), 3_000);
        cluster.shards.push(shard);
        if i == 0 {
            for g in 0..2 {
                let gateway = cluster.spawn_gateway(&format!("gateway-{g}"));
                cluster.gateways.push(gateway);
            }
        }
        let games = (0..4).map(|g| {
            let (gw_white, gw_black) = (cluster.gateway(g % 2), cluster.gateway(1 - g % 2));
            let line = line.moves.clone();
            async move {
                let started = Instant::now();
                let mut white = Client::join(&format!("white{i}-{g}"), gw_white, None).await;
                let mut black = Client::join(&format!("black{i}-{g}"), gw_black, None).await;
                let game = start_game(&mut white, &mut black, "atomic").await;
                white
                    .expect_where("seated", |f| f["t"] == "seated" || (f["t"] == "state" && f["status"] == "playing"))
                    .await;
                play(&mut white, &mut black, &game, &line, 0, 4).await;
                started.elapsed()
            }
        });
        for took in futures::future::join_all(games).await {
            slowest = slowest.max(took);
        }
    }
    println!(
        "{} games made while {SHARDS} shards started: the slowest was seated and played 4 plies in {slowest:?}",
        4 * SHARDS
    );
    assert!(slowest < Duration::from_secs(3), "no game waited on a stale view: {slowest:?}");
}

/// Games that keep moving, 120 ms between moves, while `busy` holds, and
/// then play to their ends; each player task returns its game's slowest
/// acknowledgement.
fn keep_playing(
    games: Vec<(String, Client, Client)>,
    line: &[String],
    busy: &Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<Duration>> {
    let players = games.into_iter().map(|(game, mut white, mut black)| {
        let line = line.to_vec();
        let busy = busy.clone();
        tokio::spawn(async move {
            let mut slowest = Duration::ZERO;
            for (ply, uci) in line.iter().enumerate() {
                let (mover, other) = if ply % 2 == 0 { (&mut white, &mut black) } else { (&mut black, &mut white) };
                let sent = Instant::now();
                mover.send(move_frame(&game, uci, ply)).await;
                let ack = mover.expect_move(ply).await;
                assert_eq!(ack["uci"], uci.as_str());
                slowest = slowest.max(sent.elapsed());
                other.expect_move(ply).await;
                if busy.load(Ordering::Relaxed) {
                    tokio::time::sleep(Duration::from_millis(120)).await;
                }
            }
            for client in [&mut white, &mut black] {
                let end = client.expect("end").await;
                assert_eq!(strings(&end["moves"]), line, "{}: {end}", client.name);
            }
            slowest
        })
    });
    players.collect()
}

/// A cluster of `shards` shards and two gateways with `GAMES` games begun
/// (none moved yet), and a line long enough to outlast what follows.
async fn games_on(test: &str, shards: usize) -> (Cluster, Vec<(String, Client, Client)>, Vec<String>) {
    let mut cluster = Cluster::start(test, 0, 0);
    for i in 0..shards {
        let shard = cluster.spawn_shard_with_lease(&format!("shard-{i}"), 3_000);
        cluster.shards.push(shard);
    }
    for i in 0..2 {
        let gateway = cluster.spawn_gateway(&format!("gateway-{i}"));
        cluster.gateways.push(gateway);
    }
    let line = find_line(Variant::Atomic, WinReason::KingExploded, 70, 90);
    let mut games = Vec::new();
    for i in 0..GAMES {
        games.push(new_game(&cluster, i).await);
    }
    (cluster, games, line.moves)
}

/// Game `i`: its players on different gateways.
async fn new_game(cluster: &Cluster, i: usize) -> (String, Client, Client) {
    let mut white = Client::join(&format!("white{i}"), cluster.gateway(i % 2), None).await;
    let mut black = Client::join(&format!("black{i}"), cluster.gateway(1 - i % 2), None).await;
    let game = start_game(&mut white, &mut black, "atomic").await;
    (game, white, black)
}

async fn slowest_of(players: Vec<tokio::task::JoinHandle<Duration>>) -> Duration {
    let mut slowest = Duration::ZERO;
    for player in players {
        slowest = slowest.max(player.await.unwrap());
    }
    slowest
}

fn assert_no_takeover_refused(cluster: &Cluster) {
    for shard in cluster.shards.iter().filter(|s| s.is_running()) {
        shard.assert_healthy();
        let logs = shard.logs();
        assert!(!logs.contains("game carries a newer epoch"), "no takeover's first commit was refused:\n{logs}");
    }
}

/// A rolling restart as Kubernetes does one: each shard in turn gets
/// SIGTERM, exits, and comes back under the same id two seconds later (a
/// replaced pod), while every game keeps moving. No move waits a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_restart_of_every_shard_stalls_no_game_for_a_second() {
    let (cluster, games, line) = games_on("failover-rolling", SHARDS).await;
    let restarting = Arc::new(AtomicBool::new(true));
    let players = keep_playing(games, &line, &restarting);
    let cluster = tokio::task::spawn_blocking(move || {
        let mut cluster = cluster;
        for i in 0..SHARDS {
            cluster.shards[i].terminate();
            assert!(cluster.shards[i].wait_exit(Duration::from_secs(10)).is_some(), "shard-{i} exits within its drain");
            std::thread::sleep(Duration::from_secs(2));
            cluster.shards[i] = cluster.spawn_shard_with_lease(&format!("shard-{i}"), 3_000);
        }
        cluster
    })
    .await
    .unwrap();
    restarting.store(false, Ordering::Relaxed);
    let slowest = slowest_of(players).await;
    println!("rolling restart of {SHARDS} shards (2 s gaps) under {GAMES} games: the slowest acknowledgement took {slowest:?}");
    assert!(slowest < Duration::from_secs(1), "no move waited a second: {slowest:?}");
    assert_no_takeover_refused(&cluster);
}

/// Scaling out and back in under live games: a third shard joins two and
/// takes its share of their games, then one of the first two leaves for
/// good (SIGTERM, never replaced). No move waits a second, every game
/// ends with every move once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adding_and_removing_a_shard_stalls_no_game_for_a_second() {
    let (cluster, mut games, line) = games_on("failover-scale", 2).await;
    // The third shard takes games from both, and the first shard's games
    // move when it leaves: the faults reach games in play.
    let ids: Vec<ShardId> = (0..3).map(|i| ShardId::parse(&cluster.shard_id(&format!("shard-{i}"))).unwrap()).collect();
    let members = |shards: &[usize]| -> Vec<Member> {
        shards.iter().map(|&i| Member { shard: ids[i].clone(), addr: String::new(), epoch: 0 }).collect()
    };
    let (three, last_two) = (members(&[0, 1, 2]), members(&[1, 2]));
    let owner = |members: &[Member], game: &str| members[owner_among(members, game)].shard.clone();
    // Game ids are random: a few more games when none would move.
    let covered = |games: &[(String, Client, Client)]| {
        [&ids[2], &ids[0]].iter().all(|shard| games.iter().any(|(g, _, _)| owner(&three, g) == **shard))
    };
    while !covered(&games) && games.len() < 4 * GAMES {
        games.push(new_game(&cluster, games.len()).await);
    }
    assert!(games.iter().any(|(g, _, _)| owner(&three, g) == ids[2]), "the added shard takes some games");
    assert!(games.iter().any(|(g, _, _)| owner(&three, g) == ids[0]), "the shard that leaves has games");
    assert!(games.iter().all(|(g, _, _)| owner(&last_two, g) != ids[0]));
    let scaling = Arc::new(AtomicBool::new(true));
    let players = keep_playing(games, &line, &scaling);
    let cluster = tokio::task::spawn_blocking(move || {
        let mut cluster = cluster;
        std::thread::sleep(Duration::from_millis(500));
        let added = cluster.spawn_shard_with_lease("shard-2", 3_000);
        cluster.shards.push(added);
        std::thread::sleep(Duration::from_secs(2));
        cluster.shards[0].terminate();
        assert!(cluster.shards[0].wait_exit(Duration::from_secs(10)).is_some(), "shard-0 exits within its drain");
        std::thread::sleep(Duration::from_secs(2));
        cluster
    })
    .await
    .unwrap();
    scaling.store(false, Ordering::Relaxed);
    let slowest = slowest_of(players).await;
    println!("2 shards scaled to 3 and back to 2 under {GAMES} games: the slowest acknowledgement took {slowest:?}");
    assert!(slowest < Duration::from_secs(1), "no move waited a second: {slowest:?}");
    assert_no_takeover_refused(&cluster);
}

//! Failover as players feel it: a game shard killed outright (SIGKILL, so
//! it says nothing to anyone) while a dozen games are under way on three
//! shards. The shards run a 3 s lease, the default, so a game that moves
//! again within a second did not wait for the dead shard's lease: its
//! peers saw its port refuse connections and dropped the lease at once.
//! The time measured is the player's: from the kill to the mover's
//! acknowledgement of a move sent right after it.

use std::time::{Duration, Instant};

use fogblast_proto::ids::{GameId, ShardId};
use fogblast_routing::{placement, Member};
use fogblast_rules::{Variant, WinReason};

use crate::support::{find_line, move_frame, play, start_game, strings, Client, Cluster};

const GAMES: usize = 12;
const SHARDS: usize = 3;

#[tokio::test]
async fn a_killed_shard_s_games_move_again_within_a_second() {
    let mut cluster = Cluster::start("failover-resume", 0, 0);
    for i in 0..SHARDS {
        let shard = cluster.spawn_shard_with_lease(&format!("shard-{i}"), 3_000);
        cluster.shards.push(shard);
    }
    for i in 0..2 {
        let gateway = cluster.spawn_gateway(&format!("gateway-{i}"));
        cluster.gateways.push(gateway);
    }
    let line = find_line(Variant::Atomic, WinReason::KingExploded, 12, 60);
    let mut games = Vec::new();
    for i in 0..GAMES {
        let mut white = Client::join(&format!("white{i}"), cluster.gateway(i % 2), None).await;
        let mut black = Client::join(&format!("black{i}"), cluster.gateway(1 - i % 2), None).await;
        let game = start_game(&mut white, &mut black, "atomic").await;
        play(&mut white, &mut black, &game, &line.moves, 0, 2).await;
        games.push((game, white, black));
    }

    // Where each game lives, by the placement every process computes.
    let members: Vec<Member> = (0..SHARDS)
        .map(|i| Member {
            shard: ShardId::parse(&cluster.shard_id(&format!("shard-{i}"))).unwrap(),
            addr: String::new(),
            epoch: 0,
        })
        .collect();
    let owner = |game: &str| {
        let owner = placement::owner(&GameId::parse(game).unwrap(), &members).unwrap();
        members.iter().position(|m| m.shard == owner.shard).unwrap()
    };
    let victim = (0..SHARDS).max_by_key(|&s| games.iter().filter(|(g, _, _)| owner(g) == s).count()).unwrap();
    let affected = games.iter().filter(|(g, _, _)| owner(g) == victim).count();
    assert!(affected > 0, "the busiest shard owns a game");

    cluster.shards[victim].kill();
    let killed = Instant::now();
    let moves = games.into_iter().map(|(game, mut white, black)| {
        let uci = line.moves[2].clone();
        let on_victim = owner(&game) == victim;
        async move {
            white.send(move_frame(&game, &uci, 2)).await;
            let ack = white.expect_move(2).await;
            assert_eq!(ack["uci"], uci.as_str());
            (killed.elapsed(), on_victim, game, white, black)
        }
    });
    let mut resumed = futures::future::join_all(moves).await;
    let mut times: Vec<Duration> = resumed.iter().filter(|r| r.1).map(|r| r.0).collect();
    times.sort();
    let p50 = times[times.len() / 2];
    let max = *times.last().unwrap();
    println!("kill -9 of 1 of {SHARDS} shards: {affected} of {GAMES} games moved again after p50 {p50:?}, max {max:?}");
    assert!(max < Duration::from_secs(1), "every game moves again within a second: {times:?}");
    assert!(p50 < Duration::from_millis(500), "most within half a second: {times:?}");

    // The games go on to their ends with every move once.
    for (_, _, game, white, black) in &mut resumed {
        black.expect_move(2).await;
        play(white, black, game, &line.moves, 3, line.moves.len()).await;
        for client in [&mut *white, &mut *black] {
            let end = client.expect("end").await;
            assert_eq!(strings(&end["moves"]), line.moves, "{}: {end}", client.name);
        }
    }
    assert!(!cluster.shards[victim].is_running());
    for (i, shard) in cluster.shards.iter().enumerate() {
        if i != victim {
            shard.assert_healthy();
        }
    }
}

//! Pairing racing its players, on real Redis and NATS with two matchmaker
//! replicas and a real game shard: seekers cancel, disconnect or seek in
//! another pool while waves run every few tens of milliseconds. A seek the
//! matchmaker said it withdrew is never paired; a withdrawal it called too
//! late always ends in exactly one game; nobody is paired with themself or
//! sits in a game they were not told of. And when a replica dies, its
//! pools move to the other within a lease.

mod support;

use std::collections::HashMap;
use std::time::Duration;

use fogblast_proto::game::{ClockSettings, Variant};
use fogblast_proto::matchmaker::matchmaker_client::MatchmakerClient;
use fogblast_proto::matchmaker::{CancelSeekRequest, PlayerLeftRequest, SeekRequest};
use fogblast_proto::notices::PLAYER_SUBJECT_PREFIX;
use futures::StreamExt;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use support::{eventually, quick_config_with, Backend, Ear, Process};
use tonic::transport::Channel;

/// The two pools of this test, by their `rated` flag.
fn seek(player: &str, rated: bool, rating: u32) -> SeekRequest {
    SeekRequest {
        player_id: player.to_owned(),
        name: player.to_owned(),
        variant: Variant::Atomic as i32,
        clock: Some(ClockSettings { initial_ms: 180_000, increment_ms: 2_000 }),
        rated,
        range: None,
        rating: Some(rating),
    }
}

/// One seek of a player and how it ended, as the matchmaker answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ended {
    /// Cancelled, withdrawn on leaving, or replaced: must never be paired.
    Withdrawn,
    /// The withdrawal came too late: must be paired exactly once.
    TooLate,
    /// Nothing asked yet.
    Open,
}

#[derive(Debug, Default)]
struct Story {
    /// (rated pool?, how the seek ended)
    seeks: Vec<(bool, Ended)>,
}

async fn withdraw(client: &mut MatchmakerClient<Channel>, player: &str, leave: bool) -> Ended {
    let cancelled = if leave {
        client
            .player_left(PlayerLeftRequest { player_id: player.to_owned() })
            .await
            .unwrap()
            .into_inner()
            .seek_cancelled
    } else {
        client.cancel_seek(CancelSeekRequest { player_id: player.to_owned() }).await.unwrap().into_inner().cancelled
    };
    if cancelled {
        Ended::Withdrawn
    } else {
        Ended::TooLate
    }
}

/// One player's random life: seek, maybe wait, then cancel, leave, move to
/// the other pool, or just wait to be paired.
async fn live(mut clients: Vec<MatchmakerClient<Channel>>, player: String, seed: u64) -> Story {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut story = Story::default();
    let rating = rng.random_range(1000..2000);
    let mut rated = rng.random_bool(0.5);
    let mut client = clients.swap_remove(rng.random_range(0..clients.len()));
    let mut episodes = 0;
    loop {
        episodes += 1;
        client.seek(seek(&player, rated, rating)).await.unwrap();
        story.seeks.push((rated, Ended::Open));
        tokio::time::sleep(Duration::from_millis(rng.random_range(0..120))).await;
        let action = rng.random_range(0..10);
        let ended = match action {
            0..=2 => withdraw(&mut client, &player, false).await,
            3..=4 => withdraw(&mut client, &player, true).await,
            5..=6 => {
                // Seek in the other pool instead.
                rated = !rated;
                let moved = client.seek(seek(&player, rated, rating)).await.unwrap().into_inner();
                let previous = if moved.replaced { Ended::Withdrawn } else { Ended::TooLate };
                story.seeks.last_mut().unwrap().1 = previous;
                story.seeks.push((rated, Ended::Open));
                Ended::Open
            }
            _ => Ended::Open,
        };
        story.seeks.last_mut().unwrap().1 = ended;
        // Someone whose seek was withdrawn sometimes seeks again.
        if ended == Ended::Withdrawn && episodes < 3 && rng.random_bool(0.3) {
            continue;
        }
        return story;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn withdrawals_racing_waves_are_never_paired_and_late_ones_always_are() {
    let backend = Backend::new("races");
    let config = quick_config_with(|s| {
        s.tick_ms = 10;
        s.wave_ms = 40;
        s.wave_players = 6;
        s.window_base = 3_000;
        s.window_max = 3_000;
    });
    let shard = Process::game_shard(&backend, "shard-a").await;
    let replicas = [
        Process::matchmaker(&backend, "mm-a", config.clone()).await,
        Process::matchmaker(&backend, "mm-b", config.clone()).await,
    ];
    let bus = backend.bus().await;
    let ear = Ear::listen(&bus, &[&format!("{PLAYER_SUBJECT_PREFIX}*")]).await;
    let clients = vec![replicas[0].client().await, replicas[1].client().await];

    let players: Vec<String> = (0..400).map(|i| format!("racer{i:03}")).collect();
    let stories: HashMap<String, Story> = futures::stream::iter(players.clone().into_iter().enumerate())
        .map(|(i, player)| {
            let clients = clients.clone();
            async move {
                tokio::time::sleep(Duration::from_millis((i % 50) as u64 * 3)).await;
                let story = live(clients, player.clone(), 7_000 + i as u64).await;
                (player, story)
            }
        })
        .buffer_unordered(400)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect();

    // Let the last waves run, then withdraw whatever is still open.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut stories = stories;
    let mut client = clients[0].clone();
    for (player, story) in stories.iter_mut() {
        if let Some(last) = story.seeks.last_mut() {
            if last.1 == Ended::Open {
                last.1 = withdraw(&mut client, player, false).await;
            }
        }
    }
    let expected_frames: usize =
        stories.values().map(|s| s.seeks.iter().filter(|(_, e)| *e == Ended::TooLate).count()).sum();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while ear.paired_count() < expected_frames && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;

    let paired = ear.paired();
    eprintln!(
        "heard {} paired frames, expected {expected_frames}, {} games stored",
        ear.paired_count(),
        backend.games().await.len()
    );
    for (player, story) in &stories {
        let owed = story.seeks.iter().filter(|(_, e)| *e == Ended::TooLate).count();
        let told = paired.get(player).map_or(0, Vec::len);
        if owed != told {
            let mentions: Vec<String> = ear
                .all()
                .iter()
                .filter(|h| format!("{:?}", h.notice).contains(player.as_str()))
                .map(|h| format!("{} {:?}", h.subject, h.notice))
                .collect();
            eprintln!("{player}: owed {owed}, told {told}: {story:?}; mentioned in {mentions:?}");
        }
    }
    let mut withdrawn = 0;
    let mut late = 0;
    let mut games_of: HashMap<String, usize> = HashMap::new();
    for (player, story) in &stories {
        for rated in [false, true] {
            let told = paired
                .get(player)
                .map_or(0, |frames| frames.iter().filter(|h| h.paired().unwrap().rated == rated).count());
            let owed = story.seeks.iter().filter(|(r, e)| *r == rated && *e == Ended::TooLate).count();
            assert_eq!(
                told,
                owed,
                "{player} in the {} pool: told {told} times, owed {owed}: {story:?}",
                if rated { "rated" } else { "casual" }
            );
        }
        withdrawn += story.seeks.iter().filter(|(_, e)| *e == Ended::Withdrawn).count();
        late += story.seeks.iter().filter(|(_, e)| *e == Ended::TooLate).count();
        for heard in paired.get(player).into_iter().flatten() {
            let opponent = heard.paired().unwrap().opponent.as_ref().unwrap();
            assert_ne!(opponent.player_id, player.as_str(), "{player} paired with themself");
        }
        games_of.insert(player.clone(), paired.get(player).map_or(0, Vec::len));
    }
    eprintln!("{withdrawn} seeks withdrawn, {late} paired after a late withdrawal");
    // How many withdrawals land before or after their wave depends on the
    // machine's load; a few of each already exercise both sides of the race.
    assert!(withdrawn > 10 && late > 10, "the races did not happen: {withdrawn} withdrawn, {late} late");

    // The games in the store are exactly the ones players were told of.
    let stored = backend.games().await;
    let mut seated: HashMap<String, usize> = HashMap::new();
    for (_, white, black) in &stored {
        assert_ne!(white, black);
        *seated.entry(white.clone()).or_default() += 1;
        *seated.entry(black.clone()).or_default() += 1;
    }
    assert_eq!(stored.len() * 2, expected_frames, "games made without telling anyone, or the reverse");
    for (player, told) in &games_of {
        assert_eq!(seated.get(player).copied().unwrap_or(0), *told, "{player} sits in games they were not told of");
    }

    for replica in replicas {
        replica.stop().await;
    }
    shard.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_replicas_pools_move_to_the_other() {
    let backend = Backend::new("failover");
    // The first replica accepts no rating gap at all: it holds the pool
    // and runs waves, but only its successor can pair these seekers.
    let config = quick_config_with(|s| s.lease_ms = 1_000);
    let narrow = quick_config_with(|s| {
        s.lease_ms = 1_000;
        (s.window_base, s.window_per_s, s.window_max) = (0, 0, 0);
    });
    let shard = Process::game_shard(&backend, "shard-a").await;
    let first = Process::matchmaker(&backend, "mm-a", narrow).await;
    let mut client = first.client().await;
    let bus = backend.bus().await;
    let ear = Ear::listen(&bus, &[&format!("{PLAYER_SUBJECT_PREFIX}*")]).await;
    for i in 0..10 {
        client.seek(seek(&format!("waiter{i}"), false, 1500 + i)).await.unwrap();
    }
    let store = backend.match_store().await;
    // The first replica holds the pool and has run waves, pairing nobody.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let pool = fogblast_matchmaker::PoolKey::new(
        Variant::Atomic,
        Some(&ClockSettings { initial_ms: 180_000, increment_ms: 2_000 }),
        false,
    )
    .name();
    assert!(store.acquire_lease(&pool, "intruder", Duration::from_secs(1)).await.unwrap().is_none());
    assert!(first.metric("fogblast_matchmaker_waves_total").await >= 1.0);
    assert_eq!(store.pool_status(&pool).await.unwrap().seeks, 10);
    drop(first); // killed: its lease is left to run out

    let second = Process::matchmaker(&backend, "mm-b", config).await;
    eventually(Duration::from_secs(10), || async { ear.paired_count() >= 10 }).await;
    assert_eq!(ear.paired().len(), 10);
    assert_eq!(backend.games().await.len(), 5);
    second.stop().await;
    shard.stop().await;
}

//! Quick pairing end to end on real Redis and NATS with two matchmaker
//! replicas and a real game shard: a thousand seekers with random ratings
//! and clocks are all paired exactly once, never with themselves, within
//! the rating window their wait allowed; both players of each pairing hear
//! `paired` on `player.<id>` with opposite colours, and the game exists
//! with both seated. Bad seeks are refused with an `ErrorDetail`.

mod support;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use fogblast_matchmaker::pairing::window;
use fogblast_matchmaker::MatchmakerConfig;
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::{ClockSettings, Color, GetStateRequest, Status, Variant};
use fogblast_proto::matchmaker::{RatingRange, SeekRequest};
use fogblast_proto::notices::PLAYER_SUBJECT_PREFIX;
use futures::StreamExt;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use support::{eventually, quick_config, quick_config_with, Backend, Ear, Process};

const PLAYERS: usize = 1000;

/// A pool: variant, clock (initial, increment), rated.
type Pool = (Variant, Option<(u32, u32)>, bool);
/// A seeker: player, rating, pool.
type Seeker = (String, u32, Pool);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_seekers_pair_exactly_once_within_their_windows() {
    let backend = Backend::new("thousand");
    let config = quick_config_with(|s| (s.window_base, s.window_per_s, s.window_max) = (100, 300, 2_000));
    let params = config.settings.params();
    let shard = Process::game_shard(&backend, "shard-a").await;
    let replicas = [
        Process::matchmaker(&backend, "mm-a", config.clone()).await,
        Process::matchmaker(&backend, "mm-b", config.clone()).await,
    ];
    let bus = backend.bus().await;
    let ear = Ear::listen(&bus, &[&format!("{PLAYER_SUBJECT_PREFIX}*")]).await;

    // Sixteen pools; every pool gets an even number of seekers.
    let clocks = [None, Some((60_000, 0)), Some((180_000, 2_000)), Some((600_000, 5_000))];
    let variants = [Variant::Standard, Variant::Atomic];
    let mut rng = StdRng::seed_from_u64(2024);
    let mut pools: Vec<Pool> = (0..PLAYERS / 2)
        .map(|_| (variants[rng.random_range(0..2)], clocks[rng.random_range(0..clocks.len())], rng.random_bool(0.5)))
        .flat_map(|pool| [pool, pool])
        .collect();
    pools.shuffle(&mut rng);
    let seekers: Vec<Seeker> = pools
        .into_iter()
        .enumerate()
        .map(|(i, pool)| (format!("seeker{i:04}"), rng.random_range(800..2800), pool))
        .collect();

    let clients = [replicas[0].client().await, replicas[1].client().await];
    let sent: HashMap<String, tokio::time::Instant> = futures::stream::iter(seekers.iter().enumerate())
        .map(|(i, (player, rating, (variant, clock, rated)))| {
            let mut client = clients[i % 2].clone();
            let request = SeekRequest {
                player_id: player.clone(),
                name: format!("n{i}"),
                variant: *variant as i32,
                clock: clock.map(|(initial_ms, increment_ms)| ClockSettings { initial_ms, increment_ms }),
                rated: *rated,
                range: None,
                rating: Some(*rating),
            };
            async move {
                let at = tokio::time::Instant::now();
                client.seek(request).await.expect("a good seek is accepted");
                (player.clone(), at)
            }
        })
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect();

    eventually(Duration::from_secs(40), || async { ear.paired_count() >= PLAYERS }).await;
    tokio::time::sleep(Duration::from_millis(300)).await;

    let paired = ear.paired();
    let by_player: HashMap<&str, &Seeker> = seekers.iter().map(|s| (s.0.as_str(), s)).collect();
    let doubles: Vec<_> = paired
        .iter()
        .filter(|(_, f)| f.len() > 1)
        .map(|(p, f)| (p.clone(), f.iter().map(|h| format!("{:?}", h.notice)).collect::<Vec<_>>()))
        .collect();
    assert!(doubles.is_empty(), "paired twice: {doubles:#?}");
    assert_eq!(paired.len(), PLAYERS, "every seeker is paired");
    let mut games: HashMap<String, Vec<(String, Color)>> = HashMap::new();
    for (player, notices) in &paired {
        assert_eq!(notices.len(), 1, "{player} was paired {} times", notices.len());
        let notice = notices[0].paired().unwrap();
        let opponent = notice.opponent.as_ref().unwrap().player_id.as_str();
        assert_ne!(opponent, player, "{player} was paired with themself");
        let (_, rating, (variant, clock, rated)) = by_player[player.as_str()];
        let (_, opponent_rating, opponent_pool) = by_player[opponent];
        assert_eq!(opponent_pool, &(*variant, *clock, *rated), "paired across pools");
        assert_eq!(notice.rated, *rated);
        assert_eq!(notice.rating, *rating);
        // The gap is within both windows, each as wide as the wait this
        // test saw (from before the seek was sent to the frame's arrival,
        // which holds the wait the matchmaker saw).
        let gap = rating.abs_diff(*opponent_rating);
        let waited = |who: &str| {
            let heard = paired[who][0].at;
            heard.duration_since(sent[who]).as_millis() as u64
        };
        let allowed = window(&params, waited(player)).min(window(&params, waited(opponent)));
        assert!(gap <= allowed, "{player} and {opponent}: gap {gap} over the window {allowed}");
        games.entry(notice.game_id.clone()).or_default().push((player.clone(), notice.color()));
    }
    assert_eq!(games.len(), PLAYERS / 2);
    for (game, seats) in &games {
        let colors: HashSet<Color> = seats.iter().map(|(_, c)| *c).collect();
        assert_eq!(colors, HashSet::from([Color::White, Color::Black]), "game {game}: {seats:?}");
    }

    // The shard holds exactly these games, each with both players seated
    // in the colours they were told; nobody sits in two.
    let stored = backend.games().await;
    assert_eq!(stored.len(), PLAYERS / 2, "no game beyond the pairings");
    let mut seated = HashSet::new();
    for (game, white, black) in &stored {
        let seats = &games[game];
        for (player, color) in seats {
            let expected = if *color == Color::White { white } else { black };
            assert_eq!(expected, player, "game {game}");
        }
        assert!(seated.insert(white.clone()) && seated.insert(black.clone()), "a player in two games");
    }
    let mut game_client = shard.game_client().await;
    for (game, seats) in games.iter().take(20) {
        let state = game_client
            .get_state(GetStateRequest { game_id: game.clone(), player_id: seats[0].0.clone() })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(state.status, Status::Playing as i32, "both seats taken");
    }

    // Both replicas paired pools, and no pool is left with a seek or a pairing.
    for replica in &replicas {
        assert!(replica.metric("fogblast_matchmaker_pairings_total").await > 0.0, "a replica never paired");
    }
    let store = backend.match_store().await;
    for (variant, clock, rated) in by_player.values().map(|s| s.2).collect::<HashSet<_>>() {
        let settings = clock.map(|(initial_ms, increment_ms)| ClockSettings { initial_ms, increment_ms });
        let pool = fogblast_matchmaker::PoolKey::new(variant, settings.as_ref(), rated).name();
        let status = store.pool_status(&pool).await.unwrap();
        assert_eq!((status.seeks, status.pending), (0, 0), "{pool}");
    }

    for replica in replicas {
        replica.stop().await;
    }
    shard.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_seeks_are_refused_with_a_code() {
    let backend = Backend::new("badseek");
    let replica = Process::matchmaker(&backend, "mm-a", quick_config()).await;
    let mut client = replica.client().await;
    let good = SeekRequest {
        player_id: "p1".into(),
        name: "p".into(),
        variant: Variant::Fog as i32,
        clock: Some(ClockSettings { initial_ms: 180_000, increment_ms: 0 }),
        rated: false,
        range: None,
        rating: None,
    };
    let cases = [
        SeekRequest { player_id: "not ok!".into(), ..good.clone() },
        SeekRequest { variant: 0, ..good.clone() },
        SeekRequest { variant: 42, ..good.clone() },
        SeekRequest { clock: Some(ClockSettings { initial_ms: 1_000, increment_ms: 0 }), ..good.clone() },
        SeekRequest { range: Some(RatingRange { min: 1800, max: 1200 }), ..good.clone() },
        SeekRequest { name: "x".repeat(31), ..good.clone() },
        SeekRequest { rating: Some(99_999), ..good.clone() },
    ];
    for case in cases {
        let status = client.seek(case.clone()).await.expect_err(&format!("{case:?} is refused"));
        assert_eq!(ServiceError::from_status(&status).code, ErrorCode::BadRequest, "{case:?}");
    }
    let placed = client.seek(good.clone()).await.unwrap().into_inner();
    assert_eq!((placed.rating, placed.existing, placed.replaced), (1500, false, false));
    assert_eq!(placed.pool, "fog-180000+0-casual");
    // The same seek again keeps the first; another pool replaces it.
    let again = client.seek(good.clone()).await.unwrap().into_inner();
    assert_eq!((again.seek_id.as_str(), again.existing), (placed.seek_id.as_str(), true));
    let other = client.seek(SeekRequest { rated: true, ..good }).await.unwrap().into_inner();
    assert!(other.replaced && !other.existing);
    assert!(
        client
            .cancel_seek(fogblast_proto::matchmaker::CancelSeekRequest { player_id: "p1".into() })
            .await
            .unwrap()
            .into_inner()
            .cancelled
    );
    let status = client
        .cancel_seek(fogblast_proto::matchmaker::CancelSeekRequest { player_id: "".into() })
        .await
        .expect_err("an empty player is refused");
    assert_eq!(ServiceError::from_status(&status).code, ErrorCode::BadRequest);
    replica.stop().await;
}

/// A rating service that knows one player.
#[derive(Debug, Default)]
struct OneRating;

#[tonic::async_trait]
impl fogblast_proto::rating::rating_server::Rating for OneRating {
    async fn get_profile(
        &self,
        request: tonic::Request<fogblast_proto::rating::ProfileRequest>,
    ) -> Result<tonic::Response<fogblast_proto::rating::Profile>, tonic::Status> {
        let player = request.into_inner().player_id;
        match player.as_str() {
            "ghost" => Err(tonic::Status::not_found("no such player")),
            "known" => Ok(tonic::Response::new(fogblast_proto::rating::Profile {
                player_id: player,
                ratings: vec![fogblast_proto::rating::VariantRating {
                    variant: Variant::Atomic as i32,
                    rating: 1834.4,
                    ..Default::default()
                }],
                ..Default::default()
            })),
            _ => Ok(tonic::Response::new(fogblast_proto::rating::Profile { player_id: player, ..Default::default() })),
        }
    }

    async fn get_leaderboard(
        &self,
        _: tonic::Request<fogblast_proto::rating::LeaderboardRequest>,
    ) -> Result<tonic::Response<fogblast_proto::rating::Leaderboard>, tonic::Status> {
        Err(tonic::Status::unimplemented("not here"))
    }

    async fn get_game(
        &self,
        _: tonic::Request<fogblast_proto::rating::GameRequest>,
    ) -> Result<tonic::Response<fogblast_proto::rating::ArchivedGame>, tonic::Status> {
        Err(tonic::Status::unimplemented("not here"))
    }

    async fn list_player_games(
        &self,
        _: tonic::Request<fogblast_proto::rating::PlayerGamesRequest>,
    ) -> Result<tonic::Response<fogblast_proto::rating::PlayerGames>, tonic::Status> {
        Err(tonic::Status::unimplemented("not here"))
    }

    async fn export_pgn(
        &self,
        _: tonic::Request<fogblast_proto::rating::GameRequest>,
    ) -> Result<tonic::Response<fogblast_proto::rating::Pgn>, tonic::Status> {
        Err(tonic::Status::unimplemented("not here"))
    }

    async fn request_analysis(
        &self,
        _: tonic::Request<fogblast_proto::rating::AnalysisRequest>,
    ) -> Result<tonic::Response<fogblast_proto::rating::GameAnalysis>, tonic::Status> {
        Err(tonic::Status::unimplemented("not here"))
    }

    async fn get_analysis(
        &self,
        _: tonic::Request<fogblast_proto::rating::GameRequest>,
    ) -> Result<tonic::Response<fogblast_proto::rating::GameAnalysis>, tonic::Status> {
        Err(tonic::Status::unimplemented("not here"))
    }

    async fn set_recovery(
        &self,
        _: tonic::Request<fogblast_proto::rating::SetRecoveryRequest>,
    ) -> Result<tonic::Response<fogblast_proto::rating::RecoveryIdentity>, tonic::Status> {
        Err(tonic::Status::unimplemented("not here"))
    }

    async fn redeem_recovery(
        &self,
        _: tonic::Request<fogblast_proto::rating::RedeemRecoveryRequest>,
    ) -> Result<tonic::Response<fogblast_proto::rating::RecoveryIdentity>, tonic::Status> {
        Err(tonic::Status::unimplemented("not here"))
    }

    async fn revoke_recovery(
        &self,
        _: tonic::Request<fogblast_proto::rating::RevokeRecoveryRequest>,
    ) -> Result<tonic::Response<fogblast_proto::rating::RevokeRecoveryResponse>, tonic::Status> {
        Err(tonic::Status::unimplemented("not here"))
    }

    async fn get_puzzle(
        &self,
        _: tonic::Request<fogblast_proto::rating::PuzzleRequest>,
    ) -> Result<tonic::Response<fogblast_proto::rating::PuzzleRecord>, tonic::Status> {
        Err(tonic::Status::unimplemented("not here"))
    }

    async fn get_daily_puzzle(
        &self,
        _: tonic::Request<fogblast_proto::rating::DailyPuzzleRequest>,
    ) -> Result<tonic::Response<fogblast_proto::rating::PuzzleRecord>, tonic::Status> {
        Err(tonic::Status::unimplemented("not here"))
    }

    async fn next_puzzle(
        &self,
        _: tonic::Request<fogblast_proto::rating::NextPuzzleRequest>,
    ) -> Result<tonic::Response<fogblast_proto::rating::PuzzleRecord>, tonic::Status> {
        Err(tonic::Status::unimplemented("not here"))
    }

    async fn record_puzzle_attempt(
        &self,
        _: tonic::Request<fogblast_proto::rating::PuzzleAttemptRequest>,
    ) -> Result<tonic::Response<fogblast_proto::rating::PuzzleAttemptResult>, tonic::Status> {
        Err(tonic::Status::unimplemented("not here"))
    }

    async fn get_puzzle_rating(
        &self,
        _: tonic::Request<fogblast_proto::rating::PuzzleRatingRequest>,
    ) -> Result<tonic::Response<fogblast_proto::rating::PuzzleRating>, tonic::Status> {
        Err(tonic::Status::unimplemented("not here"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ratings_come_from_the_rating_service_when_there_is_one() {
    let backend = Backend::new("ratings");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(fogblast_proto::rating::rating_server::RatingServer::new(OneRating))
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
    );
    let with_service = MatchmakerConfig { rating_addr: Some(format!("http://{addr}")), ..quick_config() };
    let replica = Process::matchmaker(&backend, "mm-a", with_service).await;
    let mut client = replica.client().await;
    let request = |player: &str, variant: Variant| SeekRequest {
        player_id: player.to_owned(),
        name: player.to_owned(),
        variant: variant as i32,
        clock: None,
        rated: true,
        range: None,
        rating: Some(1000),
    };
    // The service's word wins over the caller's; unrated variants and unknown players are 1500.
    assert_eq!(client.seek(request("known", Variant::Atomic)).await.unwrap().into_inner().rating, 1834);
    assert_eq!(client.seek(request("known", Variant::Fog)).await.unwrap().into_inner().rating, 1500);
    assert_eq!(client.seek(request("ghost", Variant::Atomic)).await.unwrap().into_inner().rating, 1500);
    replica.stop().await;

    // A rating service that does not answer: the caller's rating.
    let dead = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead_addr = dead.local_addr().unwrap();
    drop(dead);
    let without = MatchmakerConfig { rating_addr: Some(format!("http://{dead_addr}")), ..quick_config() };
    let replica = Process::matchmaker(&backend, "mm-b", without).await;
    let mut client = replica.client().await;
    assert_eq!(client.seek(request("other", Variant::Atomic)).await.unwrap().into_inner().rating, 1000);
    replica.stop().await;
}

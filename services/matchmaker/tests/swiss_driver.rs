//! A Atomic960 Swiss driven through the real driver on the memory store,
//! against a game service that records what it is asked: round 1's games
//! are made with the round's one start position, and a second replica
//! taking the event over makes the same games again (by the same ids and
//! requests, so nothing twice) and pairs nothing new.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use fogblast_bus::MemoryBus;
use fogblast_matchmaker::tournament::commands::{Limits, Tournaments};
use fogblast_matchmaker::tournament::driver::Memory;
use fogblast_matchmaker::tournament::swiss::round_position;
use fogblast_matchmaker::tournament::{
    Entrant, MemoryTournamentStore, Status, System, TournamentRecord, TournamentStore,
};
use fogblast_matchmaker::Games;
use fogblast_proto::error::ServiceError;
use fogblast_proto::game::{
    Color, CreateGameRequest, CreateGameResponse, GameState, JoinGameRequest, JoinGameResponse, Player,
};

/// Makes every game asked for and remembers each create.
#[derive(Debug, Default)]
struct RecordingGames {
    creates: Mutex<Vec<CreateGameRequest>>,
}

#[async_trait]
impl Games for RecordingGames {
    async fn create(&self, request: CreateGameRequest) -> Result<CreateGameResponse, ServiceError> {
        let game_id = request.game_id.clone();
        self.creates.lock().unwrap().push(request);
        Ok(CreateGameResponse { game_id, code: "CODE2345".into(), color: Color::White as i32, state: None })
    }

    async fn join(&self, request: JoinGameRequest) -> Result<JoinGameResponse, ServiceError> {
        Ok(JoinGameResponse { game_id: request.code, color: Color::Black as i32, state: None })
    }

    async fn state(&self, game: &str, player: &str) -> Result<GameState, ServiceError> {
        let black = Player { id: player.to_owned(), ..Default::default() };
        Ok(GameState { game_id: game.to_owned(), black: Some(black), ..Default::default() })
    }

    async fn abort(&self, _game: &str, _player: &str) -> Result<(), ServiceError> {
        Ok(())
    }
}

#[tokio::test]
async fn an_atomic960_swiss_round_is_made_from_one_position_and_taken_over_without_a_second_pairing() {
    let store: Arc<dyn TournamentStore> = Arc::new(MemoryTournamentStore::new());
    let now = store.now_ms().await.unwrap();
    let record = TournamentRecord {
        id: "swiss960".into(),
        name: "Atomic960 Swiss".into(),
        description: String::new(),
        variant: "atomic".into(),
        chess960: true,
        clock: (180_000, 2_000),
        rated: false,
        starts_ms: now,
        minutes: 60,
        system: System::Swiss,
        rounds: 3,
        round_interval_s: 10,
        created_by: String::new(),
        created_ms: now,
    };
    assert!(store.create(&record).await.unwrap());
    for (i, player) in ["p1", "p2", "p3", "p4", "p5", "p6"].iter().enumerate() {
        let entrant = Entrant { name: player.to_uppercase(), rating: 1600 - 10 * i as u32, joined_ms: now };
        store.join(&record.id, player, &entrant).await.unwrap();
    }
    let games = Arc::new(RecordingGames::default());
    let replica = |name: &str| {
        Tournaments::new(store.clone(), Arc::new(MemoryBus::new()), games.clone(), name, Limits::default())
    };

    let first = replica("mm-a");
    let token = store.acquire(&record.id, "mm-a", Duration::from_millis(200)).await.unwrap().unwrap();
    first.drive_one(&record.id, &token, &Memory::default()).await.unwrap();
    let made = games.creates.lock().unwrap().clone();
    assert_eq!(made.len(), 3, "six players: three boards");
    let position = round_position(&record.id, 1);
    assert!(made.iter().all(|r| r.chess960 && r.chess960_position == Some(position)), "{made:?}");
    let snapshot = store.snapshot(&record.id).await.unwrap().unwrap();
    assert_eq!(snapshot.status, Status::Started);
    assert_eq!(snapshot.swiss.as_ref().unwrap().rounds.len(), 1);

    // The first replica's lease runs out; the second takes over.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let second = replica("mm-b");
    let token = store.acquire(&record.id, "mm-b", Duration::from_secs(30)).await.unwrap().expect("the lease is free");
    for _ in 0..3 {
        second.drive_one(&record.id, &token, &Memory::default()).await.unwrap();
    }
    let snapshot = store.snapshot(&record.id).await.unwrap().unwrap();
    assert_eq!(snapshot.swiss.as_ref().unwrap().rounds.len(), 1, "round 1 is paired once");
    assert_eq!(snapshot.games.len(), 3, "no game paired twice");
    let creates = games.creates.lock().unwrap().len();
    assert_eq!(creates, 3, "the games made are not made again once started");
}

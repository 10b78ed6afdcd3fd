//! A pairing whose game was made but whose answer never came back: the
//! wave that made it records nothing, and a later wave makes the pairing's
//! game again. It must name the same game with the same request, so the
//! game service answers with the game already made instead of making a
//! second one and leaving the first orphaned.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use fogblast_bus::MemoryBus;
use fogblast_matchmaker::{Games, MatchStore, Matchmaker, MatchmakerConfig, PoolKey};
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::{
    ClockSettings, Color, CreateGameRequest, CreateGameResponse, GameState, JoinGameRequest, JoinGameResponse, Player,
    Variant,
};
use fogblast_proto::matchmaker::SeekRequest;

/// A game service that makes each game it is asked for, by the id and
/// request id it is given, like the real one, and loses the answer to the
/// first create.
#[derive(Debug, Default)]
struct ForgetfulGames {
    /// Every create asked for: (game id, request id).
    creates: Mutex<Vec<(String, String)>>,
    /// Games made, by id: the request that made each.
    made: Mutex<Vec<(String, String)>>,
    aborted: Mutex<Vec<String>>,
}

#[async_trait]
impl Games for ForgetfulGames {
    async fn create(&self, request: CreateGameRequest) -> Result<CreateGameResponse, ServiceError> {
        let asked = (request.game_id.clone(), request.request_id.clone());
        let first = {
            let mut creates = self.creates.lock().unwrap();
            creates.push(asked.clone());
            creates.len() == 1
        };
        let game = if request.game_id.is_empty() {
            format!("drawn{}", self.made.lock().unwrap().len())
        } else {
            request.game_id.clone()
        };
        {
            let mut made = self.made.lock().unwrap();
            match made.iter().find(|(id, _)| *id == game) {
                Some((_, by)) if *by != request.request_id => {
                    return Err(ServiceError::new(ErrorCode::Conflict, "the game exists"))
                }
                Some(_) => {}
                None => made.push((game.clone(), request.request_id.clone())),
            }
        }
        if first {
            return Err(ServiceError::new(ErrorCode::Unavailable, "the answer was lost"));
        }
        Ok(CreateGameResponse { game_id: game, code: "CODE2345".into(), color: Color::White as i32, state: None })
    }

    async fn join(&self, request: JoinGameRequest) -> Result<JoinGameResponse, ServiceError> {
        let game = self.made.lock().unwrap().last().map(|(id, _)| id.clone()).unwrap_or_default();
        assert_eq!(request.code, "CODE2345");
        Ok(JoinGameResponse { game_id: game, color: Color::Black as i32, state: None })
    }

    async fn state(&self, game: &str, player: &str) -> Result<GameState, ServiceError> {
        let black = Player { id: player.to_owned(), ..Default::default() };
        Ok(GameState { game_id: game.to_owned(), black: Some(black), ..Default::default() })
    }

    async fn abort(&self, game: &str, _player: &str) -> Result<(), ServiceError> {
        self.aborted.lock().unwrap().push(game.to_owned());
        Ok(())
    }
}

fn seek(player: &str, clock: ClockSettings) -> SeekRequest {
    SeekRequest {
        player_id: player.to_owned(),
        name: player.to_owned(),
        variant: Variant::Atomic as i32,
        clock: Some(clock),
        rated: false,
        range: None,
        rating: Some(1500),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pairing_whose_create_answer_was_lost_makes_one_game() {
    let store = MatchStore::in_memory();
    let games = Arc::new(ForgetfulGames::default());
    let config = MatchmakerConfig { replica_id: Some("mm-test".to_owned()), ..MatchmakerConfig::default() };
    let matchmaker = Matchmaker::new(config, store.clone(), Arc::new(MemoryBus::new()), games.clone()).unwrap();
    let clock = ClockSettings { initial_ms: 180_000, increment_ms: 2_000 };
    let pool = PoolKey::new(Variant::Atomic, Some(&clock), false);
    matchmaker.seek(seek("white", clock)).await.expect("seek placed");
    matchmaker.seek(seek("black", clock)).await.expect("seek placed");

    let token = store
        .acquire_lease(&pool.name(), matchmaker.replica(), Duration::from_secs(60))
        .await
        .unwrap()
        .expect("the pool's lease");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while games.creates.lock().unwrap().len() < 2 {
        assert!(std::time::Instant::now() < deadline, "no later wave made the pairing's game again");
        matchmaker.run_wave(&pool, &token).await.unwrap().expect("the wave holds its lease");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let creates = games.creates.lock().unwrap().clone();
    assert!(!creates[0].0.is_empty() && !creates[0].1.is_empty(), "the create names its game and request: {creates:?}");
    assert!(creates.iter().all(|asked| *asked == creates[0]), "every create of the pairing is the same: {creates:?}");
    assert_eq!(games.made.lock().unwrap().len(), 1, "one game was made");
    assert!(games.aborted.lock().unwrap().is_empty(), "nothing was aborted");
}

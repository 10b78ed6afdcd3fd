//! The lobby of open boards on real Redis and NATS with two matchmaker
//! replicas and a real game shard: boards opened on one replica are listed
//! by the other and announced on the bus subject `lobby` as the notices
//! gateways decode; a board leaves when taken, closed, when its creator leaves, or when
//! its time is up; bad boards are refused with an `ErrorDetail`.

mod support;

use std::time::Duration;

use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::{ClockSettings, ColorChoice, CreateGameRequest, JoinGameRequest, Variant};
use fogblast_proto::matchmaker::{Board, CloseBoardRequest, ListLobbyRequest, OpenBoardRequest, PlayerLeftRequest};
use fogblast_proto::notices::{LobbyChanged, LOBBY_SUBJECT};
use support::{eventually, quick_config, quick_config_with, Backend, Ear, Process};

fn board(game: &str, code: &str, player: &str, variant: Variant, rating: u32) -> Board {
    Board {
        game_id: game.to_owned(),
        code: code.to_owned(),
        variant: variant as i32,
        clock: Some(ClockSettings { initial_ms: 180_000, increment_ms: 2_000 }),
        color: ColorChoice::ChooseRandom as i32,
        rated: false,
        player_id: player.to_owned(),
        name: player.to_owned(),
        rating,
        opened_ms: 0,
        address: String::new(),
    }
}

/// The newest lobby notice heard: the one with the highest version.
fn newest(ear: &Ear) -> Option<LobbyChanged> {
    ear.lobbies().into_iter().max_by_key(|l| l.version)
}

fn codes(lobby: &LobbyChanged) -> Vec<String> {
    let mut codes: Vec<String> = lobby.open.iter().map(|b| b.code.clone()).collect();
    codes.sort();
    codes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boards_come_and_go_across_replicas_and_the_bus() {
    let backend = Backend::new("lobby");
    let shard = Process::game_shard(&backend, "shard-a").await;
    let a = Process::matchmaker(&backend, "mm-a", quick_config()).await;
    let b = Process::matchmaker(&backend, "mm-b", quick_config()).await;
    let bus = backend.bus().await;
    let ear = Ear::listen(&bus, &[LOBBY_SUBJECT]).await;
    let (mut on_a, mut on_b) = (a.client().await, b.client().await);

    // Alice creates a real game waiting for a human and lists it.
    let mut games = shard.game_client().await;
    let created = games
        .create_game(CreateGameRequest {
            player_id: "alice".into(),
            player_name: "alice".into(),
            variant: Variant::Atomic as i32,
            color: ColorChoice::ChooseRandom as i32,
            clock: Some(ClockSettings { initial_ms: 180_000, increment_ms: 2_000 }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let listed = on_a
        .open_board(OpenBoardRequest {
            board: Some(board(&created.game_id, &created.code, "alice", Variant::Atomic, 0)),
        })
        .await
        .unwrap()
        .into_inner()
        .board
        .unwrap();
    assert_eq!(listed.rating, 1500, "no rating service: the default");
    assert!(listed.opened_ms > 0);
    on_b.open_board(OpenBoardRequest { board: Some(board("bob-game-1", "ABCDEFGH", "bob", Variant::Standard, 1720)) })
        .await
        .unwrap();
    on_b.open_board(OpenBoardRequest { board: Some(board("bob-game-2", "HGFEDCBA", "bob", Variant::Fog, 1720)) })
        .await
        .unwrap();

    // Either replica lists all three, newest first.
    let lobby = on_a.list_lobby(ListLobbyRequest { variant: 0, limit: 0 }).await.unwrap().into_inner();
    let ids: Vec<&str> = lobby.open.iter().map(|b| b.game_id.as_str()).collect();
    assert_eq!(ids, ["bob-game-2", "bob-game-1", created.game_id.as_str()]);
    let fog = on_b.list_lobby(ListLobbyRequest { variant: Variant::Fog as i32, limit: 5 }).await.unwrap().into_inner();
    assert_eq!(fog.open.len(), 1);
    assert_eq!(fog.open[0].rating, 1720);

    // Gateways hear the same list on the bus, with every field a frame needs.
    eventually(Duration::from_secs(5), || async { newest(&ear).is_some_and(|f| codes(&f).len() == 3) }).await;
    let heard = newest(&ear).unwrap();
    let alice = heard.open.iter().find(|b| b.player_id == "alice").unwrap().clone();
    assert_eq!(alice.code, created.code);
    assert_eq!(alice.variant(), Variant::Atomic);
    assert_eq!(alice.clock.map(|c| c.initial_ms), Some(180_000));
    assert_eq!(alice.color(), ColorChoice::ChooseRandom);
    assert_eq!(alice.rating, 1500);

    // Carol takes Alice's seat with the code from the lobby; the board is closed.
    games
        .join_game(JoinGameRequest {
            player_id: "carol".into(),
            player_name: "carol".into(),
            code: created.code.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    let close = |game: &str, player: &str| CloseBoardRequest { game_id: game.to_owned(), player_id: player.to_owned() };
    assert!(on_b.close_board(close(&created.game_id, "")).await.unwrap().into_inner().closed);
    assert!(!on_a.close_board(close(&created.game_id, "")).await.unwrap().into_inner().closed, "closed twice");
    // Only its creator's close counts when a player is named.
    assert!(!on_a.close_board(close("bob-game-1", "alice")).await.unwrap().into_inner().closed);
    eventually(Duration::from_secs(5), || async {
        newest(&ear).is_some_and(|f| codes(&f) == ["ABCDEFGH", "HGFEDCBA"])
    })
    .await;

    // Bob leaves: both his boards go.
    let left = on_a.player_left(PlayerLeftRequest { player_id: "bob".into() }).await.unwrap().into_inner();
    assert_eq!((left.seek_cancelled, left.boards_closed), (false, 2));
    eventually(Duration::from_secs(5), || async { newest(&ear).is_some_and(|f| codes(&f).is_empty()) }).await;
    assert!(on_b.list_lobby(ListLobbyRequest::default()).await.unwrap().into_inner().open.is_empty());
    let versions: Vec<u64> = ear.lobbies().iter().map(|l| l.version).collect();
    let mut distinct = versions.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), versions.len(), "every notice has its own version");

    // Bad boards and requests are refused with a code, and change nothing.
    let refused = [
        OpenBoardRequest { board: None },
        OpenBoardRequest { board: Some(board("g1", "SHORT", "dave", Variant::Atomic, 0)) },
        OpenBoardRequest { board: Some(board("bad id!", "ABCDEFGH", "dave", Variant::Atomic, 0)) },
        OpenBoardRequest { board: Some(board("g1", "ABCDEFGH", "dave", Variant::Unspecified, 0)) },
        OpenBoardRequest { board: Some(Board { color: 0, ..board("g1", "ABCDEFGH", "dave", Variant::Fog, 0) }) },
        OpenBoardRequest {
            board: Some(Board {
                clock: Some(ClockSettings { initial_ms: 5, increment_ms: 0 }),
                ..board("g1", "ABCDEFGH", "dave", Variant::Fog, 0)
            }),
        },
    ];
    for request in refused {
        let status = on_a.open_board(request.clone()).await.expect_err(&format!("{request:?}"));
        assert_eq!(ServiceError::from_status(&status).code, ErrorCode::BadRequest, "{request:?}");
    }
    for request in [ListLobbyRequest { variant: 42, limit: 0 }, ListLobbyRequest { variant: 0, limit: 100_000 }] {
        let status = on_b.list_lobby(request).await.expect_err("refused");
        assert_eq!(ServiceError::from_status(&status).code, ErrorCode::BadRequest);
    }
    let status = on_b.close_board(close("", "")).await.expect_err("no game id");
    assert_eq!(ServiceError::from_status(&status).code, ErrorCode::BadRequest);
    assert!(on_b.list_lobby(ListLobbyRequest::default()).await.unwrap().into_inner().open.is_empty());

    a.stop().await;
    b.stop().await;
    shard.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boards_leave_the_lobby_when_their_time_is_up() {
    let backend = Backend::new("lobbyttl");
    let a = Process::matchmaker(&backend, "mm-a", quick_config_with(|s| s.board_ttl_ms = 600)).await;
    let bus = backend.bus().await;
    let ear = Ear::listen(&bus, &[LOBBY_SUBJECT]).await;
    let mut client = a.client().await;
    client
        .open_board(OpenBoardRequest { board: Some(board("old-game", "ABCDEFGH", "erin", Variant::Atomic, 0)) })
        .await
        .unwrap();
    eventually(Duration::from_secs(3), || async { newest(&ear).is_some_and(|f| codes(&f).len() == 1) }).await;
    eventually(Duration::from_secs(3), || {
        let mut client = client.clone();
        async move { client.list_lobby(ListLobbyRequest::default()).await.unwrap().into_inner().open.is_empty() }
    })
    .await;
    // The sweep takes it out of Redis and tells the gateways.
    eventually(Duration::from_secs(3), || async { newest(&ear).is_some_and(|f| codes(&f).is_empty()) }).await;
    let left = client.player_left(PlayerLeftRequest { player_id: "erin".into() }).await.unwrap().into_inner();
    assert_eq!(left.boards_closed, 0, "already gone");
    a.stop().await;
}

/// One player, or one address over many players, cannot fill the lobby:
/// past its share the oldest of its boards leave, and everyone else's
/// stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_player_or_one_address_fills_only_its_share_of_the_lobby() {
    let backend = Backend::new("lobby-caps");
    let config = quick_config_with(|s| {
        s.boards_per_player = 2;
        s.boards_per_address = 3;
    });
    let mm = Process::matchmaker(&backend, "mm-caps", config).await;
    let mut client = mm.client().await;
    let open = |game: String, player: &str, address: &str| {
        let mut board = board(&game, "ABCDEFGH", player, Variant::Atomic, 0);
        board.address = address.to_owned();
        OpenBoardRequest { board: Some(board) }
    };
    client.open_board(open("other-1".into(), "olga", "198.51.100.1")).await.unwrap();
    for i in 0..4 {
        client.open_board(open(format!("flood-{i}"), "mallory", "203.0.113.9")).await.unwrap();
        // Boards opened in the same millisecond would tie on age.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let listed = |lobby: fogblast_proto::matchmaker::Lobby| -> Vec<String> {
        lobby.open.into_iter().map(|b| b.game_id).collect()
    };
    let lobby = listed(client.list_lobby(ListLobbyRequest::default()).await.unwrap().into_inner());
    assert_eq!(lobby, ["flood-3", "flood-2", "other-1"], "the player's two newest stay");
    // The same address under new player ids: three boards in all.
    for (i, player) in ["mallory2", "mallory3"].iter().enumerate() {
        client.open_board(open(format!("sock-{i}"), player, "203.0.113.9")).await.unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let lobby = listed(client.list_lobby(ListLobbyRequest::default()).await.unwrap().into_inner());
    assert_eq!(lobby, ["sock-1", "sock-0", "flood-3", "other-1"], "the address's three newest stay");
    assert!(
        client
            .list_lobby(ListLobbyRequest::default())
            .await
            .unwrap()
            .into_inner()
            .open
            .iter()
            .all(|b| b.address.is_empty()),
        "addresses are never listed"
    );
}

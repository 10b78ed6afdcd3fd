//! `fogblast up` when its files cannot be written. Its live-game file on a
//! small tmpfs that is then filled: a move the file could not take is
//! refused with an error, never shown to anyone, and played once there is
//! room again; killed with SIGKILL and started on the same file, it has
//! every move it acknowledged. And a finished game the archive could not
//! take yet (its file locked by another writer) is still archived after a
//! SIGKILL, from the bus log kept in the live-game file.
//!
//! Mounting a tmpfs needs root (or CAP_SYS_ADMIN); without it the disk-full
//! test fails and says so rather than passing without having run.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::str::FromStr;
use std::time::Duration;

use serde_json::json;
use sqlx::Connection;

use crate::support::{http_get, t, Client, Proc};

/// What a frame that is waited for may take at most: the gateway tries a
/// refused move again for several seconds before it answers with an error.
const PATIENCE: Duration = Duration::from_secs(60);

/// A scratch directory removed when the test ends, however it ends.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new(what: &str) -> ScratchDir {
        let dir =
            std::env::temp_dir().join(format!("fogblast-{what}-{}-{}", std::process::id(), rand::random::<u32>()));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        ScratchDir(dir)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A small tmpfs mounted on a scratch directory, unmounted when the test
/// ends, however it ends.
struct Tmpfs {
    dir: ScratchDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Tmpfs {
        let dir = ScratchDir::new("tmpfs");
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir.0)
            .output()
            .expect("mount runs");
        assert!(
            output.status.success(),
            "this test fills a small tmpfs, and mounting one needs root (or CAP_SYS_ADMIN); `mount -t tmpfs` said: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        Tmpfs { dir }
    }

    fn path(&self) -> &Path {
        &self.dir.0
    }

    /// Writes a file until the file system has no room left.
    fn fill(&self) -> PathBuf {
        let filler = self.path().join("filler");
        let mut file = std::fs::File::create(&filler).expect("the filler file");
        for chunk in [1 << 16, 4096, 512, 1] {
            let bytes = vec![0u8; chunk];
            while file.write_all(&bytes).is_ok() {}
        }
        let _ = file.sync_all();
        filler
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazily, so a file still open elsewhere cannot keep it mounted.
        let _ = Command::new("umount").arg("-l").arg(self.path()).status();
    }
}

/// `fogblast up` on a live-game file at `live` and an archive at `archive`, on `listen`.
fn up_on(name: &str, live: &Path, archive: &str, listen: &str) -> Proc {
    let live = live.display().to_string();
    let args = ["--listen", listen, "--database-url", archive, "--live-store", &live, "--engine-workers", "1"];
    Proc::up_args(name, &args)
}

/// Alice (white) and bob in a new clocked atomic game; its id.
async fn new_game(alice: &mut Client, bob: &mut Client) -> String {
    let clock = json!({ "initial_ms": 600_000, "increment_ms": 0 });
    alice
        .send(json!({ "t": "create", "variant": "atomic", "color": "white", "clock": clock, "opponent": "human" }))
        .await;
    let created = alice.expect("created").await;
    bob.send(json!({ "t": "join", "code": created["code"] })).await;
    bob.expect("joined").await;
    created["game"].as_str().unwrap().to_owned()
}

/// Plays `uci` at `ply` as `mover` and waits for its acknowledgement.
async fn play(mover: &mut Client, game: &str, uci: &str, ply: usize) {
    mover.send(json!({ "t": "move", "game": game, "uci": uci, "ply": ply })).await;
    mover.expect_move(ply).await;
}

/// The moves of `game` as `player` is told them by a fresh `watch`.
async fn moves_seen(player: &mut Client, game: &str) -> Vec<String> {
    player.send(json!({ "t": "watch", "game": game })).await;
    let state = player.expect_where("state", |f| t(f) == "state" && f["game"] == game).await;
    state["moves"].as_array().unwrap().iter().map(|m| m.as_str().unwrap_or_default().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_refuses_a_move_it_could_not_write_and_keeps_every_acknowledged_move_across_sigkill() {
    let disk = Tmpfs::mount("4m");
    let archive_dir = ScratchDir::new("disk-full-archive");
    let live = disk.path().join("live.db");
    let archive = format!("sqlite:{}?mode=rwc", archive_dir.0.join("fogblast.db").display());
    let up = up_on("up-disk-full", &live, &archive, "127.0.0.1:0");
    let port = up.http.port();

    let mut alice = Client::join("alice", up.http, None).await;
    let mut bob = Client::join("bob", up.http, None).await;
    let game = new_game(&mut alice, &mut bob).await;
    play(&mut alice, &game, "e2e4", 0).await;
    play(&mut bob, &game, "e7e5", 1).await;

    let filler = disk.fill();
    alice.send(json!({ "t": "move", "game": game, "uci": "g1f3", "ply": 2, "id": "on-a-full-disk" })).await;
    let answer = alice
        .find(PATIENCE, |f| (t(f) == "error" && f["id"] == "on-a-full-disk") || (t(f) == "move" && f["ply"] == 2))
        .await
        .expect("the move is answered");
    assert_eq!(t(&answer), "error", "a move the file could not take was acknowledged: {answer}");
    let mut carol = Client::join("carol", up.http, None).await;
    assert_eq!(moves_seen(&mut carol, &game).await, ["e2e4", "e7e5"], "the refused move is shown");

    std::fs::remove_file(&filler).expect("the filler goes");
    alice.send(json!({ "t": "move", "game": game, "uci": "g1f3", "ply": 2, "id": "room-again" })).await;
    let answer = alice
        .find(PATIENCE, |f| (t(f) == "error" && f["id"] == "room-again") || (t(f) == "move" && f["ply"] == 2))
        .await
        .expect("the move is answered");
    assert_eq!(t(&answer), "move", "with room again the move is played: {answer}");
    play(&mut bob, &game, "b8c6", 3).await;
    play(&mut alice, &game, "f1c4", 4).await;
    let (alice_token, bob_token) = (alice.token.clone(), bob.token.clone());
    drop((alice, bob, carol));

    up.kill();
    let up = up_on("up-disk-full-again", &live, &archive, &format!("127.0.0.1:{port}"));
    let mut alice = Client::join("alice", up.http, Some(&alice_token)).await;
    let acknowledged = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4"];
    assert_eq!(moves_seen(&mut alice, &game).await, acknowledged, "every acknowledged move, once each");
    let mut bob = Client::join("bob", up.http, Some(&bob_token)).await;
    bob.send(json!({ "t": "watch", "game": game })).await;
    bob.expect("state").await;
    play(&mut bob, &game, "g8f6", 5).await;
    up.terminate();
    assert!(up.wait_exit(Duration::from_secs(15)).is_some_and(|s| s.success()), "{}", up.logs());
}

/// Waits until `up`'s log has a line with `text`.
async fn logged(up: &Proc, text: &str) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !up.logs().contains(text) {
        assert!(tokio::time::Instant::now() < deadline, "no {text:?} in the log:\n{}", up.logs());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_game_published_but_not_archived_is_archived_after_sigkill() {
    let dir = ScratchDir::new("bus-kill");
    let live = dir.0.join("live.db");
    let archive_file = dir.0.join("fogblast.db");
    let archive = format!("sqlite:{}?mode=rwc", archive_file.display());
    let up = up_on("up-bus-kill", &live, &archive, "127.0.0.1:0");
    let port = up.http.port();

    let mut alice = Client::join("alice", up.http, None).await;
    let mut bob = Client::join("bob", up.http, None).await;
    let game = new_game(&mut alice, &mut bob).await;
    play(&mut alice, &game, "e2e4", 0).await;
    play(&mut bob, &game, "e7e5", 1).await;

    // Another writer holds the archive: the rating service cannot archive
    // the game, so it does not acknowledge it.
    let options = sqlx::sqlite::SqliteConnectOptions::from_str(&archive).expect("the archive's url");
    let mut holder = sqlx::SqliteConnection::connect_with(&options).await.expect("the archive");
    sqlx::query("BEGIN EXCLUSIVE").execute(&mut holder).await.expect("the archive is held");
    alice.send(json!({ "t": "resign", "game": game })).await;
    alice.expect("end").await;
    logged(&up, "finished game published").await;

    up.kill();
    sqlx::query("ROLLBACK").execute(&mut holder).await.expect("the archive is let go");
    drop(holder);
    let up = up_on("up-bus-kill-again", &live, &archive, &format!("127.0.0.1:{port}"));
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let pgn = loop {
        if let Some((200, text)) = http_get(up.http, &format!("/api/games/{game}/pgn")) {
            break text;
        }
        assert!(tokio::time::Instant::now() < deadline, "the game never reached the archive:\n{}", up.logs());
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(pgn.contains("[Result \"0-1\"]") && pgn.contains("1. e4 ") && pgn.contains("1... e5 "), "{pgn}");
    up.terminate();
    assert!(up.wait_exit(Duration::from_secs(15)).is_some_and(|s| s.success()), "{}", up.logs());
}

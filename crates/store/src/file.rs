//! The store behind `fogblast up`, kept in a file: live games, clocks,
//! deadlines, the outbox, join codes, players' seats and the games in play survive a restart or a crash of
//! the one process, as they survive a shard's death on Redis.
//!
//! It is the in-process store ([`MemoryStore`], with every guarantee the
//! shared suite holds it to) written through to SQLite: every change is
//! written, the whole game in one row, in one SQLite transaction (WAL,
//! `synchronous = FULL`), before it is answered. A commit is decided
//! against memory, written, and only then taken into memory; any other
//! change is put back in memory when its write fails (a full disk, an I/O
//! error). So memory never holds what the file does not: nobody reads a
//! move that a restart would take back, and a resend after a failed write
//! commits again instead of being answered from memory. Opening the file
//! takes every game back in; the store's clock
//! is wall time, so a clock that ran while the process was down is settled
//! by the time that passed. Membership is not kept: shards register again,
//! with epochs above every epoch recorded on a game.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use fogblast_proto::ids::{GameId, PlayerId, ShardId};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Row, SqlitePool};

use crate::memory::GameImage;
use crate::{Commit, CommitError, EventsAfter, GameStore, Member, Membership, MemoryStore, StoreError, StoredGame};

const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS games (
        id TEXT PRIMARY KEY,
        version INTEGER NOT NULL,
        epoch INTEGER NOT NULL,
        record BLOB NOT NULL,
        events BLOB NOT NULL,
        due_ms INTEGER,
        outbox_ms INTEGER,
        expires_at_ms INTEGER,
        ttl_after_publish_ms INTEGER,
        in_play BLOB
    )",
    "CREATE TABLE IF NOT EXISTS codes (code TEXT PRIMARY KEY, game TEXT NOT NULL, expires_at_ms INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS seats (
        player TEXT NOT NULL,
        game TEXT NOT NULL,
        expires_at_ms INTEGER NOT NULL,
        PRIMARY KEY (player, game)
    )",
    "CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
];

/// Live games in memory, kept in a SQLite file.
#[derive(Debug)]
pub struct FileStore {
    memory: MemoryStore,
    db: SqlitePool,
    /// Writes go one at a time, each with the state as it is when written,
    /// so the file never goes back to an older state of a game.
    writing: tokio::sync::Mutex<()>,
}

fn db_error(error: sqlx::Error) -> StoreError {
    StoreError::caused_by("the live-game file", error)
}

fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn uint(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// Events as one blob: each is its length (4 bytes, little-endian) and its bytes.
fn pack(events: &[Vec<u8>]) -> Vec<u8> {
    let mut packed = Vec::with_capacity(events.iter().map(|e| e.len() + 4).sum());
    for event in events {
        packed.extend_from_slice(&u32::try_from(event.len()).unwrap_or(u32::MAX).to_le_bytes());
        packed.extend_from_slice(event);
    }
    packed
}

fn unpack(mut packed: &[u8]) -> Result<Vec<Vec<u8>>, StoreError> {
    let mut events = Vec::new();
    while !packed.is_empty() {
        let (len, rest) = packed.split_at_checked(4).ok_or_else(|| StoreError::new("a kept event is cut short"))?;
        let len = u32::from_le_bytes(len.try_into().expect("four bytes")) as usize;
        let (event, rest) = rest.split_at_checked(len).ok_or_else(|| StoreError::new("a kept event is cut short"))?;
        events.push(event.to_vec());
        packed = rest;
    }
    Ok(events)
}

/// A file made before the index of games in play gets its column.
async fn add_in_play_column(db: &SqlitePool) -> Result<(), StoreError> {
    let columns: Vec<String> =
        sqlx::query_scalar("SELECT name FROM pragma_table_info('games')").fetch_all(db).await.map_err(db_error)?;
    if !columns.iter().any(|c| c == "in_play") {
        sqlx::query("ALTER TABLE games ADD COLUMN in_play BLOB").execute(db).await.map_err(db_error)?;
    }
    Ok(())
}

impl FileStore {
    /// Opens (or creates) the file at `path` and takes in every game kept there.
    pub async fn open(path: &Path) -> Result<FileStore, StoreError> {
        let options = SqliteConnectOptions::from_str("sqlite:")
            .map_err(db_error)?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(Duration::from_secs(5));
        let db = SqlitePoolOptions::new().max_connections(1).connect_with(options).await.map_err(db_error)?;
        for statement in SCHEMA {
            sqlx::query(statement).execute(&db).await.map_err(db_error)?;
        }
        add_in_play_column(&db).await?;
        let store = FileStore { memory: MemoryStore::new(), db, writing: tokio::sync::Mutex::new(()) };
        store.take_in().await?;
        Ok(store)
    }

    /// Keeps the last `n` events of each game (at least one).
    pub fn with_history(mut self, n: usize) -> Self {
        self.memory = self.memory.with_history(n);
        self
    }

    async fn take_in(&self) -> Result<(), StoreError> {
        let now = self.memory.now();
        let rows = sqlx::query("SELECT * FROM games").fetch_all(&self.db).await.map_err(db_error)?;
        let mut gone = Vec::new();
        for row in rows {
            let id: String = row.try_get("id").map_err(db_error)?;
            let expires_at_ms = row.try_get::<Option<i64>, _>("expires_at_ms").map_err(db_error)?.map(uint);
            if expires_at_ms.is_some_and(|at| at <= now) {
                gone.push(id);
                continue;
            }
            let game = GameId::parse(&id).map_err(|e| StoreError::caused_by(&format!("bad game id {id:?}"), e))?;
            let image = GameImage {
                version: uint(row.try_get("version").map_err(db_error)?),
                epoch: uint(row.try_get("epoch").map_err(db_error)?),
                record: row.try_get("record").map_err(db_error)?,
                events: unpack(&row.try_get::<Vec<u8>, _>("events").map_err(db_error)?)?,
                due_ms: row.try_get::<Option<i64>, _>("due_ms").map_err(db_error)?.map(uint),
                outbox_ms: row.try_get::<Option<i64>, _>("outbox_ms").map_err(db_error)?.map(uint),
                expires_at_ms,
                ttl_after_publish_ms: row
                    .try_get::<Option<i64>, _>("ttl_after_publish_ms")
                    .map_err(db_error)?
                    .map(uint),
                in_play: row.try_get("in_play").map_err(db_error)?,
            };
            self.memory.restore(game, image);
        }
        for id in gone {
            sqlx::query("DELETE FROM games WHERE id = $1").bind(id).execute(&self.db).await.map_err(db_error)?;
        }
        let codes = sqlx::query("SELECT code, game, expires_at_ms FROM codes").fetch_all(&self.db).await;
        for row in codes.map_err(db_error)? {
            let expires: i64 = row.try_get("expires_at_ms").map_err(db_error)?;
            let game: String = row.try_get("game").map_err(db_error)?;
            if uint(expires) > now {
                if let Ok(game) = GameId::parse(&game) {
                    self.memory.restore_code(row.try_get("code").map_err(db_error)?, game, uint(expires));
                }
            }
        }
        sqlx::query("DELETE FROM codes WHERE expires_at_ms <= $1")
            .bind(int(now))
            .execute(&self.db)
            .await
            .map_err(db_error)?;
        self.load_seats(now).await?;
        if let Some(epoch) = self.setting("last_epoch").await? {
            self.memory.raise_epoch(epoch.parse().unwrap_or(0));
        }
        Ok(())
    }

    /// A setting kept in the file, if set.
    pub async fn setting(&self, name: &str) -> Result<Option<String>, StoreError> {
        let row = sqlx::query("SELECT value FROM settings WHERE name = $1").bind(name).fetch_optional(&self.db).await;
        row.map_err(db_error)?.map(|row| row.try_get("value").map_err(db_error)).transpose()
    }

    /// The setting `name`, set to `value` first if it was not set.
    pub async fn setting_or_insert(&self, name: &str, value: &str) -> Result<String, StoreError> {
        sqlx::query("INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING")
            .bind(name)
            .bind(value)
            .execute(&self.db)
            .await
            .map_err(db_error)?;
        Ok(self.setting(name).await?.unwrap_or_else(|| value.to_owned()))
    }

    /// Writes `image` as the game's row, or removes the row for `None`.
    /// The caller holds `writing`.
    async fn write(&self, game: &GameId, image: Option<&GameImage>) -> Result<(), StoreError> {
        let Some(image) = image else {
            sqlx::query("DELETE FROM games WHERE id = $1")
                .bind(game.as_str())
                .execute(&self.db)
                .await
                .map_err(db_error)?;
            return Ok(());
        };
        sqlx::query(
            "INSERT INTO games (id, version, epoch, record, events, due_ms, outbox_ms, expires_at_ms, \
             ttl_after_publish_ms, in_play) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO \
             UPDATE SET version = excluded.version, epoch = excluded.epoch, record = excluded.record, \
             events = excluded.events, due_ms = excluded.due_ms, outbox_ms = excluded.outbox_ms, \
             expires_at_ms = excluded.expires_at_ms, ttl_after_publish_ms = excluded.ttl_after_publish_ms, \
             in_play = excluded.in_play",
        )
        .bind(game.as_str())
        .bind(int(image.version))
        .bind(int(image.epoch))
        .bind(image.record.as_slice())
        .bind(pack(&image.events))
        .bind(image.due_ms.map(int))
        .bind(image.outbox_ms.map(int))
        .bind(image.expires_at_ms.map(int))
        .bind(image.ttl_after_publish_ms.map(int))
        .bind(image.in_play.as_deref())
        .execute(&self.db)
        .await
        .map_err(db_error)?;
        Ok(())
    }

    /// Makes a change to a game in memory with `change` and writes the
    /// result; when the write fails, the game is put back as it was, so the
    /// memory never holds what the file does not.
    async fn changed<T>(&self, game: &GameId, change: impl FnOnce(&MemoryStore) -> T) -> Result<T, StoreError> {
        let _one_at_a_time = self.writing.lock().await;
        let before = self.memory.image(game);
        let answer = change(&self.memory);
        let after = self.memory.image(game);
        if after != before {
            if let Err(error) = self.write(game, after.as_ref()).await {
                self.memory.set_image(game, before);
                return Err(error);
            }
        }
        Ok(answer)
    }

    async fn load_seats(&self, now: u64) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM seats WHERE expires_at_ms <= $1")
            .bind(int(now))
            .execute(&self.db)
            .await
            .map_err(db_error)?;
        let rows = sqlx::query("SELECT player, game, expires_at_ms FROM seats").fetch_all(&self.db).await;
        for row in rows.map_err(db_error)? {
            let player: String = row.try_get("player").map_err(db_error)?;
            let game: String = row.try_get("game").map_err(db_error)?;
            let expires: i64 = row.try_get("expires_at_ms").map_err(db_error)?;
            if let (Ok(player), Ok(game)) = (PlayerId::parse(&player), GameId::parse(&game)) {
                self.memory.note_seat_until(&player, &game, uint(expires));
            }
        }
        Ok(())
    }

    async fn keep_code(&self, code: &str) -> Result<(), StoreError> {
        let _one_at_a_time = self.writing.lock().await;
        match self.memory.code_image(code) {
            Some((game, expires)) => sqlx::query(
                "INSERT INTO codes (code, game, expires_at_ms) VALUES ($1, $2, $3) ON CONFLICT (code) DO UPDATE SET \
                 game = excluded.game, expires_at_ms = excluded.expires_at_ms",
            )
            .bind(code)
            .bind(game.as_str())
            .bind(int(expires))
            .execute(&self.db)
            .await
            .map_err(db_error)?,
            None => {
                sqlx::query("DELETE FROM codes WHERE code = $1").bind(code).execute(&self.db).await.map_err(db_error)?
            }
        };
        Ok(())
    }
}

#[async_trait]
impl Membership for FileStore {
    async fn register(&self, shard: &ShardId, addr: &str, ttl: Duration) -> Result<u64, StoreError> {
        let epoch = self.memory.register(shard, addr, ttl).await?;
        let _one_at_a_time = self.writing.lock().await;
        let last = self.memory.last_epoch().to_string();
        sqlx::query("INSERT INTO settings (name, value) VALUES ('last_epoch', $1) ON CONFLICT (name) DO UPDATE SET value = excluded.value")
            .bind(last)
            .execute(&self.db)
            .await
            .map_err(db_error)?;
        Ok(epoch)
    }

    async fn renew(&self, shard: &ShardId, epoch: u64, ttl: Duration) -> Result<bool, StoreError> {
        self.memory.renew(shard, epoch, ttl).await
    }

    async fn deregister(&self, shard: &ShardId, epoch: u64) -> Result<(), StoreError> {
        self.memory.deregister(shard, epoch).await
    }

    async fn members(&self) -> Result<Vec<Member>, StoreError> {
        self.memory.members().await
    }
}

#[async_trait]
impl GameStore for FileStore {
    async fn now_ms(&self) -> Result<u64, StoreError> {
        self.memory.now_ms().await
    }

    async fn load(&self, game: &GameId) -> Result<Option<StoredGame>, StoreError> {
        self.memory.load(game).await
    }

    async fn commit(&self, commit: Commit) -> Result<u64, CommitError> {
        // Decided, written, and only then taken into memory, one commit at
        // a time: a change the file did not take is never read by anyone,
        // and a resend after it finds nothing recorded and commits again.
        let _one_at_a_time = self.writing.lock().await;
        let plan = self.memory.plan(commit)?;
        self.write(&plan.game, Some(&self.memory.image_after(&plan))).await?;
        Ok(self.memory.apply(plan))
    }

    async fn confirm_durable(&self, _game: &GameId) -> Result<(), StoreError> {
        // The memory holds nothing the file does not: a commit is written
        // before it is taken in, and any other change is undone when its
        // write fails. A change found recorded is therefore written.
        Ok(())
    }

    async fn events_after(&self, game: &GameId, after_version: u64) -> Result<EventsAfter, StoreError> {
        self.memory.events_after(game, after_version).await
    }

    async fn due_games(&self, now_ms: u64, offset: usize, limit: usize) -> Result<Vec<(GameId, u64)>, StoreError> {
        self.memory.due_games(now_ms, offset, limit).await
    }

    async fn postpone(&self, game: &GameId, due_ms: u64, to_ms: u64) -> Result<bool, StoreError> {
        self.changed(game, |memory| memory.postpone_now(game, due_ms, to_ms)).await
    }

    async fn unpublished(&self, offset: usize, limit: usize) -> Result<Vec<GameId>, StoreError> {
        self.memory.unpublished(offset, limit).await
    }

    async fn mark_published(&self, game: &GameId) -> Result<(), StoreError> {
        self.changed(game, |memory| memory.mark_published_now(game)).await
    }

    async fn claim_code(&self, code: &str, game: &GameId, ttl: Duration) -> Result<bool, StoreError> {
        let claimed = self.memory.claim_code(code, game, ttl).await?;
        if claimed {
            if let Err(error) = self.keep_code(code).await {
                // Not written, so not claimed: nobody is told this code.
                self.memory.release_code(code).await?;
                return Err(error);
            }
        }
        Ok(claimed)
    }

    async fn resolve_code(&self, code: &str) -> Result<Option<GameId>, StoreError> {
        self.memory.resolve_code(code).await
    }

    async fn release_code(&self, code: &str) -> Result<(), StoreError> {
        self.memory.release_code(code).await?;
        self.keep_code(code).await
    }

    /// Written first, then noted in memory: a seat the file does not hold
    /// is never listed.
    async fn note_seat(&self, player: &PlayerId, game: &GameId, ttl: Duration) -> Result<(), StoreError> {
        let expires = self.memory.now().saturating_add(crate::memory::ttl_ms(ttl));
        {
            let _one_at_a_time = self.writing.lock().await;
            sqlx::query(
                "INSERT INTO seats (player, game, expires_at_ms) VALUES ($1, $2, $3) ON CONFLICT (player, game) \
                 DO UPDATE SET expires_at_ms = excluded.expires_at_ms",
            )
            .bind(player.as_str())
            .bind(game.as_str())
            .bind(int(expires))
            .execute(&self.db)
            .await
            .map_err(db_error)?;
        }
        self.memory.note_seat_until(player, game, expires);
        Ok(())
    }

    async fn seats_of(&self, player: &PlayerId) -> Result<Vec<GameId>, StoreError> {
        self.memory.seats_of(player).await
    }

    async fn forget_seat(&self, player: &PlayerId, game: &GameId) -> Result<(), StoreError> {
        self.memory.forget_seat(player, game).await?;
        let _one_at_a_time = self.writing.lock().await;
        sqlx::query("DELETE FROM seats WHERE player = $1 AND game = $2")
            .bind(player.as_str())
            .bind(game.as_str())
            .execute(&self.db)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn games_in_play(&self) -> Result<Vec<(GameId, Vec<u8>)>, StoreError> {
        self.memory.games_in_play().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game() -> GameId {
        GameId::parse("abcdefghij").unwrap()
    }

    fn commit(expected_version: u64, record: Vec<u8>) -> Commit {
        Commit {
            game: game(),
            expected_version,
            epoch: 1,
            record,
            events: vec![vec![expected_version as u8; 64]],
            due_at_ms: Some(1_000 + expected_version),
            finished: false,
            expire_after: None,
            in_play: None,
        }
    }

    /// Lets the file grow no more: the next write that needs a new page
    /// fails with SQLITE_FULL, as on a full disk.
    async fn fill(store: &FileStore) {
        let pages: i64 = sqlx::query_scalar("PRAGMA page_count").fetch_one(&store.db).await.unwrap();
        sqlx::query(&format!("PRAGMA max_page_count = {pages}")).execute(&store.db).await.unwrap();
    }

    #[tokio::test]
    async fn a_commit_the_file_could_not_take_is_refused_and_never_seen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("live.db");
        let store = FileStore::open(&path).await.unwrap();
        assert_eq!(store.commit(commit(0, b"first".to_vec())).await.unwrap(), 1);
        fill(&store).await;

        // Bigger than any free space a page of the file still has.
        let refused = store.commit(commit(1, vec![7; 64 * 1024])).await;
        assert!(matches!(refused, Err(CommitError::Store(_))), "{refused:?}");
        let held = store.load(&game()).await.unwrap().unwrap();
        assert_eq!((held.version, held.record.as_slice()), (1, b"first".as_slice()), "memory kept the refused commit");
        assert_eq!(
            store.events_after(&game(), 1).await.unwrap(),
            EventsAfter::Events { current: 1, events: Vec::new() }
        );
        assert_eq!(store.due_games(1_001, 0, 10).await.unwrap(), vec![(game(), 1_000)]);
        store.confirm_durable(&game()).await.unwrap();

        // Space again: the same commit goes through, and is in the file.
        sqlx::query("PRAGMA max_page_count = 1073741823").execute(&store.db).await.unwrap();
        assert_eq!(store.commit(commit(1, vec![7; 64 * 1024])).await.unwrap(), 2);
        drop(store);
        let reopened = FileStore::open(&path).await.unwrap();
        assert_eq!(reopened.load(&game()).await.unwrap().unwrap().version, 2);
    }

    #[tokio::test]
    async fn a_change_whose_write_fails_is_put_back_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("live.db");
        let store = FileStore::open(&path).await.unwrap();
        let mut finished = commit(0, b"finished".to_vec());
        finished.finished = true;
        finished.expire_after = Some(Duration::from_secs(60));
        store.commit(finished).await.unwrap();
        // Every write fails from here on (SQLITE_READONLY).
        sqlx::query("PRAGMA query_only = ON").execute(&store.db).await.unwrap();

        assert!(store.mark_published(&game()).await.is_err());
        assert_eq!(store.unpublished(0, 10).await.unwrap(), vec![game()], "the outbox lost an unwritten change");
        assert!(store.postpone(&game(), 1_000, 5_000).await.is_err());
        assert_eq!(store.due_games(1_001, 0, 10).await.unwrap(), vec![(game(), 1_000)]);
    }

    /// A file made before the index of games in play opens with its games
    /// and keeps the index from then on.
    #[tokio::test]
    async fn a_file_from_before_the_games_in_play_is_taken_in_and_keeps_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("live.db");
        {
            let store = FileStore::open(&path).await.unwrap();
            store.commit(commit(0, b"old".to_vec())).await.unwrap();
            // As the file was before the column existed.
            sqlx::query("ALTER TABLE games DROP COLUMN in_play").execute(&store.db).await.unwrap();
        }
        let store = FileStore::open(&path).await.unwrap();
        assert_eq!(store.load(&game()).await.unwrap().map(|g| g.record), Some(b"old".to_vec()));
        assert!(store.games_in_play().await.unwrap().is_empty());
        let mut started = commit(1, b"started".to_vec());
        started.in_play = Some(b"entry".to_vec());
        store.commit(started).await.unwrap();
        drop(store);
        let store = FileStore::open(&path).await.unwrap();
        assert_eq!(store.games_in_play().await.unwrap(), vec![(game(), b"entry".to_vec())]);
    }

    #[test]
    fn events_pack_and_unpack_and_a_cut_pack_is_refused() {
        let events = vec![b"one".to_vec(), Vec::new(), vec![7; 300]];
        let packed = pack(&events);
        assert_eq!(unpack(&packed).unwrap(), events);
        assert!(unpack(&packed[..packed.len() - 1]).is_err());
    }
}

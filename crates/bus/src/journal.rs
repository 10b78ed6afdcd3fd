//! The in-process bus's site stream kept in a SQLite file, so that
//! `fogblast up` killed outright keeps every message it acknowledged: a
//! finished game published but not yet archived is delivered again when
//! the process comes back. Each message is written (WAL,
//! `synchronous = FULL`) before its publish is acknowledged, each consumer's
//! acknowledgement before it is confirmed, and a message leaves the file
//! when it leaves the log in memory.
//!
//! What is not kept is what a restart re-creates: deliveries in flight
//! (every unacknowledged message is delivered again, as after an ack wait)
//! and plain subjects, which are fire-and-forget; nor the public events,
//! a live feed read from NATS, whose readers a crash of `fogblast up`
//! promises nothing.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use bytes::Bytes;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Row, SqlitePool};

use crate::{BusError, Headers, Message};

const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS bus_messages (
        sequence INTEGER PRIMARY KEY,
        id TEXT NOT NULL,
        subject TEXT NOT NULL,
        headers BLOB NOT NULL,
        payload BLOB NOT NULL
    )",
    "CREATE TABLE IF NOT EXISTS bus_consumers (name TEXT PRIMARY KEY, filter TEXT NOT NULL, ack_wait_ms INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS bus_acks (consumer TEXT NOT NULL, sequence INTEGER NOT NULL, PRIMARY KEY (consumer, sequence))",
    "CREATE TABLE IF NOT EXISTS bus_settings (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
];

/// The file behind a [`crate::MemoryBus`].
#[derive(Debug)]
pub(crate) struct Journal {
    db: SqlitePool,
}

/// A message as kept, with its sequence.
pub(crate) struct KeptMessage {
    pub sequence: u64,
    pub id: String,
    pub message: Message,
}

/// A durable consumer as kept: its settings and what it acknowledged of
/// the messages still kept.
pub(crate) struct KeptConsumer {
    pub name: String,
    pub filter: String,
    pub ack_wait: Duration,
    pub acked: Vec<u64>,
}

/// Everything the file holds.
pub(crate) struct Kept {
    pub last_sequence: u64,
    pub messages: Vec<KeptMessage>,
    pub consumers: Vec<KeptConsumer>,
}

fn db_error(error: sqlx::Error) -> BusError {
    BusError::caused_by("the bus file", error)
}

fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn uint(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// Headers as one blob: each name and value is its length (4 bytes,
/// little-endian) and its bytes.
fn pack(headers: &Headers) -> Vec<u8> {
    let mut packed = Vec::new();
    for text in headers.iter().flat_map(|(name, value)| [name, value]) {
        packed.extend_from_slice(&u32::try_from(text.len()).unwrap_or(u32::MAX).to_le_bytes());
        packed.extend_from_slice(text.as_bytes());
    }
    packed
}

fn unpack(mut packed: &[u8]) -> Result<Headers, BusError> {
    let mut texts = Vec::new();
    while !packed.is_empty() {
        let cut = || BusError::new("a kept message's headers are cut short");
        let (len, rest) = packed.split_at_checked(4).ok_or_else(cut)?;
        let len = u32::from_le_bytes(len.try_into().expect("four bytes")) as usize;
        let (text, rest) = rest.split_at_checked(len).ok_or_else(cut)?;
        texts.push(String::from_utf8_lossy(text).into_owned());
        packed = rest;
    }
    if texts.len() % 2 != 0 {
        return Err(BusError::new("a kept message's headers are cut short"));
    }
    let mut texts = texts.into_iter();
    Ok(std::iter::from_fn(|| Some((texts.next()?, texts.next()?))).collect())
}

impl Journal {
    /// Opens (or creates) the file at `path` and reads what it holds.
    pub(crate) async fn open(path: &Path) -> Result<(Journal, Kept), BusError> {
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
        let journal = Journal { db };
        let kept = journal.read().await?;
        Ok((journal, kept))
    }

    async fn read(&self) -> Result<Kept, BusError> {
        let last: Option<i64> = sqlx::query_scalar("SELECT value FROM bus_settings WHERE name = 'last_sequence'")
            .fetch_optional(&self.db)
            .await
            .map_err(db_error)?;
        let rows = sqlx::query("SELECT sequence, id, subject, headers, payload FROM bus_messages ORDER BY sequence")
            .fetch_all(&self.db)
            .await
            .map_err(db_error)?;
        let mut messages = Vec::with_capacity(rows.len());
        for row in rows {
            let headers: Vec<u8> = row.try_get("headers").map_err(db_error)?;
            let payload: Vec<u8> = row.try_get("payload").map_err(db_error)?;
            messages.push(KeptMessage {
                sequence: uint(row.try_get("sequence").map_err(db_error)?),
                id: row.try_get("id").map_err(db_error)?,
                message: Message {
                    subject: row.try_get("subject").map_err(db_error)?,
                    headers: unpack(&headers)?,
                    payload: Bytes::from(payload),
                },
            });
        }
        let rows = sqlx::query("SELECT name, filter, ack_wait_ms FROM bus_consumers")
            .fetch_all(&self.db)
            .await
            .map_err(db_error)?;
        let mut consumers = Vec::with_capacity(rows.len());
        for row in rows {
            let name: String = row.try_get("name").map_err(db_error)?;
            let acked: Vec<i64> = sqlx::query_scalar("SELECT sequence FROM bus_acks WHERE consumer = $1")
                .bind(&name)
                .fetch_all(&self.db)
                .await
                .map_err(db_error)?;
            consumers.push(KeptConsumer {
                filter: row.try_get("filter").map_err(db_error)?,
                ack_wait: Duration::from_millis(uint(row.try_get("ack_wait_ms").map_err(db_error)?)),
                acked: acked.into_iter().map(uint).collect(),
                name,
            });
        }
        let last_sequence = messages.last().map_or(0, |m| m.sequence).max(last.map_or(0, uint));
        Ok(Kept { last_sequence, messages, consumers })
    }

    /// Writes a new message; returns once it is on disk.
    pub(crate) async fn append(&self, sequence: u64, id: &str, message: &Message) -> Result<(), BusError> {
        let mut tx = self.db.begin().await.map_err(db_error)?;
        sqlx::query("INSERT INTO bus_messages (sequence, id, subject, headers, payload) VALUES ($1, $2, $3, $4, $5)")
            .bind(int(sequence))
            .bind(id)
            .bind(&message.subject)
            .bind(pack(&message.headers))
            .bind(message.payload.as_ref())
            .execute(&mut *tx)
            .await
            .map_err(db_error)?;
        sqlx::query(
            "INSERT INTO bus_settings (name, value) VALUES ('last_sequence', $1) \
             ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        )
        .bind(int(sequence))
        .execute(&mut *tx)
        .await
        .map_err(db_error)?;
        tx.commit().await.map_err(db_error)
    }

    /// Keeps a durable consumer's settings.
    pub(crate) async fn keep_consumer(&self, name: &str, filter: &str, ack_wait: Duration) -> Result<(), BusError> {
        sqlx::query(
            "INSERT INTO bus_consumers (name, filter, ack_wait_ms) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO UPDATE SET filter = excluded.filter, ack_wait_ms = excluded.ack_wait_ms",
        )
        .bind(name)
        .bind(filter)
        .bind(int(u64::try_from(ack_wait.as_millis()).unwrap_or(u64::MAX)))
        .execute(&self.db)
        .await
        .map_err(db_error)?;
        Ok(())
    }

    /// Records that `consumer` acknowledged message `sequence`.
    pub(crate) async fn ack(&self, consumer: &str, sequence: u64) -> Result<(), BusError> {
        sqlx::query("INSERT INTO bus_acks (consumer, sequence) VALUES ($1, $2) ON CONFLICT DO NOTHING")
            .bind(consumer)
            .bind(int(sequence))
            .execute(&self.db)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    /// Removes messages that left the log, with their acknowledgements.
    pub(crate) async fn remove(&self, sequences: &[u64]) -> Result<(), BusError> {
        if sequences.is_empty() {
            return Ok(());
        }
        let mut tx = self.db.begin().await.map_err(db_error)?;
        for &sequence in sequences {
            for statement in
                ["DELETE FROM bus_messages WHERE sequence = $1", "DELETE FROM bus_acks WHERE sequence = $1"]
            {
                sqlx::query(statement).bind(int(sequence)).execute(&mut *tx).await.map_err(db_error)?;
            }
        }
        tx.commit().await.map_err(db_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_pack_and_unpack_and_a_cut_pack_is_refused() {
        let headers: Headers = vec![("traceparent".into(), "00-abc".into()), ("Empty".into(), String::new())];
        let packed = pack(&headers);
        assert_eq!(unpack(&packed).unwrap(), headers);
        assert!(unpack(&packed[..packed.len() - 1]).is_err());
        assert_eq!(unpack(&[]).unwrap(), Headers::new());
    }
}

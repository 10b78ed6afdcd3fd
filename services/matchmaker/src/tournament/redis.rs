//! Tournaments in Redis, shared by every replica. A tournament's keys share
//! one hash tag, so each Lua script below runs in one slot of a cluster:
//!
//! - `tour:{<id>}:meta`: hash with `record` (JSON), `status`, `version`
//!   and, for a Swiss once paired, `swiss` (its rounds, JSON);
//! - `tour:{<id>}:joined`, `:presence`, `:standing`, `:games`, `:results`:
//!   hashes by player or game id (JSON, or a presence word);
//! - `tour:{<id>}:counted`: set of the games whose results were counted;
//! - `tour:{<id>}:lease`, `:fence`: the driver's lease and fencing counter;
//! - `tours`: sorted set of tournament ids by start time (its own slot,
//!   written after the tournament, so a create sent again lists it).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use fogblast_redis::reply;
use fogblast_redis::PrefixedRedis;
use redis::{Script, Value};
use serde::de::DeserializeOwned;

use super::{
    json, Commit, Entrant, Joined, Presence, ReportedResult, Snapshot, Status, TournamentRecord, TournamentStore,
};
use crate::store::StoreError;

const CLOCK: &str = r#"
local function now_ms()
  local now = redis.call('TIME')
  return tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
end
"#;

/// KEYS: meta. ARGV: record. 1 when made, 0 when the id is taken.
const CREATE: &str = r#"
if redis.call('HSETNX', KEYS[1], 'record', ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'status', 'created', 'version', 1)
return 1
"#;

/// KEYS: meta, joined, presence. ARGV: player, entrant.
const JOIN: &str = r#"
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return 'none' end
if status == 'finished' then return 'finished' end
if redis.call('HGET', KEYS[3], ARGV[1]) == 'active' then return 'already' end
redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[1], 'active')
redis.call('HINCRBY', KEYS[1], 'version', 1)
return 'joined'
"#;

/// KEYS: meta, joined, presence. ARGV: player, presence.
const PRESENCE: &str = r#"
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('HINCRBY', KEYS[1], 'version', 1)
return 1
"#;

/// KEYS: meta, results, counted. ARGV: game, result.
const REPORT: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('SISMEMBER', KEYS[3], ARGV[1]) == 1 then return 0 end
return redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])
"#;

/// KEYS: lease, fence, meta. ARGV: replica, ttl ms.
const ACQUIRE: &str = r#"
if redis.call('EXISTS', KEYS[3]) == 0 then return false end
local holder = redis.call('GET', KEYS[1])
local mine = ARGV[1] .. ':'
if holder then
  if string.sub(holder, 1, #mine) == mine then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return holder
  end
  return false
end
local token = mine .. redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], token, 'PX', ARGV[2])
return token
"#;

/// KEYS: lease. ARGV: token.
const RELEASE: &str = r#"
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
"#;

/// KEYS: lease, meta, standing, games, results, counted, presence.
/// ARGV: token, status or '', the Swiss's rounds (JSON) or '', number of
/// players paused, their ids, number
/// of standings, their (player, json) pairs, number of games, their (id,
/// json) pairs, then the results taken.
const COMMIT: &str = r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] ~= '' then redis.call('HSET', KEYS[2], 'status', ARGV[2]) end
if ARGV[3] ~= '' then redis.call('HSET', KEYS[2], 'swiss', ARGV[3]) end
local i = 4
for _ = 1, tonumber(ARGV[i]) do
  redis.call('HSET', KEYS[7], ARGV[i + 1], 'paused')
  i = i + 1
end
i = i + 1
for _ = 1, tonumber(ARGV[i]) do
  redis.call('HSET', KEYS[3], ARGV[i + 1], ARGV[i + 2])
  i = i + 2
end
i = i + 1
for _ = 1, tonumber(ARGV[i]) do
  redis.call('HSET', KEYS[4], ARGV[i + 1], ARGV[i + 2])
  i = i + 2
end
for j = i + 1, #ARGV do
  redis.call('HDEL', KEYS[5], ARGV[j])
  redis.call('SADD', KEYS[6], ARGV[j])
end
redis.call('HINCRBY', KEYS[2], 'version', 1)
return 1
"#;

/// KEYS: meta, joined, presence, standing, games, results.
const SNAPSHOT: &str = r#"
local meta = redis.call('HMGET', KEYS[1], 'record', 'status', 'version', 'swiss')
if not meta[1] then return false end
return {meta[1], meta[2], meta[3], meta[4] or '', tostring(now_ms()),
  redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[3]), redis.call('HGETALL', KEYS[4]),
  redis.call('HGETALL', KEYS[5]), redis.call('HGETALL', KEYS[6])}
"#;

#[derive(Debug)]
struct Scripts {
    create: Script,
    join: Script,
    presence: Script,
    report: Script,
    acquire: Script,
    release: Script,
    commit: Script,
    snapshot: Script,
}

#[derive(Clone)]
pub struct RedisTournamentStore {
    redis: PrefixedRedis,
    scripts: Arc<Scripts>,
}

impl fmt::Debug for RedisTournamentStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisTournamentStore").field("prefix", &self.redis.prefix()).finish()
    }
}

fn unexpected(error: reply::Unexpected) -> StoreError {
    StoreError::Reply(error.to_string())
}

fn parse<T: DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    Ok(serde_json::from_str(text)?)
}

fn status_word(status: Status) -> &'static str {
    match status {
        Status::Created => "created",
        Status::Started => "started",
        Status::Finished => "finished",
    }
}

fn status_of(word: &str) -> Result<Status, StoreError> {
    match word {
        "created" => Ok(Status::Created),
        "started" => Ok(Status::Started),
        "finished" => Ok(Status::Finished),
        other => Err(StoreError::Reply(format!("unknown tournament status {other:?}"))),
    }
}

pub(crate) fn presence_word(presence: Presence) -> &'static str {
    match presence {
        Presence::Active => "active",
        Presence::Paused => "paused",
        Presence::Withdrawn => "withdrawn",
    }
}

fn presence_of(word: &str) -> Result<Presence, StoreError> {
    match word {
        "active" => Ok(Presence::Active),
        "paused" => Ok(Presence::Paused),
        "withdrawn" => Ok(Presence::Withdrawn),
        other => Err(StoreError::Reply(format!("unknown presence {other:?}"))),
    }
}

fn map<T>(value: &Value, read: impl Fn(&str) -> Result<T, StoreError>) -> Result<BTreeMap<String, T>, StoreError> {
    reply::string_pairs(value).map_err(unexpected)?.into_iter().map(|(k, v)| Ok((k, read(&v)?))).collect()
}

impl RedisTournamentStore {
    /// Connects to the Redis at `url`, keeping every key under `<key_prefix>mm:`.
    pub async fn connect(url: &str, key_prefix: &str) -> Result<RedisTournamentStore, StoreError> {
        let redis = PrefixedRedis::connect(url, format!("{key_prefix}mm:")).await?;
        let with_clock = |body: &str| Script::new(&format!("{CLOCK}{body}"));
        let scripts = Scripts {
            create: Script::new(CREATE),
            join: Script::new(JOIN),
            presence: Script::new(PRESENCE),
            report: Script::new(REPORT),
            acquire: Script::new(ACQUIRE),
            release: Script::new(RELEASE),
            commit: Script::new(COMMIT),
            snapshot: with_clock(SNAPSHOT),
        };
        Ok(RedisTournamentStore { redis, scripts: Arc::new(scripts) })
    }

    fn key(&self, id: &str, part: &str) -> String {
        format!("{}:{part}", self.redis.tagged("tour", id))
    }

    async fn run<T: redis::FromRedisValue>(&self, invocation: &redis::ScriptInvocation<'_>) -> Result<T, StoreError> {
        Ok(self.redis.run(invocation).await?)
    }
}

#[async_trait]
impl TournamentStore for RedisTournamentStore {
    async fn now_ms(&self) -> Result<u64, StoreError> {
        let reply: Value = self.redis.query(&redis::cmd("TIME")).await?;
        let parts = reply::array(&reply).map_err(unexpected)?;
        let (Some(secs), Some(micros)) = (parts.first(), parts.get(1)) else {
            return Err(StoreError::Reply(format!("TIME answered {reply:?}")));
        };
        let secs = reply::uint(secs).map_err(unexpected)?;
        let micros = reply::uint(micros).map_err(unexpected)?;
        Ok(secs * 1000 + micros / 1000)
    }

    async fn create(&self, record: &TournamentRecord) -> Result<bool, StoreError> {
        let mut invocation = self.scripts.create.prepare_invoke();
        invocation.key(self.key(&record.id, "meta")).arg(json(record)?);
        let made: i64 = self.run(&invocation).await?;
        // Listed even when the first try stopped between the two writes.
        let listed = redis::cmd("ZADD").arg(self.redis.key("tours")).arg(record.starts_ms).arg(&record.id).to_owned();
        let _: Value = self.redis.query(&listed).await?;
        Ok(made == 1)
    }

    async fn list(&self, since_ms: u64) -> Result<Vec<(TournamentRecord, Status, usize)>, StoreError> {
        let ids: Vec<String> =
            self.redis.query(redis::cmd("ZRANGE").arg(self.redis.key("tours")).arg(0).arg(-1)).await?;
        let mut listed = Vec::new();
        for id in ids {
            let meta: Vec<Option<String>> =
                self.redis.query(redis::cmd("HMGET").arg(self.key(&id, "meta")).arg("record").arg("status")).await?;
            let (Some(Some(record)), Some(Some(status))) = (meta.first(), meta.get(1)) else { continue };
            let record: TournamentRecord = parse(record)?;
            let status = status_of(status)?;
            if status == Status::Finished && record.ends_ms() < since_ms {
                continue;
            }
            let joined: usize = self.redis.query(redis::cmd("HLEN").arg(self.key(&id, "joined"))).await?;
            listed.push((record, status, joined));
        }
        Ok(listed)
    }

    async fn snapshot(&self, id: &str) -> Result<Option<Snapshot>, StoreError> {
        let mut invocation = self.scripts.snapshot.prepare_invoke();
        for part in ["meta", "joined", "presence", "standing", "games", "results"] {
            invocation.key(self.key(id, part));
        }
        let reply: Value = self.run(&invocation).await?;
        if reply == Value::Nil {
            return Ok(None);
        }
        let parts = reply::array(&reply).map_err(unexpected)?;
        let [record, status, version, swiss, now, joined, presence, standing, games, results] = parts else {
            return Err(StoreError::Reply(format!("a tournament snapshot of {} parts", parts.len())));
        };
        let text = |value: &Value| reply::text(value).map_err(unexpected);
        Ok(Some(Snapshot {
            record: parse(&text(record)?)?,
            status: status_of(&text(status)?)?,
            version: text(version)?.parse().map_err(|_| StoreError::Reply("a version".into()))?,
            now_ms: text(now)?.parse().map_err(|_| StoreError::Reply("a time".into()))?,
            joined: map(joined, parse::<Entrant>)?,
            presence: map(presence, presence_of)?,
            standing: map(standing, parse)?,
            games: map(games, parse)?,
            results: map(results, parse)?,
            swiss: Some(text(swiss)?).filter(|s| !s.is_empty()).map(|s| parse(&s)).transpose()?,
        }))
    }

    async fn join(&self, id: &str, player: &str, entrant: &Entrant) -> Result<Joined, StoreError> {
        let mut invocation = self.scripts.join.prepare_invoke();
        invocation.key(self.key(id, "meta")).key(self.key(id, "joined")).key(self.key(id, "presence"));
        invocation.arg(player).arg(json(entrant)?);
        let answer: String = self.run(&invocation).await?;
        Ok(match answer.as_str() {
            "joined" => Joined::Joined,
            "already" => Joined::Already,
            "finished" => Joined::Finished,
            _ => Joined::NoSuchTournament,
        })
    }

    async fn set_presence(&self, id: &str, player: &str, presence: Presence) -> Result<bool, StoreError> {
        let mut invocation = self.scripts.presence.prepare_invoke();
        invocation.key(self.key(id, "meta")).key(self.key(id, "joined")).key(self.key(id, "presence"));
        invocation.arg(player).arg(presence_word(presence));
        let set: i64 = self.run(&invocation).await?;
        Ok(set == 1)
    }

    async fn report(&self, id: &str, result: &ReportedResult) -> Result<bool, StoreError> {
        let mut invocation = self.scripts.report.prepare_invoke();
        invocation.key(self.key(id, "meta")).key(self.key(id, "results")).key(self.key(id, "counted"));
        invocation.arg(&result.game).arg(json(result)?);
        let added: i64 = self.run(&invocation).await?;
        Ok(added == 1)
    }

    async fn acquire(&self, id: &str, replica: &str, ttl: Duration) -> Result<Option<String>, StoreError> {
        let mut invocation = self.scripts.acquire.prepare_invoke();
        invocation.key(self.key(id, "lease")).key(self.key(id, "fence")).key(self.key(id, "meta"));
        invocation.arg(replica).arg(ttl.as_millis() as u64);
        self.run(&invocation).await
    }

    async fn release(&self, id: &str, token: &str) -> Result<(), StoreError> {
        let mut invocation = self.scripts.release.prepare_invoke();
        invocation.key(self.key(id, "lease")).arg(token);
        let _: i64 = self.run(&invocation).await?;
        Ok(())
    }

    async fn commit(&self, id: &str, token: &str, commit: &Commit) -> Result<bool, StoreError> {
        let mut invocation = self.scripts.commit.prepare_invoke();
        for part in ["lease", "meta", "standing", "games", "results", "counted", "presence"] {
            invocation.key(self.key(id, part));
        }
        invocation.arg(token).arg(commit.status.map_or("", status_word));
        invocation.arg(commit.swiss.as_ref().map(json).transpose()?.unwrap_or_default());
        invocation.arg(commit.paused.len());
        for player in &commit.paused {
            invocation.arg(player);
        }
        invocation.arg(commit.standing.len());
        for (player, standing) in &commit.standing {
            invocation.arg(player).arg(json(standing)?);
        }
        invocation.arg(commit.games.len());
        for game in &commit.games {
            invocation.arg(&game.id).arg(json(game)?);
        }
        for game in &commit.results_taken {
            invocation.arg(game);
        }
        let written: i64 = self.run(&invocation).await?;
        Ok(written == 1)
    }
}

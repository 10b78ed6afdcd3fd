//! `fogblast migrate`: brings the archive's schema up to date and exits.
//! The rating service migrates when it starts too; this command lets a
//! deployment do it once, before any replica starts (a Kubernetes Job, a
//! compose service that the rating service waits for). It runs the same
//! embedded migrations as the rating service, so both always agree.

use anyhow::Context;
use fogblast_rating::Archive;
use tracing::info;

#[derive(Debug, clap::Args)]
pub struct MigrateArgs {
    /// Postgres (`postgres://…`) or SQLite (`sqlite:fogblast.db?mode=rwc`) to migrate.
    #[arg(long = "database-url", env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: String,
    /// Give up if the database cannot be reached and migrated within this many ms (it may still be starting).
    #[arg(long = "migrate-timeout-ms", env = "FOGBLAST_MIGRATE_TIMEOUT_MS", default_value_t = 60_000)]
    pub timeout_ms: u64,
}

pub fn run(args: MigrateArgs) -> anyhow::Result<()> {
    crate::signals::init_logging();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(migrate(args))
}

async fn migrate(args: MigrateArgs) -> anyhow::Result<()> {
    let timeout = std::time::Duration::from_millis(args.timeout_ms);
    let deadline = tokio::time::Instant::now() + timeout;
    let target = redacted(&args.database_url);
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        // One attempt may itself wait (the driver retries a refused
        // connection): it gets no more than the time that is left.
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let outcome = match tokio::time::timeout(left, Archive::connect(&args.database_url)).await {
            Ok(outcome) => outcome.map_err(anyhow::Error::from),
            Err(_) => Err(anyhow::anyhow!("no answer within {} ms", args.timeout_ms)),
        };
        match outcome {
            Ok(_) => {
                info!(database = %target, attempt, "schema is up to date");
                return Ok(());
            }
            // A URL that is neither Postgres nor SQLite will not get better.
            Err(error) if matches!(error.downcast_ref(), Some(fogblast_rating::ArchiveError::Url(_))) => {
                return Err(error);
            }
            Err(error) if tokio::time::Instant::now() + RETRY_PAUSE < deadline => {
                info!(database = %target, attempt, error = %format!("{error:#}"), "database not ready; retrying");
                tokio::time::sleep(RETRY_PAUSE).await;
            }
            Err(error) => {
                return Err(error.context(format!("migrating {target} (gave up after {attempt} attempts)")));
            }
        }
    }
}

const RETRY_PAUSE: std::time::Duration = std::time::Duration::from_secs(1);

/// The URL with any password replaced, for logs and errors. Everything
/// up to the last `@` counts as user and password, so a password holding
/// `/` or `@` never shows.
fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    match rest.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split_once(':').map_or(userinfo, |(user, _password)| user);
            let hidden = if userinfo.contains(':') { ":***" } else { "" };
            format!("{scheme}://{user}{hidden}@{host}")
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use sqlx::{Connection, PgConnection, Row};

    use super::{migrate, redacted, MigrateArgs};

    fn postgres_base() -> String {
        std::env::var("FOGBLAST_TEST_POSTGRES_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".to_owned())
    }

    fn args(url: &str, timeout_ms: u64) -> MigrateArgs {
        MigrateArgs { database_url: url.to_owned(), timeout_ms }
    }

    #[test]
    fn passwords_are_hidden() {
        assert_eq!(redacted("postgres://fog:s3cret@db:5432/fogblast"), "postgres://fog:***@db:5432/fogblast");
        assert_eq!(redacted("postgres://fog@db/fogblast"), "postgres://fog@db/fogblast");
        assert_eq!(redacted("postgres://db"), "postgres://db");
        assert_eq!(redacted("sqlite:fogblast.db?mode=rwc"), "sqlite:fogblast.db?mode=rwc");
        assert_eq!(redacted("postgres://a:b:c@h/d"), "postgres://a:***@h/d");
        assert_eq!(redacted("postgres://a:p/w@x@h/d"), "postgres://a:***@h/d");
    }

    /// A fresh database gets the archive's tables; a second run finds
    /// nothing to do and succeeds too.
    #[tokio::test]
    async fn migrates_a_fresh_postgres_database_twice() {
        let name = format!("test_migrate_{:08x}", rand::random::<u32>());
        let mut admin = PgConnection::connect(&format!("{}/postgres", postgres_base())).await.unwrap();
        sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin).await.unwrap();
        let url = format!("{}/{name}", postgres_base());
        let first = migrate(args(&url, 30_000)).await;
        let second = migrate(args(&url, 30_000)).await;
        let tables: Vec<String> = {
            let mut db = PgConnection::connect(&url).await.unwrap();
            let rows = sqlx::query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
                .fetch_all(&mut db)
                .await
                .unwrap();
            db.close().await.unwrap();
            rows.iter().map(|row| row.get::<String, _>(0)).collect()
        };
        sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).execute(&mut admin).await.unwrap();
        first.unwrap();
        second.unwrap();
        for table in ["_sqlx_migrations", "games", "players", "rated_games", "ratings"] {
            assert!(tables.iter().any(|t| t == table), "{table} missing from {tables:?}");
        }
    }

    #[tokio::test]
    async fn an_unsupported_url_fails_at_once() {
        let started = std::time::Instant::now();
        let error = migrate(args("mysql://db/fogblast", 30_000)).await.unwrap_err();
        assert!(format!("{error:#}").contains("unsupported database url"), "{error:#}");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    /// Nothing listens on the port: the command retries, then gives up
    /// near its deadline, without showing the password.
    #[tokio::test]
    async fn an_unreachable_database_gives_up_in_time() {
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let started = std::time::Instant::now();
        let error =
            migrate(args(&format!("postgres://fog:hunter2@127.0.0.1:{port}/fogblast"), 2_500)).await.unwrap_err();
        let elapsed = started.elapsed();
        let text = format!("{error:#}");
        assert!(text.contains("gave up after"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
        assert!(elapsed >= std::time::Duration::from_millis(1_000), "gave up after only {elapsed:?}");
        assert!(elapsed < std::time::Duration::from_secs(10), "took {elapsed:?}");
    }
}

//! Whether the database can be reached, and a breaker that stops asking it while it cannot.
//!
//! When a statement fails because the database is unreachable (refused or dropped
//! connections, a pool that timed out, PostgreSQL shutting down), the pool is marked down:
//! from then on statements on it fail at once, answered 503 with `Retry-After` by both doors,
//! instead of each waiting out the pool's acquire timeout. One probe per pool pings the
//! database every half second and closes the breaker when it answers, so service resumes
//! without a restart.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use sea_orm::{ConnAcquireErr, DatabaseConnection, DbErr, RuntimeErr, sqlx};

/// How often a down database is probed.
const PROBE_EVERY: Duration = Duration::from_millis(500);

/// The state of one pool, shared by every clone of a store.
#[derive(Debug, Default)]
pub(crate) struct PoolWatch {
    /// Statements on the pool now, running or waiting for a connection (for the metrics).
    pub(crate) on_pool: AtomicUsize,
    /// Statements sent since the store was made, on the pool and in its transactions: what a
    /// test counts to see that a page's cost does not grow with the data.
    pub(crate) sent: std::sync::atomic::AtomicU64,
    down: AtomicBool,
    probing: AtomicBool,
}

impl PoolWatch {
    /// Whether the database was last seen unreachable.
    pub(crate) fn is_down(&self) -> bool {
        self.down.load(Ordering::Acquire)
    }

    /// Runs `statement` on `pool`: refused at once while the database is down, counted on
    /// the pool while it runs or waits for a connection, and its outcome observed.
    pub(crate) async fn run<T>(
        self: &Arc<Self>,
        pool: &DatabaseConnection,
        statement: impl Future<Output = Result<T, DbErr>>,
    ) -> Result<T, DbErr> {
        self.check()?;
        self.sent.fetch_add(1, Ordering::Relaxed);
        self.on_pool.fetch_add(1, Ordering::Relaxed);
        let _counted = Counted(&self.on_pool);
        let result = statement.await;
        self.observe(pool, &result);
        result
    }

    /// Refuses at once while the database is down.
    pub(crate) fn check(&self) -> Result<(), DbErr> {
        if self.is_down() {
            return Err(DbErr::ConnectionAcquire(ConnAcquireErr::Timeout));
        }
        Ok(())
    }

    /// Looks at a statement's outcome: an unreachable database opens the breaker and starts
    /// the probe that will close it.
    pub(crate) fn observe<T>(
        self: &Arc<Self>,
        pool: &DatabaseConnection,
        result: &Result<T, DbErr>,
    ) {
        let Err(err) = result else { return };
        if !unreachable(err) {
            return;
        }
        if !self.down.swap(true, Ordering::AcqRel) {
            tracing::warn!(error = %err, "the database is unreachable; answering 503 until it is back");
        }
        if self.probing.swap(true, Ordering::AcqRel) {
            return;
        }
        let (watch, pool) = (self.clone(), pool.clone());
        // Without a runtime (never the case in the service) the breaker closes on the next
        // statement that succeeds instead; there is none while it is open, so refuse nothing.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.down.store(false, Ordering::Release);
            self.probing.store(false, Ordering::Release);
            return;
        };
        runtime.spawn(async move {
            loop {
                tokio::time::sleep(PROBE_EVERY).await;
                if pool.ping().await.is_ok() {
                    watch.down.store(false, Ordering::Release);
                    watch.probing.store(false, Ordering::Release);
                    tracing::info!("the database answers again");
                    return;
                }
            }
        });
    }
}

/// Takes a statement off the pool's count when it ends, however it ends (a dropped request
/// included).
struct Counted<'a>(&'a AtomicUsize);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Whether `err` says the database cannot be reached now, rather than that a statement was
/// wrong: the connection could not be made or was lost, or the server is shutting down.
pub(crate) fn unreachable(err: &DbErr) -> bool {
    let runtime = match err {
        DbErr::ConnectionAcquire(_) | DbErr::Conn(_) => return true,
        DbErr::Exec(runtime) | DbErr::Query(runtime) => runtime,
        _ => return false,
    };
    let RuntimeErr::SqlxError(err) = runtime else {
        return false;
    };
    match err.as_ref() {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        // PostgreSQL's classes 08 (connection exception) and 57 (operator intervention:
        // admin shutdown, crash shutdown, cannot connect now).
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|code| code.starts_with("08") || code.starts_with("57")),
        _ => false,
    }
}

/// Whether `err` is worth a retry in a moment rather than a fault: the database is
/// unreachable, or SQLite's write lock stayed busy past its wait (`store::sqlite_busy`).
pub(crate) fn transient(err: &DbErr) -> bool {
    if unreachable(err) {
        return true;
    }
    let (DbErr::Exec(RuntimeErr::SqlxError(err)) | DbErr::Query(RuntimeErr::SqlxError(err))) = err
    else {
        return false;
    };
    match err.as_ref() {
        // SQLITE_BUSY and SQLITE_LOCKED (their primary codes, extended codes included).
        sqlx::Error::Database(db) => db.code().is_some_and(|code| {
            let primary = code.parse::<i32>().map(|c| c & 0xff);
            matches!(primary, Ok(5 | 6))
                && db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some()
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_failures_are_unreachable_and_statement_faults_are_not() {
        assert!(unreachable(&DbErr::ConnectionAcquire(
            ConnAcquireErr::Timeout
        )));
        let io = DbErr::Query(RuntimeErr::SqlxError(Arc::new(sqlx::Error::Io(
            std::io::Error::from(std::io::ErrorKind::ConnectionRefused),
        ))));
        assert!(unreachable(&io) && transient(&io));
        let pool = DbErr::Exec(RuntimeErr::SqlxError(Arc::new(sqlx::Error::PoolTimedOut)));
        assert!(unreachable(&pool));
        let missing = DbErr::Query(RuntimeErr::SqlxError(Arc::new(sqlx::Error::RowNotFound)));
        assert!(!unreachable(&missing) && !transient(&missing));
        assert!(!unreachable(&DbErr::Custom("bad".into())));
        assert!(!unreachable(&DbErr::RecordNotFound("x".into())));
    }

    #[tokio::test]
    async fn the_breaker_refuses_at_once_and_closes_when_the_database_answers() {
        let pool = sea_orm::Database::connect("sqlite::memory:").await.unwrap();
        let watch = Arc::new(PoolWatch::default());
        assert!(watch.check().is_ok());
        let lost: Result<(), DbErr> = Err(DbErr::Conn(RuntimeErr::Internal("lost".into())));
        watch.observe(&pool, &lost);
        assert!(watch.is_down());
        assert!(matches!(
            watch.check(),
            Err(DbErr::ConnectionAcquire(ConnAcquireErr::Timeout))
        ));
        // The in-memory database answers the probe: the breaker closes within a few probes.
        for _ in 0..40 {
            if !watch.is_down() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(!watch.is_down());
        assert!(watch.check().is_ok());
    }
}

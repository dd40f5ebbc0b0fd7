//! Persistence: the only module that talks to the database. Every query lives here, and so do
//! every visibility rule (`visibility`) and every rule of who may do what (`access`), so the JSON
//! API and the portal cannot disagree on either.

pub mod access;
mod account_links;
mod audit;
mod availability;
mod backup;
mod cache;
mod conn;
mod consents;
pub mod entities;
mod erasure;
mod files;
mod group_tallies;
mod groups;
mod inbox_tallies;
mod jobs;
mod login_attempts;
mod measurement_reports;
mod measurements;
mod notifications;
mod portal;
mod profiles;
pub mod query;
mod report_links;
mod reports;
pub mod resources;
mod sessions;
mod shared_links;
mod sqlite_busy;
mod tokens;
mod users;
pub mod visibility;
mod webhooks;
mod work_tallies;

use std::sync::Arc;
use std::time::Duration;

use migration::MigratorTrait;
use sea_orm::sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous,
};
use sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DbBackend, DbErr, SqlErr,
    SqlxSqliteConnector,
};

pub use access::{AdminTask, Denied, GroupTask};
pub use account_links::NewAccountLink;
pub use audit::{AuditAction, AuditEntry, AuditFilter};
pub use consents::NewConsent;
pub use erasure::{Holdings, RetentionDue, Tombstoned, erasure_key_prefix};
pub use files::NewFile;
pub use groups::NewGroup;
pub use jobs::{NewJob, QueueStatus};
pub use measurement_reports::{NewMeasurementReport, ReportRecord};
pub use measurements::{ListedMeasurement, ListedRecord, MeasurementChange, MeasurementRecord};
pub use notifications::{FanOut, NewEvent, Recipient, UNREAD_COUNTED};
pub use portal::{
    EnlistmentSummary, LIST_COUNTED, PatientListing, PatientSummary, WorkItem, WorkListing,
    WorkReason,
};
pub use report_links::NewReportLink;
pub use reports::{MEASUREMENT_ITEM_FIELDS, NewReport, OpenPrescription};
pub use shared_links::NewSharedLink;
pub use tokens::{AccessCheck, NewTokenPair, RefreshCheck};
pub use users::{NewUser, UserChanges, UserRecord};
pub use visibility::{AsSet, Both, Prescription, Scope, Service, Viewer};
pub use webhooks::{DeliveryRecord, NewWebhook};

use crate::domain::clock::Clock;

/// Failures of the store that callers handle; anything else is a database fault.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The e-mail address belongs to another account.
    #[error("e-mail address already in use")]
    EmailUsed,
    /// The object does not exist (or is not visible).
    #[error("not found")]
    NotFound,
    /// The object is visible, but the action is not the viewer's to take (see `access`).
    #[error(transparent)]
    Denied(Denied),
    /// The object changed while the change was being made; read it again and retry.
    #[error("the object changed meanwhile; read it again and retry")]
    Changed,
    /// The database cannot be reached now, or stayed busy past its wait: worth a retry in a
    /// moment (answered 503 with `Retry-After`).
    #[error("the database is unavailable: {0}")]
    Unavailable(DbErr),
    /// The database failed.
    #[error(transparent)]
    Db(DbErr),
}

impl From<DbErr> for StoreError {
    fn from(err: DbErr) -> Self {
        // Constraint violations are mapped here, once, so callers never parse driver messages.
        match err.sql_err() {
            Some(SqlErr::UniqueConstraintViolation(message)) if message.contains("email") => {
                StoreError::EmailUsed
            }
            _ if availability::transient(&err) => StoreError::Unavailable(err),
            _ => StoreError::Db(err),
        }
    }
}

/// The database pool at one instant (see [`Store::pool_status`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStatus {
    pub in_use: usize,
    pub idle: usize,
    pub max: usize,
    pub waiting: usize,
}

/// Result of store operations.
pub type StoreResult<T> = Result<T, StoreError>;

/// Reads of the database, on the pool ([`Store`]) or inside a transaction ([`Tx`]): every
/// function that only reads is here, and both reach it (they dereference to it). It cannot
/// begin a transaction, and it cannot be cloned, so a transaction's reader never outlives it.
pub struct Reader {
    /// Where the queries run: the pool, or the transaction of [`Store::begin`].
    db: conn::Db,
    pool: DatabaseConnection,
    clock: Arc<dyn Clock>,
    cache: Arc<cache::ReadCache>,
    /// Wakes the job workers of this process when queued work commits.
    outbox: Arc<tokio::sync::Notify>,
    /// Set when this transaction queued work; its commit wakes the workers.
    queued: Arc<std::sync::atomic::AtomicBool>,
    /// How many statements this store's pool and transactions have run (see
    /// [`Reader::statements_run`]).
    statements: Arc<std::sync::atomic::AtomicU64>,
    /// The records of reads waiting for their group commit (see `audit::GroupCommit`).
    group_commit: Arc<audit::GroupCommit>,
}

/// Handle to the database's pool; cheap to clone. Reads through it directly (it dereferences
/// to [`Reader`]); writes happen only in a [`Tx`] it begins.
pub struct Store(Reader);

/// The store as request handlers hold it: every read of [`Reader`] and the readiness probe,
/// and nothing that begins a transaction. A handler changes data only through
/// `actions::Actions`, which holds the [`Store`]; with this handle a write does not compile.
#[derive(Clone)]
pub struct ReadOnly(Store);

impl std::ops::Deref for ReadOnly {
    type Target = Reader;

    fn deref(&self) -> &Reader {
        &self.0.0
    }
}

impl ReadOnly {
    /// An owned reader of the pool, for an answer streamed after its handler returned.
    pub fn reader(&self) -> Reader {
        self.0.reader()
    }

    /// See [`Store::ping`].
    pub async fn ping(&self, within: Duration) -> Result<(), DbErr> {
        self.0.ping(within).await
    }
}

/// One transaction: the reads, the writes and the audit record of one action (or of one step
/// of a worker). Every write of the store is a method of `Tx`. Its only ways out are
/// [`Tx::commit`] with the action's audit record, [`Tx::commit_unaudited`] naming why there
/// is none, and being dropped, which rolls it back. It cannot be cloned, and it cannot begin
/// another transaction: a store function that needs a step of its own inside it takes a
/// savepoint.
pub struct Tx(Reader);

impl std::ops::Deref for Store {
    type Target = Reader;

    fn deref(&self) -> &Reader {
        &self.0
    }
}

impl std::ops::Deref for Tx {
    type Target = Reader;

    fn deref(&self) -> &Reader {
        &self.0
    }
}

impl Clone for Store {
    fn clone(&self) -> Self {
        let r = &self.0;
        Store(Reader {
            db: r.db.clone(),
            pool: r.pool.clone(),
            clock: r.clock.clone(),
            cache: r.cache.clone(),
            outbox: r.outbox.clone(),
            queued: r.queued.clone(),
            statements: r.statements.clone(),
            group_commit: r.group_commit.clone(),
        })
    }
}

pub use crate::config::DEFAULT_CACHE_TTL;

/// Why a transaction commits without an audit record: each reason is a part of the service
/// that writes on no person's behalf, or a write that is itself the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unaudited {
    /// The scheduler's and the notifier's work: jobs, periodic reports, events, inbox entries,
    /// deliveries. Each report and event is visible in the portal and the API, and the
    /// notifier's deliveries have their own log.
    Workers,
    /// Login bookkeeping: failed-attempt counters, tokens issued and rotated. The login
    /// itself is audited by the action that asked for it.
    Logins,
    /// Portal sessions and shared secrets: the session store's own rows.
    Sessions,
    /// A reader marking its own inbox entries read: its own bookkeeping, about no one's data.
    Inbox,
    /// Stored files and report documents a render produced; the action that asked for the
    /// render audits it.
    Renders,
    /// The command line's setup and maintenance (`user add`, the demo seed, reanalysis,
    /// migrations of files), run by whoever runs the server.
    Operator,
    /// The steps of an erasure or of retention that remove stored contents and rows; the
    /// erasure's request and its last step, which makes the account a tombstone, are
    /// audited, as is each retention run.
    Erasure,
}

impl Store {
    /// Connects to `url` (`sqlite://…` or `postgres://…`). SQLite files and their folder are
    /// created when missing.
    pub async fn connect(url: &str, clock: Arc<dyn Clock>) -> Result<Self, DbErr> {
        let mut options = ConnectOptions::new(url.to_owned());
        options
            .sqlx_logging(false)
            .connect_timeout(Duration::from_secs(10))
            .acquire_timeout(WAIT_FOR_CONNECTION);
        if url.starts_with("sqlite:") {
            let parent = sqlite_path(url).and_then(|p| std::path::Path::new(p).parent());
            if let Some(parent) = parent.filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|e| {
                    DbErr::Custom(format!("cannot create {}: {e}", parent.display()))
                })?;
            }
            options
                .max_connections(8)
                .min_connections(1)
                .map_sqlx_sqlite_opts(sqlite_options)
                .map_sqlx_sqlite_pool_opts(with_busy_handler);
        } else {
            options
                .max_connections(16)
                .min_connections(2)
                // PostgreSQL compiles a statement to machine code (JIT) once its estimated
                // cost passes `jit_above_cost`. The access gate's correlated probes make the
                // estimates of a list large, and compiling took 1.18 s of a 1.28 s inbox page
                // at 20,000 measurements; Tacho's statements are short reads, which JIT never
                // pays back.
                .map_sqlx_postgres_opts(|pg| pg.options([("jit", "off")]));
        }
        let mut pool = Database::connect(options).await?;
        let statements = Arc::new(std::sync::atomic::AtomicU64::new(0));
        count_statements(&mut pool, &statements);
        let watch = Arc::<availability::PoolWatch>::default();
        let group_commit = match sqlite_path(url) {
            Some(_) => {
                let mut writer = sqlite_writer(&pool);
                count_statements(&mut writer, &statements);
                audit::GroupCommit::with_writer(conn::Db::Pool(writer, watch.clone()))
            }
            // An in-memory database is the pool's own; PostgreSQL keeps no pages per
            // connection.
            None => audit::GroupCommit::default(),
        };
        let cache = Arc::new(cache::ReadCache::new(DEFAULT_CACHE_TTL));
        Ok(Store(Reader {
            db: conn::Db::Pool(pool.clone(), watch),
            pool,
            clock,
            cache,
            outbox: Arc::default(),
            queued: Arc::default(),
            statements,
            group_commit: Arc::new(group_commit),
        }))
    }

    /// Sets how long token and user lookups are cached; zero turns the cache off.
    pub fn with_cache_ttl(mut self, ttl: Duration) -> Self {
        self.0.cache = Arc::new(cache::ReadCache::new(ttl));
        self
    }

    /// Brings the schema up to date (see [`Store::migrate_url`] for why only there).
    async fn migrate(&self) -> Result<(), DbErr> {
        migration::Migrator::up(&self.pool, None).await
    }

    /// Brings the schema of `url` up to date on a connection pool of its own, closed before
    /// returning. A serving pool opened afterwards never holds a connection that read the
    /// schema half-way through the migrations (SQLite prepares statements against the schema
    /// a connection last read, so such a connection could miss a new unique index).
    pub async fn migrate_url(url: &str) -> Result<(), DbErr> {
        let store = Store::connect(url, Arc::new(crate::domain::clock::SystemClock)).await?;
        let migrated = store.migrate().await;
        store.0.pool.close().await?;
        migrated
    }

    /// Checks that the database answers: at once when it was last seen unreachable (its
    /// probe is asking meanwhile), else by a round trip of at most `within`.
    pub async fn ping(&self, within: Duration) -> Result<(), DbErr> {
        if let conn::Db::Pool(_, watch) = &self.db {
            watch.check()?;
        }
        match tokio::time::timeout(within, self.pool.ping()).await {
            Ok(answer) => answer,
            Err(_) => Err(DbErr::ConnectionAcquire(sea_orm::ConnAcquireErr::Timeout)),
        }
    }

    /// Whether an error of this store's means the database is unreachable or busy now.
    pub fn is_transient(err: &DbErr) -> bool {
        availability::transient(err)
    }

    /// The connection pool now: connections in use and idle, its maximum, and a lower bound
    /// of the statements waiting for a connection (statements on the pool beyond the
    /// connections in use; a transaction holds its connection between statements, so it can
    /// hide a waiter).
    pub fn pool_status(&self) -> PoolStatus {
        let on_pool = self
            .watch()
            .on_pool
            .load(std::sync::atomic::Ordering::Relaxed);
        let (size, idle, max) = match self.backend() {
            DbBackend::Postgres => {
                let pool = self.pool.get_postgres_connection_pool();
                (
                    pool.size(),
                    pool.num_idle(),
                    pool.options().get_max_connections(),
                )
            }
            _ => {
                let pool = self.pool.get_sqlite_connection_pool();
                (
                    pool.size(),
                    pool.num_idle(),
                    pool.options().get_max_connections(),
                )
            }
        };
        let in_use = (size as usize).saturating_sub(idle);
        PoolStatus {
            in_use,
            idle,
            max: max as usize,
            waiting: on_pool.saturating_sub(in_use),
        }
    }

    /// The raw connection, for the few places (tests, tools) that need it.
    pub fn connection(&self) -> &DatabaseConnection {
        &self.pool
    }

    /// A new transaction, whose every query runs in it until [`Tx::commit`]; dropped without
    /// a commit, it is rolled back. On SQLite it takes the write lock at once (`BEGIN
    /// IMMEDIATE`): an action reads (who may do what) before it writes.
    pub async fn begin(&self) -> StoreResult<Tx> {
        let txn = conn::Db::begin_action(&self.pool).await?;
        let r = &self.0;
        Ok(Tx(Reader {
            db: conn::Db::Transaction(Arc::new(txn), self.watch()),
            pool: r.pool.clone(),
            clock: r.clock.clone(),
            cache: r.cache.clone(),
            outbox: r.outbox.clone(),
            queued: Arc::default(),
            statements: r.statements.clone(),
            group_commit: r.group_commit.clone(),
        }))
    }

    /// Runs `work` in a transaction of its own and commits it without an audit record, for
    /// `why`: the writes of the service's own machinery (workers, login bookkeeping, sessions,
    /// renders, the operator's tools). Actions commit with their audit record instead.
    pub async fn write<T>(
        &self,
        why: Unaudited,
        work: impl AsyncFnOnce(&Tx) -> StoreResult<T>,
    ) -> StoreResult<T> {
        let tx = self.begin().await?;
        let value = work(&tx).await?;
        tx.commit_unaudited(why).await?;
        Ok(value)
    }

    /// A reader of the pool, for a part of the service that only reads.
    pub fn reader(&self) -> Reader {
        self.clone().0
    }

    /// This store without its writes, for the request handlers ([`ReadOnly`]).
    pub fn read_only(&self) -> ReadOnly {
        ReadOnly(self.clone())
    }

    /// Completes when work has been queued by this process since the last call (or at once,
    /// if some was queued while no one waited).
    pub async fn queued_work(&self) {
        self.outbox.notified().await
    }
}

impl Tx {
    /// Appends the action's audit records (usually one; one per object it touched) and
    /// commits.
    pub async fn commit(self, records: Vec<AuditEntry>) -> StoreResult<()> {
        self.audit_many(records).await?;
        self.finish().await
    }

    /// Commits without an audit record, for the reason given (see [`Unaudited`]).
    pub async fn commit_unaudited(self, _why: Unaudited) -> StoreResult<()> {
        self.finish().await
    }

    async fn finish(self) -> StoreResult<()> {
        let Tx(reader) = self;
        let conn::Db::Transaction(txn, _) = reader.db else {
            unreachable!("a Tx is made by Store::begin, on a transaction");
        };
        let txn = Arc::into_inner(txn).ok_or_else(|| {
            StoreError::Db(DbErr::Custom(
                "a reader of the transaction outlived it".into(),
            ))
        })?;
        txn.commit().await?;
        // Reads cached while the transaction ran saw the state before it.
        reader.cache.invalidate();
        if reader.queued.load(std::sync::atomic::Ordering::Acquire) {
            reader.outbox.notify_one();
        }
        Ok(())
    }
}

impl Reader {
    /// The pool's watch, shared by the pool's store and its transactions.
    fn watch(&self) -> Arc<availability::PoolWatch> {
        match &self.db {
            conn::Db::Pool(_, watch) | conn::Db::Transaction(_, watch) => watch.clone(),
        }
    }

    /// How many statements this store (its pool and its transactions) has sent since it was
    /// made: tests compare it before and after a page to see that the page's cost does not grow
    /// with the data.
    pub fn statements_sent(&self) -> u64 {
        self.watch().sent.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Which database this is.
    pub fn backend(&self) -> DbBackend {
        self.db.get_database_backend()
    }

    /// The clock the store stamps records with.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    fn now(&self) -> i64 {
        self.clock.now_millis()
    }

    /// How many SQL statements this store has run since it connected, over all its
    /// connections and transactions: a page's cost in statements is the difference across
    /// one request.
    pub fn statements_run(&self) -> u64 {
        self.statements.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Wakes this process's job workers for work just queued: at once outside a
    /// transaction, at its commit inside one (a worker woken earlier would not see the work).
    pub(crate) fn events_written(&self) {
        match self.db {
            conn::Db::Pool(..) => self.outbox.notify_one(),
            conn::Db::Transaction(..) => self
                .queued
                .store(true, std::sync::atomic::Ordering::Release),
        }
    }
}

/// Past this wait for a connection a request is answered 503; once the database is known to
/// be unreachable, at once (see `availability`).
const WAIT_FOR_CONNECTION: Duration = Duration::from_secs(10);

fn sqlite_options(options: SqliteConnectOptions) -> SqliteConnectOptions {
    // WAL lets readers run beside the single writer; NORMAL is durable across process crashes.
    options
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        // Covers the connection's own set-up statements; once connected, `sqlite_busy`
        // replaces it.
        .busy_timeout(Duration::from_secs(10))
        .foreign_keys(true)
        .create_if_missing(true)
}

/// Every SQLite connection, pooled or the group commit's, waits for the write lock with
/// `sqlite_busy`'s handler.
fn with_busy_handler(pool: SqlitePoolOptions) -> SqlitePoolOptions {
    pool.after_connect(|conn, _| Box::pin(async move { sqlite_busy::install(conn).await }))
}

/// Counts every statement of `pool`, and of its transactions, in `statements`: the count
/// behind the per-page statement test and `tacho_db_statements_total`.
fn count_statements(pool: &mut DatabaseConnection, statements: &Arc<std::sync::atomic::AtomicU64>) {
    let counted = statements.clone();
    pool.set_metric_callback(move |info| {
        counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        crate::telemetry::metrics::statement(info.failed);
    });
}

/// One more connection to `pool`'s SQLite file, opened on first use and kept: the audit
/// trail's group commit writes through it alone (see `audit::GroupCommit::with_writer`).
fn sqlite_writer(pool: &DatabaseConnection) -> DatabaseConnection {
    let shared = pool.get_sqlite_connection_pool();
    let writer = with_busy_handler(SqlitePoolOptions::new())
        .max_connections(1)
        .min_connections(0)
        .idle_timeout(None)
        .max_lifetime(None)
        .acquire_timeout(WAIT_FOR_CONNECTION)
        .test_before_acquire(false)
        .connect_lazy_with((*shared.connect_options()).clone());
    SqlxSqliteConnector::from_sqlx_sqlite_pool(writer)
}

fn sqlite_path(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next()?;
    (!path.is_empty() && path != ":memory:").then_some(path)
}

impl Reader {
    /// Fetches one page of `select` after narrowing it by `spec`, with the total unless the
    /// query asked to skip counting: the two at once, on two of the pool's connections.
    pub(crate) async fn page<E>(
        &self,
        select: sea_orm::Select<E>,
        spec: &query::ListSpec,
    ) -> StoreResult<(Vec<E::Model>, Option<u64>)>
    where
        E: sea_orm::EntityTrait,
        E::Model: Send + Sync,
    {
        let page = paged(select.clone(), spec);
        let items = async {
            Ok(match page {
                Some(page) => page.all(&self.db).await?,
                None => Vec::new(),
            })
        };
        tokio::try_join!(items, self.total(select, spec))
    }

    /// [`Store::page`] reading only the columns of the partial model `M`.
    pub(crate) async fn partial_page<E, M>(
        &self,
        select: sea_orm::Select<E>,
        spec: &query::ListSpec,
    ) -> StoreResult<(Vec<M>, Option<u64>)>
    where
        E: sea_orm::EntityTrait,
        E::Model: Send + Sync,
        M: sea_orm::PartialModelTrait + Send + Sync,
    {
        let page = paged(select.clone(), spec);
        let items = async {
            Ok(match page {
                Some(page) => page.into_partial_model::<M>().all(&self.db).await?,
                None => Vec::new(),
            })
        };
        tokio::try_join!(items, self.total(select, spec))
    }

    /// The exact total of `select` narrowed by `spec`'s filter, unless `spec` skips counting.
    pub(crate) async fn total<E>(
        &self,
        select: sea_orm::Select<E>,
        spec: &query::ListSpec,
    ) -> StoreResult<Option<u64>>
    where
        E: sea_orm::EntityTrait,
        E::Model: Send + Sync,
    {
        use sea_orm::{PaginatorTrait, QueryFilter};
        if spec.skip_count {
            return Ok(None);
        }
        let select = select.filter(spec.condition.clone());
        Ok(Some(select.count(&self.db).await?))
    }

    /// How many rows `select` finds, counting no further than `most` + 1: a list that shows
    /// "more than `most`" costs the same whatever the size of what it lists.
    pub(crate) async fn count_up_to<E>(
        &self,
        select: sea_orm::Select<E>,
        most: u64,
    ) -> StoreResult<u64>
    where
        E: sea_orm::EntityTrait,
    {
        use sea_orm::sea_query::Expr;
        use sea_orm::{QuerySelect, QueryTrait};
        let rows = select
            .select_only()
            .expr(Expr::val(1))
            .limit(most + 1)
            .into_query();
        self.count_rows(rows).await
    }

    /// How many rows the statement `rows` selects, counted by the database.
    pub(crate) async fn count_rows(
        &self,
        rows: sea_orm::sea_query::SelectStatement,
    ) -> StoreResult<u64> {
        use sea_orm::sea_query::{Alias, Expr, Query};
        let count = Query::select()
            .expr_as(Expr::cust("COUNT(*)"), Alias::new("counted"))
            .from_subquery(rows, Alias::new("counted_rows"))
            .to_owned();
        let counted = match self.db.query_one(&count).await? {
            Some(row) => row.try_get::<i64>("", "counted")?,
            None => 0,
        };
        Ok(counted.max(0) as u64)
    }
}

/// The ordered page of `select` narrowed by `spec`; none when `limit(0)` asked for none.
pub(crate) fn paged<E: sea_orm::EntityTrait>(
    select: sea_orm::Select<E>,
    spec: &query::ListSpec,
) -> Option<sea_orm::Select<E>> {
    use sea_orm::{QueryFilter, QuerySelect};
    if spec.limit == 0 {
        return None;
    }
    let select = select.filter(spec.condition.clone());
    Some(
        ordered(select, &spec.order)
            .limit(spec.limit)
            .offset(spec.offset),
    )
}

/// `select` sorted by `order`: the keys asked for, missing values the smallest on every
/// database, then the id that breaks ties.
fn ordered<E: sea_orm::EntityTrait>(
    select: sea_orm::Select<E>,
    order: &[(sea_orm::sea_query::SimpleExpr, sea_orm::Order)],
) -> sea_orm::Select<E> {
    use sea_orm::QueryOrder;
    let mut ordered = select;
    let keys = order.len().saturating_sub(1);
    let id = order.last().map(|(expr, _)| expr);
    for (expr, direction) in &order[..keys] {
        if Some(expr) == id {
            // A sort by the id itself (`sort(-id)`) is never null either: a NULLS clause
            // would make PostgreSQL sort every row the reader sees instead of walking
            // the primary key (414 ms for a page at 100,000 measurements).
            ordered = ordered.order_by(expr.clone(), direction.clone());
            continue;
        }
        // Missing values sort as the smallest on every database (PostgreSQL's default is
        // the opposite of SQLite's).
        let nulls = match direction {
            sea_orm::Order::Desc => sea_orm::sea_query::NullOrdering::Last,
            _ => sea_orm::sea_query::NullOrdering::First,
        };
        ordered = ordered.order_by_with_nulls(expr.clone(), direction.clone(), nulls);
    }
    // The id, last, is never null: without a NULLS clause PostgreSQL reads a page of a list
    // sorted by id along the primary key's index (with one it sorts every row first).
    for (expr, direction) in &order[keys..] {
        ordered = ordered.order_by(expr.clone(), direction.clone());
    }
    ordered
}

#[cfg(test)]
mod tests {
    use super::sqlite_path;

    #[test]
    fn a_sort_by_the_id_carries_no_nulls_clause() {
        use sea_orm::sea_query::{Expr, SimpleExpr};
        use sea_orm::{DbBackend, EntityTrait, Order, QueryTrait};
        let id: SimpleExpr = Expr::col(super::entities::measurement::Column::Id);
        let rate: SimpleExpr = Expr::col(super::entities::measurement::Column::HeartRate);
        let by_id = vec![(id.clone(), Order::Desc), (id.clone(), Order::Desc)];
        let sql = super::ordered(super::entities::measurement::Entity::find(), &by_id)
            .build(DbBackend::Postgres)
            .to_string();
        // PostgreSQL walks the primary key backwards only for a plain `id DESC`.
        assert!(!sql.contains("NULLS"), "{sql}");
        let by_rate = vec![(rate, Order::Desc), (id, Order::Desc)];
        let sql = super::ordered(super::entities::measurement::Entity::find(), &by_rate)
            .build(DbBackend::Postgres)
            .to_string();
        assert!(sql.contains("\"heart_rate\" DESC NULLS LAST"), "{sql}");
    }

    #[test]
    fn sqlite_paths_are_found_in_urls() {
        assert_eq!(
            sqlite_path("sqlite://data/tacho.db?mode=rwc"),
            Some("data/tacho.db")
        );
        assert_eq!(sqlite_path("sqlite:///tmp/x.db"), Some("/tmp/x.db"));
        assert_eq!(sqlite_path("sqlite::memory:"), None);
    }
}

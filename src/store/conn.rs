//! The connection a [`Store`](super::Store) runs its queries on: the pool, or the one
//! transaction an action runs in (see [`Store::begin`](super::Store::begin)). Every query of
//! the store takes `&self.db`, so the same store functions serve both; a store function that
//! opens a transaction of its own gets a savepoint inside the action's.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::availability::PoolWatch;

use sea_orm::{
    ConnectionTrait, DatabaseConnection, DatabaseTransaction, DbBackend, DbErr, ExecResult,
    QueryResult, SqliteTransactionMode, Statement, TransactionOptions, TransactionTrait,
};

/// The pool, or an open transaction shared by the clones of one action's store.
#[derive(Clone)]
pub(crate) enum Db {
    /// The pool, and what is known of its database's availability (see `availability`).
    Pool(DatabaseConnection, Arc<PoolWatch>),
    /// A transaction, with its pool's watch (which counts the statements sent in it).
    Transaction(Arc<DatabaseTransaction>, Arc<PoolWatch>),
}

impl Db {
    /// A transaction on the pool, or a savepoint inside the open transaction. Its statements
    /// are counted with the pool's ([`Nested`]).
    pub(crate) async fn begin(&self) -> Result<Nested, DbErr> {
        match self {
            // Store functions that open their own transaction read before they write; on
            // SQLite a deferred one would fail outright when another writer commits between.
            Db::Pool(pool, watch) => {
                let txn = watch.run(pool, Db::begin_action(pool)).await?;
                Ok(Nested(txn, watch.clone()))
            }
            Db::Transaction(txn, watch) => {
                watch.sent.fetch_add(1, Ordering::Relaxed);
                Ok(Nested(txn.begin().await?, watch.clone()))
            }
        }
    }

    /// A transaction for a whole action. On SQLite it takes the write lock at once
    /// (`BEGIN IMMEDIATE`): an action reads (who may do what) before it writes, and a deferred
    /// transaction that finds another writer's commit between its read and its write fails
    /// at once instead of waiting for the lock.
    pub(crate) async fn begin_action(
        pool: &DatabaseConnection,
    ) -> Result<DatabaseTransaction, DbErr> {
        let sqlite_transaction_mode = (pool.get_database_backend() == DbBackend::Sqlite)
            .then_some(SqliteTransactionMode::Immediate);
        pool.begin_with_options(TransactionOptions {
            sqlite_transaction_mode,
            ..Default::default()
        })
        .await
    }
}

#[async_trait::async_trait]
impl ConnectionTrait for Db {
    fn get_database_backend(&self) -> DbBackend {
        match self {
            Db::Pool(pool, _) => pool.get_database_backend(),
            Db::Transaction(txn, _) => txn.get_database_backend(),
        }
    }

    async fn execute_raw(&self, stmt: Statement) -> Result<ExecResult, DbErr> {
        match self {
            Db::Pool(pool, watch) => watch.run(pool, pool.execute_raw(stmt)).await,
            Db::Transaction(txn, watch) => {
                watch.sent.fetch_add(1, Ordering::Relaxed);
                txn.execute_raw(stmt).await
            }
        }
    }

    async fn execute_unprepared(&self, sql: &str) -> Result<ExecResult, DbErr> {
        match self {
            Db::Pool(pool, watch) => watch.run(pool, pool.execute_unprepared(sql)).await,
            Db::Transaction(txn, watch) => {
                watch.sent.fetch_add(1, Ordering::Relaxed);
                txn.execute_unprepared(sql).await
            }
        }
    }

    async fn query_one_raw(&self, stmt: Statement) -> Result<Option<QueryResult>, DbErr> {
        match self {
            Db::Pool(pool, watch) => watch.run(pool, pool.query_one_raw(stmt)).await,
            Db::Transaction(txn, watch) => {
                watch.sent.fetch_add(1, Ordering::Relaxed);
                txn.query_one_raw(stmt).await
            }
        }
    }

    async fn query_all_raw(&self, stmt: Statement) -> Result<Vec<QueryResult>, DbErr> {
        match self {
            Db::Pool(pool, watch) => watch.run(pool, pool.query_all_raw(stmt)).await,
            Db::Transaction(txn, watch) => {
                watch.sent.fetch_add(1, Ordering::Relaxed);
                txn.query_all_raw(stmt).await
            }
        }
    }
}

/// A transaction a store function opens for a step of its own ([`Db::begin`]): on the pool,
/// or a savepoint in the action's. Its statements count among the pool's sent statements
/// (what the page-cost tests read), as the action's own do.
pub(crate) struct Nested(DatabaseTransaction, Arc<PoolWatch>);

impl Nested {
    /// Commits the transaction, or releases the savepoint.
    pub(crate) async fn commit(self) -> Result<(), DbErr> {
        self.0.commit().await
    }

    fn counted(&self) -> &DatabaseTransaction {
        self.1.sent.fetch_add(1, Ordering::Relaxed);
        &self.0
    }
}

#[async_trait::async_trait]
impl ConnectionTrait for Nested {
    fn get_database_backend(&self) -> DbBackend {
        self.0.get_database_backend()
    }

    async fn execute_raw(&self, stmt: Statement) -> Result<ExecResult, DbErr> {
        self.counted().execute_raw(stmt).await
    }

    async fn execute_unprepared(&self, sql: &str) -> Result<ExecResult, DbErr> {
        self.counted().execute_unprepared(sql).await
    }

    async fn query_one_raw(&self, stmt: Statement) -> Result<Option<QueryResult>, DbErr> {
        self.counted().query_one_raw(stmt).await
    }

    async fn query_all_raw(&self, stmt: Statement) -> Result<Vec<QueryResult>, DbErr> {
        self.counted().query_all_raw(stmt).await
    }
}

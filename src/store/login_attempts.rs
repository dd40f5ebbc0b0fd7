//! Failed logins in a row per (login, client network), for the brute-force policy of
//! `auth::lockout`. A login attempt is reserved here before its password is checked: the count
//! goes up first, by a compare-and-swap on the count read, so that a burst of parallel attempts
//! is let through one count at a time and the policy sees each of them.

use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use super::entities::login_attempt;
use super::{Reader, StoreResult, Tx};

impl Reader {
    /// The failures in a row of `login` from `network`, and when the last was (none yet: 0).
    pub async fn login_failures(
        &self,
        login: &str,
        network: &str,
    ) -> StoreResult<(i32, Option<i64>)> {
        Ok(
            login_attempt::Entity::find_by_id((login.to_owned(), network.to_owned()))
                .one(&self.db)
                .await?
                .map(|row| (row.failures, row.last_failed))
                .unwrap_or((0, None)),
        )
    }

    /// The most failures in a row of `login` from any one network, with the last one's time.
    pub async fn worst_login_failures(&self, login: &str) -> StoreResult<(i32, Option<i64>)> {
        Ok(login_attempt::Entity::find()
            .filter(login_attempt::Column::LoginKey.eq(login))
            .order_by_desc(login_attempt::Column::Failures)
            .limit(1)
            .one(&self.db)
            .await?
            .map(|row| (row.failures, row.last_failed))
            .unwrap_or((0, None)))
    }
}

impl Tx {
    /// Counts an attempt of `login` from `network` as failed until it succeeds, if the count is
    /// still `seen`; false when another attempt counted first (read again and retry).
    pub async fn reserve_login_attempt(
        &self,
        login: &str,
        network: &str,
        seen: i32,
    ) -> StoreResult<bool> {
        let now = self.now();
        if seen == 0 {
            let inserted = login_attempt::Entity::insert(login_attempt::ActiveModel {
                login_key: Set(login.to_owned()),
                network: Set(network.to_owned()),
                failures: Set(1),
                last_failed: Set(Some(now)),
                update_timestamp: Set(now),
            })
            .on_conflict(
                OnConflict::columns([
                    login_attempt::Column::LoginKey,
                    login_attempt::Column::Network,
                ])
                .do_nothing()
                .to_owned(),
            )
            .exec_without_returning(&self.db)
            .await?;
            if inserted == 1 {
                return Ok(true);
            }
        }
        let claimed = login_attempt::Entity::update_many()
            .col_expr(login_attempt::Column::Failures, Expr::value(seen + 1))
            .col_expr(login_attempt::Column::LastFailed, Expr::value(now))
            .col_expr(login_attempt::Column::UpdateTimestamp, Expr::value(now))
            .filter(login_attempt::Column::LoginKey.eq(login))
            .filter(login_attempt::Column::Network.eq(network))
            .filter(login_attempt::Column::Failures.eq(seen))
            .exec(&self.db)
            .await?;
        Ok(claimed.rows_affected == 1)
    }

    /// A success from `network` clears its count.
    pub async fn clear_login_attempt(&self, login: &str, network: &str) -> StoreResult<()> {
        login_attempt::Entity::delete_many()
            .filter(login_attempt::Column::LoginKey.eq(login))
            .filter(login_attempt::Column::Network.eq(network))
            .exec(&self.db)
            .await?;
        Ok(())
    }

    /// Clears the counts of `login` from every network (an administrator lifting a lockout).
    pub async fn clear_login_attempts(&self, login: &str) -> StoreResult<()> {
        login_attempt::Entity::delete_many()
            .filter(login_attempt::Column::LoginKey.eq(login))
            .exec(&self.db)
            .await?;
        Ok(())
    }
}

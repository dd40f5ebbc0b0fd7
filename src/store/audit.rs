//! The audit trail: appended to by the portal (and the API) whenever someone views or
//! downloads a patient's data or changes something; read by administrators.

use std::fmt::Write as _;

use sea_orm::sea_query::{Expr, PostgresQueryBuilder, Query, SqliteQueryBuilder};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, ConnectionTrait, DbBackend, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect, Statement,
};

use super::entities::{audit_event, file};
use super::query::{escape_like, lower_like};
use super::visibility::Scope;
use super::{AdminTask, Reader, Store, StoreResult, Tx, Viewer};
pub use crate::domain::audit::AuditAction;
use crate::domain::id::Id;

/// One entry to append.
#[derive(Debug, Clone)]
pub struct AuditEntry {
    pub actor_id: Id,
    pub action: AuditAction,
    pub patient_id: Option<Id>,
    pub object_kind: &'static str,
    pub object_id: Option<Id>,
    pub detail: String,
}

impl Reader {
    /// A page of the audit trail matching `filter`, newest first, with the total counted no
    /// further than [`LIST_COUNTED`](super::LIST_COUNTED) + 1: the trail grows with every read
    /// (a page of the patient list alone records 50), so an exact count of it grew without
    /// bound.
    pub async fn audit_page(
        &self,
        viewer: &Viewer,
        filter: &AuditFilter,
        offset: u64,
        limit: u64,
    ) -> StoreResult<(Vec<audit_event::Model>, u64)> {
        viewer.administer(AdminTask::ReadAuditTrail)?;
        let select = audit_event::Entity::find().filter(filter.condition());
        let total = self
            .count_up_to(select.clone(), super::LIST_COUNTED)
            .await?;
        let items = select
            .order_by_desc(audit_event::Column::CreationTimestamp)
            .order_by_desc(audit_event::Column::Id)
            .offset(offset)
            .limit(limit)
            .all(&self.db)
            .await?;
        Ok((items, total))
    }
}

/// Which entries of the audit trail to show: all by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    /// Entries about this patient's data.
    pub patient: Option<Id>,
    /// Entries of what this user did.
    pub actor: Option<Id>,
    /// From this instant on (epoch ms, inclusive).
    pub from: Option<i64>,
    /// Before this instant (epoch ms, exclusive).
    pub until: Option<i64>,
    /// Entries whose action, object kind or detail holds this text, in any case (LIKE's
    /// wildcards taken literally).
    pub text: Option<String>,
}

impl AuditFilter {
    fn condition(&self) -> Condition {
        let mut condition = Condition::all();
        if let Some(patient) = self.patient {
            condition = condition.add(audit_event::Column::PatientId.eq(patient));
        }
        if let Some(actor) = self.actor {
            condition = condition.add(audit_event::Column::ActorId.eq(actor));
        }
        if let Some(from) = self.from {
            condition = condition.add(audit_event::Column::CreationTimestamp.gte(from));
        }
        if let Some(until) = self.until {
            condition = condition.add(audit_event::Column::CreationTimestamp.lt(until));
        }
        if let Some(text) = &self.text {
            let pattern = format!("%{}%", escape_like(text));
            let holds = |column: audit_event::Column| {
                lower_like(Expr::col((audit_event::Entity, column)), &pattern)
            };
            condition = condition.add(
                Condition::any()
                    .add(holds(audit_event::Column::Action))
                    .add(holds(audit_event::Column::ObjectKind))
                    .add(holds(audit_event::Column::Detail)),
            );
        }
        condition
    }
}

impl Tx {
    /// Appends entries in one statement, in this transaction (see [`Tx::commit`]).
    pub(super) async fn audit_many(&self, entries: Vec<AuditEntry>) -> StoreResult<()> {
        append(self, entries).await
    }
}

impl Store {
    /// Records reads of personal data (one object, a page of a list, a download), after the
    /// read, in a statement of its own: the one place where an audit record is written
    /// outside the transaction of what it records. A read needs no transaction, and one
    /// around it would, on SQLite, hold the database's only write lock for the read's whole
    /// time, so that every read waited for every write. The answer goes out only after its
    /// record is stored: no read goes unrecorded (a record may exist for an answer that then
    /// failed to reach its reader). Logins and token grants are recorded the same way, after
    /// the password check they follow.
    pub async fn record_reads(&self, entries: Vec<AuditEntry>) -> StoreResult<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let rows = rows(self.now(), entries);
        let (done, committed) = tokio::sync::oneshot::channel();
        self.group_commit
            .sender(&self.db)
            .send(Waiting::Records(rows, done))
            .map_err(|_| closed())?;
        committed.await.map_err(|_| closed())?
    }

    /// [`Store::record_reads`] for one record.
    pub async fn record_read(&self, entry: AuditEntry) -> StoreResult<()> {
        self.record_reads(vec![entry]).await
    }

    /// Records a download of `file` through a token checked against `file` as the caller
    /// holds it (a row read now, or one kept in memory): the record is written only if, as
    /// it is written, the stored row still has the token's version and legacy secret, and
    /// `scope` reads it. So the revocation check and the record are one statement, shared
    /// with the other downloads of the same group commit, and a revoked token opens nothing
    /// the moment its revocation commits, whichever instance holds the file in memory. The
    /// record names the patient of the file's measurement report. `NotFound` when the row
    /// no longer matches.
    pub async fn record_download(
        &self,
        scope: &dyn Scope,
        file: &file::Model,
        entry: AuditEntry,
    ) -> StoreResult<()> {
        let id = Id::generate();
        let download = Download {
            id,
            actor_id: entry.actor_id,
            action: entry.action,
            object_kind: entry.object_kind,
            detail: detail_text(&entry.detail),
            file_id: file.id,
            token_version: file.token_version,
            legacy_secret_hash: file.legacy_secret_hash.clone(),
            at: self.now(),
            scope: scope.files(),
        };
        let (done, committed) = tokio::sync::oneshot::channel();
        self.group_commit
            .sender(&self.db)
            .send(Waiting::Download(Box::new(download), done))
            .map_err(|_| closed())?;
        match committed.await.map_err(|_| closed())?? {
            true => Ok(()),
            false => Err(super::StoreError::NotFound),
        }
    }
}

/// A download's record as it waits for its group commit: the row to write, and the file's
/// token as the download found it, which the stored row must still have.
struct Download {
    id: Id,
    actor_id: Id,
    action: AuditAction,
    object_kind: &'static str,
    detail: String,
    file_id: Id,
    token_version: i32,
    legacy_secret_hash: String,
    at: i64,
    /// The files the recording scope reads ([`Scope::files`]).
    scope: Condition,
}

/// What waits for a group commit, and where to say it is done.
enum Waiting {
    /// Records written as they are.
    Records(
        Vec<audit_event::ActiveModel>,
        tokio::sync::oneshot::Sender<StoreResult<()>>,
    ),
    /// A download's record, answered with whether it was written.
    Download(
        Box<Download>,
        tokio::sync::oneshot::Sender<StoreResult<bool>>,
    ),
}

impl Waiting {
    fn records(&self) -> usize {
        match self {
            Waiting::Records(rows, _) => rows.len(),
            Waiting::Download(..) => 1,
        }
    }
}

/// Group commit of the records of reads. On SQLite every commit waits for the one writer, so a
/// record per download in a transaction of its own held downloads to the writer's pace. Here
/// one task writes whatever records have arrived since its last commit, in one statement for
/// the plain records and one for the downloads (per scope they were recorded through), and
/// each waiting read is answered once its record is committed: a read still never goes out
/// unrecorded, and under load many reads share one write.
#[derive(Default)]
pub(crate) struct GroupCommit {
    /// The writing task's queue, once started.
    queue: std::sync::Mutex<Option<tokio::sync::mpsc::UnboundedSender<Waiting>>>,
    /// A connection of the writing task's own (SQLite files only), else it writes through
    /// the store's pool.
    writer: Option<super::conn::Db>,
}

/// The most records one commit takes: a statement stays well below SQLite's 32,766 bound
/// parameters (9 per download, 8 per other record). A `VALUES` list, unlike a compound
/// `SELECT`, has no limit of its own on its rows.
const MOST_PER_COMMIT: usize = 1_000;

impl GroupCommit {
    /// A group commit that writes through `writer`, a connection of its own. On SQLite that
    /// keeps its page cache: a connection re-reads every page it holds once another
    /// connection has written, and the pool hands out its connections in turn, so each
    /// commit on the pool began with cold pages. Nor is its one connection tested before
    /// each use, as the pool's are.
    pub(crate) fn with_writer(writer: super::conn::Db) -> Self {
        GroupCommit {
            queue: std::sync::Mutex::default(),
            writer: Some(writer),
        }
    }

    /// The queue of the writing task (on its own connection, else on `db`, the store's
    /// pool), started on first use, and again if the runtime it ran on has stopped (a server
    /// stopped while its store lives on).
    fn sender(&self, db: &super::conn::Db) -> tokio::sync::mpsc::UnboundedSender<Waiting> {
        let db = self.writer.as_ref().unwrap_or(db);
        let mut slot = self
            .queue
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match slot.as_ref().filter(|sender| !sender.is_closed()) {
            Some(sender) => sender.clone(),
            None => {
                let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
                tokio::spawn(commit_in_groups(db.clone(), receiver));
                *slot = Some(sender.clone());
                sender
            }
        }
    }
}

/// Writes the waiting records in groups until every handle of the store is gone.
async fn commit_in_groups(
    db: super::conn::Db,
    mut queue: tokio::sync::mpsc::UnboundedReceiver<Waiting>,
) {
    let mut group: Vec<Waiting> = Vec::new();
    while let Some(first) = queue.recv().await {
        let mut count = first.records();
        group.push(first);
        while count < MOST_PER_COMMIT {
            match queue.try_recv() {
                Ok(next) => {
                    count += next.records();
                    group.push(next);
                }
                Err(_) => break,
            }
        }
        let mut rows = Vec::new();
        let mut downloads = Vec::new();
        let mut told_plain = Vec::new();
        for waiting in group.drain(..) {
            match waiting {
                Waiting::Records(mut records, done) => {
                    rows.append(&mut records);
                    told_plain.push(done);
                }
                Waiting::Download(download, done) => downloads.push((download, done)),
            }
        }
        let plain = rows.len();
        let written = if rows.is_empty() {
            Ok(())
        } else {
            audit_event::Entity::insert_many(rows)
                .exec_without_returning(&db)
                .await
                .map(|_| ())
        };
        if written.is_ok() && plain > 0 {
            crate::telemetry::metrics::audit_group_commit(plain);
        }
        for done in told_plain {
            // A reader that gave up waiting has nothing to be told.
            let _ = done.send(written.as_ref().map(|_| ()).map_err(copy));
        }
        // Downloads through the same scope share a statement (in practice every download is
        // through one scope, so there is one).
        while !downloads.is_empty() {
            let scope = downloads[0].0.scope.clone();
            let (same, others): (Vec<_>, Vec<_>) = downloads
                .into_iter()
                .partition(|(download, _)| download.scope == scope);
            downloads = others;
            let (same, told): (Vec<_>, Vec<_>) = same.into_iter().unzip();
            let written = record_downloads(&db, &same, &scope).await;
            if let Ok(written) = &written {
                crate::telemetry::metrics::audit_group_commit(written.count(same.len()));
            }
            for (download, done) in same.iter().zip(told) {
                let _ = done.send(
                    written
                        .as_ref()
                        .map(|written| written.holds(&download.id))
                        .map_err(copy),
                );
            }
        }
    }
}

/// Which of a statement's download records were written.
enum Written {
    /// Every one: the statement's count of rows says so, and no row is sent back.
    All,
    /// These only: some files' tokens had changed (read back by id, which is rare).
    Only(std::collections::HashSet<Id>),
}

impl Written {
    fn holds(&self, id: &Id) -> bool {
        match self {
            Written::All => true,
            Written::Only(ids) => ids.contains(id),
        }
    }

    fn count(&self, of: usize) -> usize {
        match self {
            Written::All => of,
            Written::Only(ids) => ids.len(),
        }
    }
}

/// Writes the records of `downloads` (all through `scope`) in one statement, and says which
/// were written: a record for each download whose file's stored row still has the token the
/// download found and is read by `scope`, naming the patient of the file's measurement report.
///
/// The statement is written out here rather than built by sea-query: the downloads come in as
/// one `VALUES` list, so that its text depends only on how many there are (and the driver
/// reuses its prepared statement), and a commit's cost is a value per column instead of a
/// query tree cloned and walked per download (the allocator and sea-query's clones were a
/// fifth of a download's time: `docs/performance.md`).
async fn record_downloads(
    db: &super::conn::Db,
    downloads: &[Box<Download>],
    scope: &Condition,
) -> Result<Written, sea_orm::DbErr> {
    const COLUMNS: usize = 9;
    let backend = db.get_database_backend();
    let mut sql = String::with_capacity(600 + downloads.len() * COLUMNS * 5);
    // `VALUES` names its columns column1, column2, … on SQLite and PostgreSQL alike.
    sql.push_str(
        "INSERT INTO audit_events \
         (id, actor_id, action, patient_id, object_kind, object_id, detail, creation_timestamp) \
         SELECT download.column1, download.column2, download.column3, \
         (SELECT measurement_reports.patient_id FROM measurement_reports \
         WHERE measurement_reports.file_id = files.id LIMIT 1), \
         download.column4, files.id, download.column5, download.column6 \
         FROM (VALUES ",
    );
    // `$N` on PostgreSQL; plain `?` on SQLite, which numbers them in order. sqlx binds each
    // SQLite parameter after asking its name, and SQLite finds a numbered parameter's name by
    // walking the list of them all: `?N` made binding a batch of 1,000 downloads' 9,000
    // parameters quadratic (a sixth of the SQLite thread's time at 25 downloads a commit).
    let numbered = backend == DbBackend::Postgres;
    let mut values = Vec::with_capacity(downloads.len() * COLUMNS);
    for (row, download) in downloads.iter().enumerate() {
        sql.push_str(if row == 0 { "(" } else { ", (" });
        for column in 0..COLUMNS {
            if column > 0 {
                sql.push_str(", ");
            }
            if numbered {
                let _ = write!(sql, "${}", row * COLUMNS + column + 1);
            } else {
                sql.push('?');
            }
        }
        sql.push(')');
        values.extend([
            download.id.into(),
            download.actor_id.into(),
            download.action.as_str().into(),
            download.object_kind.into(),
            download.detail.as_str().into(),
            download.at.into(),
            download.file_id.into(),
            download.token_version.into(),
            download.legacy_secret_hash.as_str().into(),
        ]);
    }
    sql.push_str(
        ") AS download JOIN files ON files.id = download.column7 \
         AND files.token_version = download.column8 \
         AND files.legacy_secret_hash = download.column9",
    );
    if !scope.is_empty() {
        // The scope's own condition on `files`, as a subquery with its constants inline.
        let scoped = Query::select()
            .column((file::Entity, file::Column::Id))
            .from(file::Entity)
            .cond_where(scope.clone())
            .to_owned();
        let scoped = match backend {
            DbBackend::Postgres => scoped.to_string(PostgresQueryBuilder),
            _ => scoped.to_string(SqliteQueryBuilder),
        };
        let _ = write!(sql, " WHERE files.id IN ({scoped})");
    }
    // No `RETURNING`: the count is enough when every record was written, and SQLite's driver
    // hands each returned row to its caller across threads.
    let inserted = db
        .execute_raw(Statement::from_sql_and_values(backend, sql, values))
        .await?
        .rows_affected();
    if inserted == downloads.len() as u64 {
        return Ok(Written::All);
    }
    let ids = audit_event::Entity::find()
        .select_only()
        .column(audit_event::Column::Id)
        .filter(audit_event::Column::Id.is_in(downloads.iter().map(|download| download.id)))
        .into_tuple::<Id>()
        .all(db)
        .await?;
    Ok(Written::Only(ids.into_iter().collect()))
}

/// Each reader gets a failure in its kind (the original error is not Clone).
fn copy(err: &sea_orm::DbErr) -> super::StoreError {
    let copy = sea_orm::DbErr::Custom(err.to_string());
    if super::availability::transient(err) {
        super::StoreError::Unavailable(copy)
    } else {
        super::StoreError::Db(copy)
    }
}

/// The writing task is gone: only when the store is being dropped.
fn closed() -> super::StoreError {
    super::StoreError::Unavailable(sea_orm::DbErr::Custom(
        "the audit trail's writer stopped".to_owned(),
    ))
}

fn rows(now: i64, entries: Vec<AuditEntry>) -> Vec<audit_event::ActiveModel> {
    entries
        .into_iter()
        .map(|entry| audit_event::ActiveModel {
            id: Set(Id::generate()),
            actor_id: Set(entry.actor_id),
            action: Set(entry.action.as_str().to_owned()),
            patient_id: Set(entry.patient_id),
            object_kind: Set(entry.object_kind.to_owned()),
            object_id: Set(entry.object_id),
            detail: Set(detail_text(&entry.detail)),
            creation_timestamp: Set(now),
        })
        .collect()
}

/// An entry's detail as stored: at most 500 characters.
fn detail_text(detail: &str) -> String {
    detail.chars().take(500).collect()
}

/// Appends `entries` to the trail on `reader`'s connection (its pool, or its transaction).
async fn append(reader: &Reader, entries: Vec<AuditEntry>) -> StoreResult<()> {
    if entries.is_empty() {
        return Ok(());
    }
    audit_event::Entity::insert_many(rows(reader.now(), entries))
        .exec_without_returning(&reader.db)
        .await?;
    Ok(())
}

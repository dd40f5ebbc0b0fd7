//! The audit trail: appended to by the portal (and the API) whenever someone views or
//! downloads a patient's data or changes something; read by administrators.

use sea_orm::sea_query::{Expr, ExprTrait, Query, SelectStatement, SimpleExpr, UnionType};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect,
};

use super::entities::{audit_event, file, measurement_report};
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
        let patient = Query::select()
            .column(measurement_report::Column::PatientId)
            .from(measurement_report::Entity)
            .and_where(
                Expr::col((
                    measurement_report::Entity,
                    measurement_report::Column::FileId,
                ))
                .equals((file::Entity, file::Column::Id)),
            )
            .limit(1)
            .to_owned();
        let column = |name: file::Column| Expr::col((file::Entity, name));
        // The columns in the order of `record_downloads`' insert.
        let select = Query::select()
            .expr(Expr::val(id))
            .expr(Expr::val(entry.actor_id))
            .expr(Expr::val(entry.action.as_str()))
            .expr(SimpleExpr::SubQuery(None, Box::new(patient.into())))
            .expr(Expr::val(entry.object_kind))
            .expr(column(file::Column::Id))
            .expr(Expr::val(detail_text(&entry.detail)))
            .expr(Expr::val(self.now()))
            .from(file::Entity)
            .and_where(column(file::Column::Id).eq(file.id))
            .and_where(column(file::Column::TokenVersion).eq(file.token_version))
            .and_where(column(file::Column::LegacySecretHash).eq(file.legacy_secret_hash.as_str()))
            .cond_where(scope.files())
            .to_owned();
        let (done, committed) = tokio::sync::oneshot::channel();
        self.group_commit
            .sender(&self.db)
            .send(Waiting::Download(id, Box::new(select), done))
            .map_err(|_| closed())?;
        match committed.await.map_err(|_| closed())?? {
            true => Ok(()),
            false => Err(super::StoreError::NotFound),
        }
    }
}

/// What waits for a group commit, and where to say it is done.
enum Waiting {
    /// Records written as they are.
    Records(
        Vec<audit_event::ActiveModel>,
        tokio::sync::oneshot::Sender<StoreResult<()>>,
    ),
    /// A download's record (its id, and the select that yields its row while the file's
    /// token holds), answered with whether it was written.
    Download(
        Id,
        Box<SelectStatement>,
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
/// the plain records and one for the downloads' (per [`MOST_DOWNLOADS_PER_STATEMENT`]), and
/// each waiting read is answered once its record is committed: a read still never goes out
/// unrecorded, and under load many reads share one write.
#[derive(Default)]
pub(crate) struct GroupCommit(
    std::sync::Mutex<Option<tokio::sync::mpsc::UnboundedSender<Waiting>>>,
);

/// The most records one commit takes: a statement stays well below SQLite's 32,766 bound
/// parameters (8 per record).
const MOST_PER_COMMIT: usize = 1_000;

/// The most downloads one statement records: each is a term of a compound SELECT, and SQLite
/// takes at most 500 (`SQLITE_MAX_COMPOUND_SELECT`).
const MOST_DOWNLOADS_PER_STATEMENT: usize = 400;

impl GroupCommit {
    /// The queue of the writing task on `db` (the store's pool), started on first use, and
    /// again if the runtime it ran on has stopped (a server stopped while its store lives on).
    fn sender(&self, db: &super::conn::Db) -> tokio::sync::mpsc::UnboundedSender<Waiting> {
        let mut slot = self
            .0
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
        let mut told_download = Vec::new();
        for waiting in group.drain(..) {
            match waiting {
                Waiting::Records(mut records, done) => {
                    rows.append(&mut records);
                    told_plain.push(done);
                }
                Waiting::Download(id, select, done) => {
                    downloads.push(*select);
                    told_download.push((id, done));
                }
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
        let mut remaining = told_download.into_iter();
        let mut selects = downloads.into_iter();
        loop {
            let chunk: Vec<SelectStatement> = selects
                .by_ref()
                .take(MOST_DOWNLOADS_PER_STATEMENT)
                .collect();
            if chunk.is_empty() {
                break;
            }
            let told: Vec<_> = remaining.by_ref().take(chunk.len()).collect();
            let written = record_downloads(&db, chunk).await;
            if let Ok(ids) = &written {
                crate::telemetry::metrics::audit_group_commit(ids.len());
            }
            for (id, done) in told {
                let _ = done.send(written.as_ref().map(|ids| ids.contains(&id)).map_err(copy));
            }
        }
    }
}

/// Writes the rows the downloads' selects yield in one statement, and gives the ids written.
async fn record_downloads(
    db: &super::conn::Db,
    selects: Vec<SelectStatement>,
) -> Result<std::collections::HashSet<Id>, sea_orm::DbErr> {
    let mut selects = selects.into_iter();
    let mut union = selects.next().expect("a chunk is never empty");
    for select in selects {
        union.union(UnionType::All, select);
    }
    let insert = Query::insert()
        .into_table(audit_event::Entity)
        .columns([
            audit_event::Column::Id,
            audit_event::Column::ActorId,
            audit_event::Column::Action,
            audit_event::Column::PatientId,
            audit_event::Column::ObjectKind,
            audit_event::Column::ObjectId,
            audit_event::Column::Detail,
            audit_event::Column::CreationTimestamp,
        ])
        .select_from(union)
        .map_err(|err| sea_orm::DbErr::Custom(err.to_string()))?
        .returning_col(audit_event::Column::Id)
        .to_owned();
    let backend = db.get_database_backend();
    let rows = db.query_all_raw(backend.build(&insert)).await?;
    rows.iter().map(|row| row.try_get::<Id>("", "id")).collect()
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

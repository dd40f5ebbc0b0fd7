//! Read models the portal needs beyond the API's lists: a physician's patients with their
//! latest measurement, a physician's work list, and the job queue as administrators see it. Visibility comes from the
//! same rules as every other query (`visibility.rs`).

use sea_orm::sea_query::{Alias, Expr, ExprTrait, Func, Query, SelectStatement};
use sea_orm::{
    ColumnTrait, Condition, EntityTrait, Order, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect,
};

use super::entities::job::{self, JobStatus};
use super::entities::{measurement, user};
use super::query::{escape_like, lower_like};
use super::{AdminTask, Reader, Scope, StoreResult, Viewer, visibility};
use crate::analysis::ResultKey;
use crate::domain::id::Id;
use crate::domain::measurement::Status;
use crate::domain::person_name::full_name;

/// A patient with the latest measurement they made.
#[derive(Debug, Clone)]
pub struct PatientSummary {
    pub user: user::Model,
    pub last_measurement: Option<measurement::Header>,
}

/// Which of a physician's patients to list, in which order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PatientListing {
    /// Only patients whose latest measurement has this result (a measurement the server never
    /// analysed counts as `no_result`).
    pub result: Option<ResultKey>,
    /// Most severe latest result first (in the order of [`ResultKey::BY_SEVERITY`]), then by name;
    /// patients without measurements last. Otherwise by name.
    pub by_result: bool,
}

/// Why a measurement is on a physician's work list; every entry is one no physician has
/// reviewed yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkReason {
    /// The server's indicator is `urgent`.
    Urgent,
    /// The patient asked for a physician's look.
    Requested,
    /// The recording could not be read, or its quality was too low for a result.
    QualityFailed,
}

impl WorkReason {
    /// Every reason, in the order the filter offers them.
    pub const ALL: [WorkReason; 3] = [
        WorkReason::Urgent,
        WorkReason::Requested,
        WorkReason::QualityFailed,
    ];

    /// The name in the page's address.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkReason::Urgent => "urgent",
            WorkReason::Requested => "requested",
            WorkReason::QualityFailed => "quality",
        }
    }

    /// The reason named `name`, if any.
    pub fn parse(name: &str) -> Option<WorkReason> {
        WorkReason::ALL.into_iter().find(|r| r.as_str() == name)
    }

    fn condition(self) -> Condition {
        match self {
            WorkReason::Urgent => Condition::all().add(measurement::Column::Indicator.eq("urgent")),
            WorkReason::Requested => {
                Condition::all().add(measurement::Column::Status.eq(Status::PendingReview.as_str()))
            }
            WorkReason::QualityFailed => Condition::any()
                .add(measurement::Column::Status.eq(Status::AnalysisFailed.as_str()))
                .add(measurement::Column::Result.eq(ResultKey::QualityTooLow.as_str())),
        }
    }
}

/// Which entries of a physician's work list to show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkListing {
    pub reason: Option<WorkReason>,
    /// Part of the patient's name or e-mail address, in any case.
    pub search: Option<String>,
}

/// An entry of the work list: a measurement and its patient.
#[derive(Debug, Clone)]
pub struct WorkItem {
    pub measurement: measurement::Header,
    pub patient: user::Model,
}

/// A measurement's place in the work list: the `work_rank` column the database computes from
/// the row (migration `m20261127_000120_work_rank_rates`, which tabulates the ranks): urgent
/// first, then possible atrial fibrillation, possibly irregular, a regular rhythm at a slow or
/// fast rate, unreadable, no result, and a regular rhythm at a normal rate; NULL once it no
/// longer waits for a review.
fn work_rank() -> Expr {
    Expr::col((measurement::Entity, Alias::new("work_rank")))
}

/// The latest measurement `viewer` sees of the user of the outer query's `users` row: a
/// correlated lookup that reads `measurements_list` backwards from the user's newest entry,
/// one index probe per patient and never a payload, selecting `value` of that row.
fn latest_measurement(viewer: &Viewer, value: Expr) -> SelectStatement {
    let latest = Alias::new("latest");
    Query::select()
        .expr(value)
        .from_as(measurement::Entity, latest.clone())
        .and_where(
            Expr::col((latest.clone(), measurement::Column::CreatorId))
                .equals((Alias::new("users"), Alias::new("id"))),
        )
        .cond_where(viewer.measurements("latest", "id", "creator_id"))
        .order_by(
            (latest.clone(), measurement::Column::MeasurementTimestamp),
            Order::Desc,
        )
        .order_by((latest, measurement::Column::Id), Order::Desc)
        .limit(1)
        .to_owned()
}

fn latest_result_column() -> Expr {
    Expr::col((Alias::new("latest"), measurement::Column::Result))
}

/// The latest result key `viewer` sees, `no_result` for a measurement without one; NULL
/// without measurements.
fn latest_result(viewer: &Viewer) -> Expr {
    Expr::SubQuery(
        None,
        Box::new(
            latest_measurement(
                viewer,
                Func::coalesce([
                    latest_result_column(),
                    Expr::val(ResultKey::NoResult.as_str()),
                ])
                .into(),
            )
            .into(),
        ),
    )
}

/// The severity rank of the latest result `viewer` sees (0 most severe); past every rank
/// without measurements.
fn latest_rank(viewer: &Viewer) -> Expr {
    let rank_of = |key: ResultKey| {
        ResultKey::BY_SEVERITY
            .iter()
            .position(|k| *k == key)
            .unwrap_or(ResultKey::BY_SEVERITY.len()) as i32
    };
    // A stored key this release does not know ranks with no result.
    let mut case = Expr::case(
        latest_result_column().eq(ResultKey::BY_SEVERITY[0].as_str()),
        rank_of(ResultKey::BY_SEVERITY[0]),
    );
    for key in ResultKey::BY_SEVERITY
        .iter()
        .skip(1)
        .filter(|k| **k != ResultKey::NoResult)
    {
        case = case.case(latest_result_column().eq(key.as_str()), rank_of(*key));
    }
    let no_result = rank_of(ResultKey::NoResult);
    let rank = Expr::SubQuery(
        None,
        Box::new(latest_measurement(viewer, case.finally(no_result).into()).into()),
    );
    Func::coalesce([rank, Expr::val(ResultKey::BY_SEVERITY.len() as i32)]).into()
}

/// `table.column` names a patient `viewer` cares for: one enlisted in a group it is staff of
/// (with a running prescription), and for administrators any patient ever enlisted; probed
/// per row.
fn cares_for(viewer: &Viewer, table: &str, column: &str, now: i64) -> Condition {
    if viewer.admin {
        let enlistment = Alias::new("cared_pe");
        let enlisted = Query::select()
            .expr(Expr::val(1))
            .from_as(Alias::new("patient_enlistments"), enlistment.clone())
            .and_where(
                Expr::col((enlistment, Alias::new("user_id")))
                    .equals((Alias::new(table), Alias::new(column))),
            )
            .to_owned();
        Condition::all().add(Expr::exists(enlisted))
    } else {
        visibility::cared_for_by(&viewer.user_id, table, column, now)
    }
}

/// How far a portal list counts its entries: past it, the pager says "more than 1,000".
pub const LIST_COUNTED: u64 = 1_000;

impl Reader {
    /// A page of the patients `viewer` cares for (enlisted in a group it is staff of; for
    /// administrators every patient ever enlisted), filtered and ordered as `listing` asks,
    /// with the total.
    pub async fn patients_page(
        &self,
        viewer: &Viewer,
        listing: PatientListing,
        offset: u64,
        limit: u64,
    ) -> StoreResult<(Vec<PatientSummary>, u64)> {
        let now = self.now();
        let mut select = user::Entity::find()
            .filter(cares_for(viewer, "users", "id", now))
            .filter(viewer.users("users", "id", now));
        if let Some(result) = listing.result {
            select = select.filter(latest_result(viewer).eq(result.as_str()));
        }
        let total = match listing.result {
            Some(_) => self.count_up_to(select.clone(), LIST_COUNTED).await?,
            // Unfiltered, the list is the patients cared for: counted from the enlistments.
            None => {
                let cared = visibility::patients_cared_for(viewer, now)
                    .limit(LIST_COUNTED + 1)
                    .to_owned();
                self.count_rows(cared).await?
            }
        };
        if listing.by_result {
            select = select.order_by(latest_rank(viewer), Order::Asc);
        }
        let users = select
            .order_by_asc(user::Column::LastName)
            .order_by_asc(user::Column::FirstName)
            .order_by_asc(user::Column::Id)
            .offset(offset)
            .limit(limit)
            .all(&self.db)
            .await?;
        // The latest measurement of each patient of the page, in one statement: a correlated
        // lookup per patient row (see `latest_measurement`), whatever the page's length.
        let page_ids: Vec<Id> = users.iter().map(|u| u.id).collect();
        let latest_id = latest_measurement(
            viewer,
            Expr::col((Alias::new("latest"), measurement::Column::Id)),
        );
        let latest_ids = Query::select()
            .expr(Expr::SubQuery(None, Box::new(latest_id.into())))
            .from(user::Entity)
            .and_where(Expr::col((user::Entity, user::Column::Id)).is_in(page_ids))
            .to_owned();
        let mut latest: std::collections::HashMap<Id, measurement::Header> =
            measurement::Entity::find()
                .filter(measurement::Column::Id.in_subquery(latest_ids))
                .filter(viewer.measurements("measurements", "id", "creator_id"))
                .into_partial_model::<measurement::Header>()
                .all(&self.db)
                .await?
                .into_iter()
                .map(|m| (m.creator_id, m))
                .collect();
        let summaries = users
            .into_iter()
            .map(|user| PatientSummary {
                last_measurement: latest.remove(&user.id),
                user,
            })
            .collect();
        Ok((summaries, total))
    }

    /// A page of the work list of `viewer`: the measurements of the patients it cares for
    /// (by the same rules as [`Store::patients_page`] and the measurements' visibility) that
    /// no physician has reviewed yet, filtered as `listing` asks; urgent and most severe
    /// first, then newest first; with the total.
    pub async fn work_list_page(
        &self,
        viewer: &Viewer,
        listing: &WorkListing,
        offset: u64,
        limit: u64,
    ) -> StoreResult<(Vec<WorkItem>, u64)> {
        let now = self.now();
        // Probes per row (not `IN` the set of every patient cared for), so that walking
        // `measurements_work_list` in its order finds a page after a page's worth of rows.
        let mut select = measurement::Entity::find()
            .filter(cares_for(viewer, "measurements", "creator_id", now))
            .filter(measurement::Column::CreatorId.ne(viewer.user_id))
            .filter(viewer.measurements("measurements", "id", "creator_id"))
            .filter(work_rank().is_not_null());
        let search = listing
            .search
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        if let Some(search) = search {
            // LIKE's own wildcards in the search are taken literally.
            let pattern = format!("%{}%", escape_like(search));
            let like =
                |column: user::Column| lower_like(Expr::col((user::Entity, column)), &pattern);
            let named = Query::select()
                .column((user::Entity, user::Column::Id))
                .from(user::Entity)
                .cond_where(
                    Condition::any()
                        .add(like(user::Column::FirstName))
                        .add(like(user::Column::LastName))
                        .add(like(user::Column::Email)),
                )
                .to_owned();
            select = select.filter(measurement::Column::CreatorId.in_subquery(named));
        }
        if let Some(reason) = listing.reason {
            select = select.filter(reason.condition());
        }
        // Unfiltered, a physician's total is kept (see `work_tallies`); filtered, and for an
        // administrator, it is counted through the gate.
        let total = if viewer.admin || search.is_some() || listing.reason.is_some() {
            self.count_up_to(select.clone(), LIST_COUNTED).await?
        } else {
            self.work_list_total(viewer).await?
        };
        let measurements = select
            // The order of the partial index `measurements_work_list`, which it walks.
            .order_by(work_rank(), Order::Asc)
            .order_by_desc(measurement::Column::MeasurementTimestamp)
            .order_by_desc(measurement::Column::Id)
            .offset(offset)
            .limit(limit)
            .into_partial_model::<measurement::Header>()
            .all(&self.db)
            .await?;
        let ids: Vec<Id> = measurements.iter().map(|m| m.creator_id).collect();
        let patients: std::collections::HashMap<Id, user::Model> = user::Entity::find()
            .filter(user::Column::Id.is_in(ids))
            .filter(viewer.users("users", "id", now))
            .all(&self.db)
            .await?
            .into_iter()
            .map(|u| (u.id, u))
            .collect();
        let items = measurements
            .into_iter()
            .filter_map(|m| {
                let patient = patients.get(&m.creator_id)?.clone();
                Some(WorkItem {
                    measurement: m,
                    patient,
                })
            })
            .collect();
        Ok((items, total))
    }

    /// A page of jobs, those needing attention first (failed, then running, queued, done),
    /// each group newest first; with the total.
    pub async fn jobs_page(
        &self,
        viewer: &Viewer,
        status: Option<JobStatus>,
        offset: u64,
        limit: u64,
    ) -> StoreResult<(Vec<job::Model>, u64)> {
        viewer.administer(AdminTask::ReadJobs)?;
        let mut condition = Condition::all();
        if let Some(status) = status {
            condition = condition.add(job::Column::Status.eq(status));
        }
        let select = job::Entity::find().filter(condition);
        let total = select.clone().count(&self.db).await?;
        let items = select
            .order_by_desc(job::Column::UpdateTimestamp)
            .order_by_desc(job::Column::Id)
            .offset(offset)
            .limit(limit)
            .all(&self.db)
            .await?;
        Ok((items, total))
    }

    /// How many jobs are in each status.
    pub async fn job_counts(&self, viewer: &Viewer) -> StoreResult<Vec<(JobStatus, i64)>> {
        viewer.administer(AdminTask::ReadJobs)?;
        let rows: Vec<(JobStatus, i64)> = job::Entity::find()
            .select_only()
            .column(job::Column::Status)
            .column_as(Expr::col(job::Column::Id).count(), "n")
            .group_by(job::Column::Status)
            .into_tuple()
            .all(&self.db)
            .await?;
        Ok(rows)
    }
}

impl Reader {
    /// The names of these groups, by id, whoever asks (callers show only groups they may see).
    pub async fn group_names(
        &self,
        ids: &[Id],
    ) -> StoreResult<std::collections::HashMap<Id, String>> {
        use super::entities::group;
        Ok(group::Entity::find()
            .filter(group::Column::Id.is_in(ids.to_vec()))
            .all(&self.db)
            .await?
            .into_iter()
            .map(|g| (g.id, g.name))
            .collect())
    }
}

/// A prescription as administrators see it: the enlistment with its patient and group.
#[derive(Debug, Clone)]
pub struct EnlistmentSummary {
    pub enlistment: super::entities::patient_enlistment::Model,
    pub patient: Option<user::Model>,
    pub group_name: String,
}

impl Reader {
    /// How many prescriptions (patient enlistments) there are, for administrators.
    pub async fn count_enlistments(&self, viewer: &Viewer) -> StoreResult<u64> {
        viewer.administer(AdminTask::Administer)?;
        use super::entities::patient_enlistment;
        Ok(patient_enlistment::Entity::find().count(&self.db).await?)
    }

    /// The most recently started prescriptions (patient enlistments), newest first.
    pub async fn recent_enlistments(
        &self,
        viewer: &Viewer,
        limit: u64,
    ) -> StoreResult<Vec<EnlistmentSummary>> {
        viewer.administer(AdminTask::Administer)?;
        use super::entities::patient_enlistment;
        let enlistments = patient_enlistment::Entity::find()
            .order_by_desc(patient_enlistment::Column::CreationTimestamp)
            .order_by_desc(patient_enlistment::Column::Id)
            .limit(limit)
            .all(&self.db)
            .await?;
        self.with_patients_and_groups(enlistments).await
    }

    /// Each prescription with its patient and its group's name: two statements.
    async fn with_patients_and_groups(
        &self,
        enlistments: Vec<super::entities::patient_enlistment::Model>,
    ) -> StoreResult<Vec<EnlistmentSummary>> {
        let user_ids: Vec<Id> = enlistments.iter().map(|e| e.user_id).collect();
        let group_ids: Vec<Id> = enlistments.iter().map(|e| e.group_id).collect();
        let users = user::Entity::find()
            .filter(user::Column::Id.is_in(user_ids))
            .all(&self.db)
            .await?;
        let names = self.group_names(&group_ids).await?;
        Ok(enlistments
            .into_iter()
            .map(|enlistment| EnlistmentSummary {
                patient: users.iter().find(|u| u.id == enlistment.user_id).cloned(),
                group_name: names
                    .get(&enlistment.group_id)
                    .cloned()
                    .unwrap_or_else(|| enlistment.group_id.to_string()),
                enlistment,
            })
            .collect())
    }

    /// A page of the prescriptions with reports still to come (of active patients, not yet
    /// scheduled to their end), with their total: those scheduled least far first, which
    /// puts the ones with a report due soonest near the top. Four statements whatever the
    /// clinic's size.
    pub async fn upcoming_reports(
        &self,
        viewer: &Viewer,
        offset: u64,
        limit: u64,
    ) -> StoreResult<(Vec<EnlistmentSummary>, u64)> {
        viewer.administer(AdminTask::ReadJobs)?;
        use super::entities::patient_enlistment::{self, Column};
        let active = Query::select()
            .column(user::Column::Id)
            .from(user::Entity)
            .and_where(user::Column::Activation.eq(true))
            .to_owned();
        let select = patient_enlistment::Entity::find()
            .filter(
                Condition::any()
                    .add(Column::ScheduledUntil.is_null())
                    .add(Expr::col(Column::ScheduledUntil).lt(Expr::col(Column::ExpiryTimestamp))),
            )
            .filter(Column::UserId.in_subquery(active));
        let total = select.clone().count(&self.db).await?;
        let enlistments = select
            .order_by(
                Expr::expr(Func::coalesce([
                    Expr::col(Column::ScheduledUntil),
                    Expr::col(Column::CreationTimestamp),
                ])),
                Order::Asc,
            )
            .order_by_asc(Column::Id)
            .offset(offset)
            .limit(limit)
            .all(&self.db)
            .await?;
        Ok((self.with_patients_and_groups(enlistments).await?, total))
    }

    /// The names of these users, by id: of those `scope` sees, and of staff and
    /// administrators, whose names stand beside what they did (a review, a report). A
    /// patient's name is never given to a scope that does not see the patient.
    pub async fn user_names(
        &self,
        scope: &dyn Scope,
        ids: &[Id],
    ) -> StoreResult<std::collections::HashMap<Id, String>> {
        let staff = Query::select()
            .column((
                super::entities::staff_enlistment::Entity,
                super::entities::staff_enlistment::Column::UserId,
            ))
            .from(super::entities::staff_enlistment::Entity)
            .to_owned();
        Ok(user::Entity::find()
            .filter(user::Column::Id.is_in(ids.to_vec()))
            .filter(
                Condition::any()
                    .add(scope.users("users", "id", self.now()))
                    .add(user::Column::Id.in_subquery(staff))
                    .add(Expr::cust("CAST(roles AS TEXT) LIKE '%\"admin\"%'")),
            )
            .all(&self.db)
            .await?
            .into_iter()
            .map(|u| (u.id, full_name(&u.first_name, &u.last_name)))
            .collect())
    }
}

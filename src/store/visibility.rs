//! Who may see what: the one gate every read of a patient's data passes. A store function that
//! reads accounts, profiles, measurements, reports and their items, files or notifications
//! takes a [`Scope`] and ANDs its conditions into the query, so that what a caller may not see
//! is never read. There is no unscoped read: a part of Tacho that reads on no one's behalf
//! names its [`Service`] scope, and each says what it may read and why.
//!
//! A person ([`Viewer`]) sees:
//! - itself and its own documents;
//! - as staff, a patient's record (account, profile) while the patient holds an active
//!   enlistment (a running prescription) in a group they are staff in;
//! - as staff, a measurement, and its report documents, only if the measurement's `groupIds`
//!   hold one of their groups. A measurement takes the groups of the enlistments active when it
//!   is made, so what a patient records after a prescription ends is not shared with its group;
//! - as staff, a periodic report made for one of their groups (a report belongs to the
//!   prescription it was made for, and lists only the measurements shared with its group);
//! - as an administrator, everything.
//!
//! A [`Prescription`] (one patient in one group) sees the patient's record, the measurements
//! shared with that group and the reports made for it: what a scheduled periodic report of
//! that prescription may list.
//!
//! "Active" is judged at the store's clock, passed in as `now` (epoch ms).

use sea_orm::sea_query::{
    Alias, Condition, Expr, ExprTrait, Func, JoinType, Query, SelectStatement, UpdateStatement,
};

use crate::domain::id::Id;

/// What a read may see. Each method gives the condition that narrows one kind of record to
/// what the scope may see; store functions AND it into their queries.
pub trait Scope: std::fmt::Debug + Send + Sync {
    /// Accounts, or a patient's record keyed by a user id in `table.column` (profiles,
    /// enlistments, the subject of a notification), visible at `now`.
    fn users(&self, table: &str, column: &str, now: i64) -> Condition;

    /// Measurements, keyed by their id in `table.id_column` and their patient in
    /// `table.patient_column`; the same for what hangs off a measurement (its report
    /// documents, their files, its shared links).
    fn measurements(&self, table: &str, id_column: &str, patient_column: &str) -> Condition;

    /// Periodic reports (the `reports` table).
    fn periodic_reports(&self) -> Condition;

    /// Stored files (the `files` table), which only capabilities and operators read by id.
    fn files(&self) -> Condition {
        nothing()
    }

    /// Notifications and events about a patient, keyed by the patient in `table.column`.
    fn notifications(&self, table: &str, column: &str, now: i64) -> Condition {
        self.users(table, column, now)
    }
}

/// The user on whose behalf a query runs: a person, signed in through the API or the portal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Viewer {
    pub user_id: Id,
    pub admin: bool,
}

/// One prescription: a patient enlisted in a group. The scope of a periodic report made for
/// it (by the scheduler, or on request by the group's staff): the patient's record, the
/// measurements the patient shared with the group, and the reports made for that group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prescription {
    pub patient: Id,
    pub group: Id,
}

/// The parts of Tacho that read on no one's behalf, each with what it may read and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// Signing in (a password, a token, a session, an account link, a registration's check
    /// that an address is free): finds accounts by address, token or id to check a secret.
    /// Accounts only; never a measurement, report, file or notification.
    SignIn,
    /// The scheduler deciding what is due: prescriptions and their patients' accounts (time
    /// zone, activation). The reports it makes are read through a [`Prescription`].
    Scheduler,
    /// The notifier: an event, the account of its patient and of its readers, the
    /// measurement or report it names (for the mail's summary and attachment), and the
    /// readers' inbox entries for a digest. The readers themselves are chosen by the rules of
    /// this module when the event is fanned out.
    Notifier,
    /// A capability: an app's `readFileToken` or a shared link, which names one file. Files
    /// only; the capability's own check (secret, version, expiry, revocation) grants it.
    Capability,
    /// The report maker: the profile of the patient of a measurement or periodic report that
    /// its caller read through its own scope (a PDF shows it beside the data), and the stored
    /// file of a render input, found by the hash of that input, which only its holder can
    /// compute. Never a measurement, report or notification.
    Reports,
    /// Erasure and retention: every row of the patients and periods they erase, found to be
    /// deleted (an administrator asked for the erasure, or `TACHO_RETENTION_DAYS` set the
    /// period), and the counts their progress shows.
    Eraser,
    /// Whoever runs the server, from the command line (`tacho measurements reanalyse`,
    /// `backup`, `files migrate`, `reports create`, `user add`, `demo`): everything, as the
    /// database's owner could read it anyway.
    Operator,
}

/// Nothing at all.
fn nothing() -> Condition {
    Condition::all().add(Expr::val(1).eq(0))
}

fn col(table: &str, column: &str) -> Expr {
    Expr::col((Alias::new(table), Alias::new(column)))
}

/// The groups `user_id` is staff in.
pub fn staff_groups_of(user_id: &Id) -> SelectStatement {
    Query::select()
        .column((Alias::new("staff_enlistments"), Alias::new("group_id")))
        .from(Alias::new("staff_enlistments"))
        .and_where(col("staff_enlistments", "user_id").eq(*user_id))
        .to_owned()
}

// The viewer's two conditions are correlated `EXISTS` probes rather than `IN (subquery)`: an
// `IN` builds the whole set of what a physician sees (every measurement of their groups) for
// each statement, so a page's cost grew with the clinic; a probe costs two index lookups per
// row the statement reads, which a page of a list bounds. The aliases keep the probes' tables
// apart from the outer query's.
//
// PostgreSQL plans an `EXISTS` under an `OR` as a choice between that probe and a hash of the
// whole set, and picks the hash whenever the scan under the page's `LIMIT` could read many
// rows: a page of a physician's inbox built the hash of every measurement of the group first
// (13 ms at 20,000 measurements). `OFFSET 0` inside the probe is PostgreSQL's documented
// fence against that rewrite (`simplify_EXISTS_query` in its planner's `subselect.c` keeps
// any query with an `OFFSET` as it is), so a probe stays a probe; with `LIMIT 1` it is valid
// SQL on SQLite too, where it changes nothing. A statement that reads every row a reader
// sees (an exact total) is where the hash is right: [`AsSet`] leaves the fence out.

/// How a probe is planned: per row (pages, lookups), or as a set the database may hash or
/// join (a statement that reads every row a reader sees).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    /// Fenced (`LIMIT 1 OFFSET 0`): two index lookups per row the statement reads.
    PerRow,
    /// Unfenced: PostgreSQL may hash it (under an `OR`) or join it (at the top level).
    Set,
}

impl Probe {
    fn fence(self, mut probe: SelectStatement) -> SelectStatement {
        match self {
            Probe::PerRow => probe.limit(1).offset(0).to_owned(),
            Probe::Set => probe,
        }
    }
}

/// The enlistments (`enlistment`) of any patient in the groups the staff member in `staff` is
/// staff in (`membership`), for the caller to select from and narrow.
fn staff_group_enlistments(
    staff: Expr,
    (enlistment, membership): (Alias, Alias),
) -> SelectStatement {
    Query::select()
        .from_as(Alias::new("patient_enlistments"), enlistment.clone())
        .join_as(
            JoinType::InnerJoin,
            Alias::new("staff_enlistments"),
            membership.clone(),
            Expr::col((membership.clone(), Alias::new("group_id")))
                .equals((enlistment, Alias::new("group_id"))),
        )
        .and_where(Expr::col((membership, Alias::new("user_id"))).eq(staff))
        .to_owned()
}

/// The enlistments (`enlistment`) of the patient in `patient` in the groups the staff member
/// in `staff` is staff in (`membership`), for the caller to select from and narrow.
fn enlistments_in_staff_groups(
    staff: Expr,
    patient: Expr,
    (enlistment, membership): (Alias, Alias),
) -> SelectStatement {
    staff_group_enlistments(staff, (enlistment.clone(), membership))
        .and_where(Expr::col((enlistment, Alias::new("user_id"))).eq(patient))
        .to_owned()
}

/// A row when `patient` has an enlistment active at `now` in a group `staff` is staff in.
fn cared_for_by_staff(staff: &Id, patient: Expr, now: i64, probe: Probe) -> SelectStatement {
    let enlistment = Alias::new("scope_pe");
    let select = enlistments_in_staff_groups(
        Expr::val(*staff),
        patient,
        (enlistment.clone(), Alias::new("scope_se")),
    )
    .expr(Expr::val(1))
    .and_where(Expr::col((enlistment, Alias::new("expiry_timestamp"))).gt(now))
    .to_owned();
    probe.fence(select)
}

/// A row when `measurement` is shared with a group `staff` is staff in.
fn shared_with_staff(staff: &Id, measurement: Expr, probe: Probe) -> SelectStatement {
    let (shared, membership) = (Alias::new("scope_mg"), Alias::new("scope_se"));
    let select = Query::select()
        .expr(Expr::val(1))
        .from_as(Alias::new("measurement_groups"), shared.clone())
        .join_as(
            JoinType::InnerJoin,
            Alias::new("staff_enlistments"),
            membership.clone(),
            Expr::col((membership.clone(), Alias::new("group_id")))
                .equals((shared.clone(), Alias::new("group_id"))),
        )
        .and_where(Expr::col((shared, Alias::new("measurement_id"))).eq(measurement))
        .and_where(Expr::col((membership, Alias::new("user_id"))).eq(*staff))
        .to_owned();
    probe.fence(select)
}

/// The ids of the patients `viewer` cares for at `now`, each once: for a staff member, those
/// with an enlistment active in a group it is staff in (the staff half of [`Viewer::users`]);
/// for an administrator, every patient ever enlisted. The portal's patient list lists exactly
/// these patients' accounts, probed one by one; a count of them reads the enlistments'
/// indexes here instead.
pub fn patients_cared_for(viewer: &Viewer, now: i64) -> SelectStatement {
    let enlistment = Alias::new("cared_pe");
    let patient = (enlistment.clone(), Alias::new("user_id"));
    if viewer.admin {
        return Query::select()
            .distinct()
            .column(patient)
            .from_as(Alias::new("patient_enlistments"), enlistment)
            .to_owned();
    }
    staff_group_enlistments(
        Expr::val(viewer.user_id),
        (enlistment.clone(), Alias::new("cared_se")),
    )
    .distinct()
    .column(patient)
    .and_where(Expr::col((enlistment, Alias::new("expiry_timestamp"))).gt(now))
    .to_owned()
}

/// `table.column` names a patient with an enlistment active at `now` in a group `staff` is
/// staff in, probed per row (the staff half of [`Viewer::users`]).
pub fn cared_for_by(staff: &Id, table: &str, column: &str, now: i64) -> Condition {
    Condition::all().add(Expr::exists(cared_for_by_staff(
        staff,
        col(table, column),
        now,
        Probe::PerRow,
    )))
}

/// Until when the staff member in `staff` cares for the patient in `patient`: the latest
/// expiry of the patient's enlistments in groups the staff member is staff in, 0 when there is
/// none. One enlistment is active at a time `now` exactly when the latest one ends after it,
/// so a row that keeps this value (`inbox_tallies.cared_until`) can be judged by [`kept_care`]
/// at any later time without probing again, as long as it is kept in the transactions that
/// change the patient's enlistments or the staff member's memberships.
pub fn care_ends(staff: Expr, patient: Expr) -> Expr {
    let enlistment = Alias::new("care_pe");
    let latest =
        enlistments_in_staff_groups(staff, patient, (enlistment.clone(), Alias::new("care_se")))
            .expr(Expr::col((enlistment, Alias::new("expiry_timestamp"))).max())
            .to_owned();
    Func::coalesce([
        Expr::SubQuery(None, Box::new(latest.into())),
        Expr::val(0i64),
    ])
    .into()
}

/// Writes again, in every row of `table` about `patient` (its `patient_id`), until when the
/// row's reader (`user_id`) cares for the patient ([`care_ends`], into `cared_until`): what the
/// kept tallies need after a change to the patient's enlistments.
pub fn care_rewritten(table: &str, patient: &Id) -> UpdateStatement {
    let table = Alias::new(table);
    Query::update()
        .table(table.clone())
        .value(
            Alias::new("cared_until"),
            care_ends(
                Expr::col((table.clone(), Alias::new("user_id"))),
                Expr::col((table, Alias::new("patient_id"))),
            ),
        )
        .and_where(Expr::col(Alias::new("patient_id")).eq(*patient))
        .to_owned()
}

/// [`Viewer::users`] for a row about the patient in `table.patient_column` that keeps, in
/// `table.cared_until_column`, the end of `viewer`'s care for that patient ([`care_ends`]):
/// itself, and the patients it cares for at `now`; everything for an administrator.
pub fn kept_care(
    viewer: &Viewer,
    table: &str,
    patient_column: &str,
    cared_until_column: &str,
    now: i64,
) -> Condition {
    if viewer.admin {
        return Condition::all();
    }
    Condition::any()
        .add(col(table, patient_column).eq(viewer.user_id))
        .add(col(table, cared_until_column).gt(now))
}

/// Only the user `user_id` (for lists keyed by a user id in `table.column`).
pub fn only_user(table: &str, column: &str, user_id: &Id) -> Condition {
    Condition::all().add(col(table, column).eq(*user_id))
}

impl Scope for Viewer {
    /// Itself, and as staff the patients with a running prescription in one of its groups.
    fn users(&self, table: &str, column: &str, now: i64) -> Condition {
        self.users_probed(table, column, now, Probe::PerRow)
    }

    /// Its own, and those whose groups hold one of its staff groups.
    fn measurements(&self, table: &str, id_column: &str, patient_column: &str) -> Condition {
        self.measurements_probed(table, id_column, patient_column, Probe::PerRow)
    }

    /// Its own, and those made for one of its staff groups.
    fn periodic_reports(&self) -> Condition {
        if self.admin {
            return Condition::all();
        }
        Condition::any()
            .add(col("reports", "user_id").eq(self.user_id))
            .add(col("reports", "group_id").in_subquery(staff_groups_of(&self.user_id)))
    }
}

/// The same rules as the [`Viewer`] it wraps, for a statement that reads every row the
/// viewer sees (an exact total), where the database may build the set of what the viewer
/// sees once instead of probing per row.
#[derive(Debug, Clone, Copy)]
pub struct AsSet<'a>(pub &'a Viewer);

impl Scope for AsSet<'_> {
    fn users(&self, table: &str, column: &str, now: i64) -> Condition {
        self.0.users_probed(table, column, now, Probe::Set)
    }

    fn measurements(&self, table: &str, id_column: &str, patient_column: &str) -> Condition {
        self.0
            .measurements_probed(table, id_column, patient_column, Probe::Set)
    }

    fn periodic_reports(&self) -> Condition {
        self.0.periodic_reports()
    }
}

impl Viewer {
    fn users_probed(&self, table: &str, column: &str, now: i64, probe: Probe) -> Condition {
        if self.admin {
            return Condition::all();
        }
        Condition::any()
            .add(col(table, column).eq(self.user_id))
            .add(Expr::exists(cared_for_by_staff(
                &self.user_id,
                col(table, column),
                now,
                probe,
            )))
    }

    fn measurements_probed(
        &self,
        table: &str,
        id_column: &str,
        patient_column: &str,
        probe: Probe,
    ) -> Condition {
        if self.admin {
            return Condition::all();
        }
        Condition::any()
            .add(col(table, patient_column).eq(self.user_id))
            .add(Expr::exists(shared_with_staff(
                &self.user_id,
                col(table, id_column),
                probe,
            )))
    }

    /// Groups this viewer may see: those it is staff or patient in.
    pub fn groups(&self) -> Condition {
        if self.admin {
            return Condition::all();
        }
        let patient_groups = Query::select()
            .column((Alias::new("patient_enlistments"), Alias::new("group_id")))
            .from(Alias::new("patient_enlistments"))
            .and_where(col("patient_enlistments", "user_id").eq(self.user_id))
            .to_owned();
        Condition::any()
            .add(col("groups", "id").in_subquery(staff_groups_of(&self.user_id)))
            .add(col("groups", "id").in_subquery(patient_groups))
    }
}

impl Scope for Prescription {
    /// The patient's account and record, whether or not the prescription still runs (a
    /// report is made when it ends).
    fn users(&self, table: &str, column: &str, _now: i64) -> Condition {
        only_user(table, column, &self.patient)
    }

    /// The patient's measurements shared with the group.
    fn measurements(&self, table: &str, id_column: &str, patient_column: &str) -> Condition {
        let shared = Alias::new("scope_mg");
        let with_group = Query::select()
            .expr(Expr::val(1))
            .from_as(Alias::new("measurement_groups"), shared.clone())
            .and_where(
                Expr::col((shared.clone(), Alias::new("measurement_id"))).eq(col(table, id_column)),
            )
            .and_where(Expr::col((shared, Alias::new("group_id"))).eq(self.group))
            .to_owned();
        Condition::all()
            .add(col(table, patient_column).eq(self.patient))
            .add(Expr::exists(with_group))
    }

    /// The patient's reports made for the group.
    fn periodic_reports(&self) -> Condition {
        Condition::all()
            .add(col("reports", "user_id").eq(self.patient))
            .add(col("reports", "group_id").eq(self.group))
    }
}

impl Scope for Service {
    fn users(&self, _table: &str, _column: &str, _now: i64) -> Condition {
        match self {
            Service::SignIn
            | Service::Scheduler
            | Service::Notifier
            | Service::Reports
            | Service::Eraser
            | Service::Operator => Condition::all(),
            Service::Capability => nothing(),
        }
    }

    fn measurements(&self, _table: &str, _id_column: &str, _patient_column: &str) -> Condition {
        match self {
            Service::Notifier | Service::Eraser | Service::Operator => Condition::all(),
            Service::SignIn | Service::Scheduler | Service::Capability | Service::Reports => {
                nothing()
            }
        }
    }

    fn periodic_reports(&self) -> Condition {
        match self {
            Service::Notifier | Service::Eraser | Service::Operator => Condition::all(),
            Service::SignIn | Service::Scheduler | Service::Capability | Service::Reports => {
                nothing()
            }
        }
    }

    fn files(&self) -> Condition {
        match self {
            Service::Capability | Service::Reports | Service::Eraser | Service::Operator => {
                Condition::all()
            }
            Service::SignIn | Service::Scheduler | Service::Notifier => nothing(),
        }
    }

    fn notifications(&self, _table: &str, _column: &str, _now: i64) -> Condition {
        match self {
            Service::Notifier | Service::Eraser | Service::Operator => Condition::all(),
            Service::SignIn | Service::Scheduler | Service::Capability | Service::Reports => {
                nothing()
            }
        }
    }
}

/// What two scopes both may see: a report made by a person for a prescription lists only
/// what the person and the prescription both see.
#[derive(Debug, Clone, Copy)]
pub struct Both<'a>(pub &'a dyn Scope, pub &'a dyn Scope);

impl Scope for Both<'_> {
    fn users(&self, table: &str, column: &str, now: i64) -> Condition {
        Condition::all()
            .add(self.0.users(table, column, now))
            .add(self.1.users(table, column, now))
    }

    fn measurements(&self, table: &str, id_column: &str, patient_column: &str) -> Condition {
        Condition::all()
            .add(self.0.measurements(table, id_column, patient_column))
            .add(self.1.measurements(table, id_column, patient_column))
    }

    fn periodic_reports(&self) -> Condition {
        Condition::all()
            .add(self.0.periodic_reports())
            .add(self.1.periodic_reports())
    }

    fn files(&self) -> Condition {
        Condition::all().add(self.0.files()).add(self.1.files())
    }

    fn notifications(&self, table: &str, column: &str, now: i64) -> Condition {
        Condition::all()
            .add(self.0.notifications(table, column, now))
            .add(self.1.notifications(table, column, now))
    }
}

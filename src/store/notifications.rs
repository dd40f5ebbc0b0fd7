//! Notifications: events written to the outbox in the transaction of what caused them, their
//! readers (by the visibility rules, the groups' choices and the readers' preferences), and
//! the readers' inboxes.
//!
//! The outbox is the `events` table: [`Store::record_event`] inserts the event in the caller's
//! transaction, so an event exists exactly when what it reports does. It waits (no
//! `fanned_out_timestamp`) until a worker fans it out: one inbox entry per reader and event
//! (unique), one job per e-mail and webhook delivery (each under a unique key), and the mark,
//! all in one transaction. A crash before that commit leaves the event waiting; two workers
//! fanning out the same event add nothing twice.

use std::collections::{BTreeSet, HashMap};

use sea_orm::sea_query::{
    Condition, Expr, LockBehavior, LockType, OnConflict, Order, Query, SelectStatement,
};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbBackend, DbErr, EntityTrait, ExprTrait,
    QueryFilter, QueryOrder, QuerySelect,
};

use super::entities::{
    event, group_notification_setting, measurement_group, notification, notification_preference,
    report, staff_enlistment, user, webhook_endpoint,
};
use super::query::ListSpec;
use super::{AsSet, NewJob, Reader, Scope, Service, StoreError, StoreResult, Tx, Viewer};
use crate::domain::id::Id;
use crate::domain::notification::{Channel, EventKind, KindSet, Preferences};
use crate::domain::recipients::{self, Audience};

/// An event to record.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub kind: EventKind,
    pub patient_id: Id,
    pub actor_id: Option<Id>,
    pub measurement_id: Option<Id>,
    pub report_id: Option<Id>,
    pub detail: String,
}

/// How far an unread count counts: the portal shows "99+" past 99.
pub const UNREAD_COUNTED: u64 = 99;

/// Inserts `new` on `db` (the caller's transaction), waiting to be fanned out; returns its id.
pub(crate) async fn write_event<C: ConnectionTrait>(
    db: &C,
    now: i64,
    new: NewEvent,
) -> Result<Id, DbErr> {
    let ids = write_events(db, now, [new]).await?;
    Ok(ids[0])
}

/// Inserts the events `new` on `db` (the caller's transaction) in one statement per few
/// hundred; returns their ids.
pub(crate) async fn write_events<C: ConnectionTrait>(
    db: &C,
    now: i64,
    new: impl IntoIterator<Item = NewEvent>,
) -> Result<Vec<Id>, DbErr> {
    let rows: Vec<event::ActiveModel> = new
        .into_iter()
        .map(|new| event::ActiveModel {
            id: Set(Id::generate()),
            kind: Set(new.kind),
            patient_id: Set(new.patient_id),
            actor_id: Set(new.actor_id),
            measurement_id: Set(new.measurement_id),
            report_id: Set(new.report_id),
            detail: Set(new.detail.chars().take(200).collect()),
            creation_timestamp: Set(now),
            fanned_out_timestamp: Set(None),
        })
        .collect();
    let ids = rows.iter().map(|r| *r.id.as_ref()).collect();
    // 9 values a row keeps every statement far below SQLite's parameter limit.
    for chunk in rows.chunks(500) {
        event::Entity::insert_many(chunk.to_vec())
            .exec_without_returning(db)
            .await?;
    }
    Ok(ids)
}

/// `ids` once each, in order.
fn unique(ids: impl IntoIterator<Item = Id>) -> Vec<Id> {
    ids.into_iter()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// An event ready to fan out: who reads it and which webhook endpoints it goes to.
#[derive(Debug, Clone)]
pub struct FanOut {
    pub event: event::Model,
    pub readers: Vec<Recipient>,
    pub endpoints: Vec<webhook_endpoint::Model>,
}

/// A reader of an event and what it chose to receive.
#[derive(Debug, Clone)]
pub struct Recipient {
    pub user: user::Model,
    pub preferences: Preferences,
}

/// What the fan-out of a batch of events is decided from.
#[derive(Default)]
struct FanOutInputs {
    /// Each event, and the same as the rules see it.
    events: Vec<(event::Model, recipients::Event)>,
    audience: Audience,
    /// The accounts the audience names, by id.
    users: HashMap<Id, user::Model>,
    /// The preferences of those that chose, by account.
    preferences: HashMap<Id, Preferences>,
    /// The groups' webhook endpoints, by id.
    endpoints: HashMap<Id, webhook_endpoint::Model>,
}

impl Reader {
    /// Takes up to `limit` waiting events, oldest first, for this store's transaction to fan
    /// out (see [`Reader::waiting`]).
    pub async fn waiting_events(&self, limit: u64) -> StoreResult<Vec<Id>> {
        let mut select = self.waiting();
        select.limit(limit);
        self.event_ids(&select).await
    }

    /// Those of `ids` that still wait to be fanned out, taken as [`Reader::waiting_events`]
    /// takes them. A worker that fans out events one by one, after its batch failed, listed
    /// them outside its transactions: another worker may have fanned some out since, or be
    /// fanning them out, and an event is fanned out once.
    pub async fn waiting_among(&self, ids: &[Id]) -> StoreResult<Vec<Id>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut select = self.waiting();
        select.and_where(event::Column::Id.is_in(ids.iter().copied()));
        self.event_ids(&select).await
    }

    /// The waiting events, oldest first, taken for this store's transaction: on PostgreSQL
    /// the rows are locked and other workers skip them; on SQLite the transaction that writes
    /// holds the database.
    fn waiting(&self) -> SelectStatement {
        let mut select = Query::select();
        select
            .column(event::Column::Id)
            .from(event::Entity)
            .and_where(event::Column::FannedOutTimestamp.is_null())
            .order_by(event::Column::CreationTimestamp, Order::Asc)
            .order_by(event::Column::Id, Order::Asc);
        if self.db.get_database_backend() == DbBackend::Postgres {
            select.lock_with_behavior(LockType::Update, LockBehavior::SkipLocked);
        }
        select
    }

    /// The ids `select` reads from `events`.
    async fn event_ids(&self, select: &SelectStatement) -> StoreResult<Vec<Id>> {
        let rows = self.db.query_all(select).await?;
        Ok(rows
            .iter()
            .map(|row| row.try_get::<Id>("", "id"))
            .collect::<Result<_, _>>()?)
    }

    /// An event by id, if `scope` reads notifications (the notifier).
    pub async fn event(&self, scope: &Service, id: &Id) -> StoreResult<event::Model> {
        event::Entity::find_by_id(*id)
            .filter(scope.notifications("events", "patient_id", self.now()))
            .one(&self.db)
            .await?
            .ok_or(StoreError::NotFound)
    }

    /// How many events wait to be fanned out, and since when the oldest has.
    pub async fn events_waiting(&self) -> StoreResult<(u64, Option<i64>)> {
        let (count, oldest): (i64, Option<i64>) = event::Entity::find()
            .select_only()
            .column_as(Expr::col(event::Column::Id).count(), "count")
            .column_as(event::Column::CreationTimestamp.min(), "oldest")
            .filter(event::Column::FannedOutTimestamp.is_null())
            .into_tuple()
            .one(&self.db)
            .await?
            .unwrap_or((0, None));
        Ok((u64::try_from(count).unwrap_or(0), oldest))
    }

    /// Plans the fan-out of the events `ids` (those that no longer exist are left out): each
    /// one's readers and webhook endpoints, as [`Audience::told`] decides them. A batch costs
    /// the same few queries however many events it holds, which is what keeps a run of
    /// thousands of reports cheap.
    ///
    /// Only `scope` (the notifier's) reads events and accounts here.
    pub async fn plan_fan_outs(&self, scope: &Service, ids: &[Id]) -> StoreResult<Vec<FanOut>> {
        let FanOutInputs {
            events,
            audience,
            users,
            preferences,
            endpoints,
        } = self.fan_out_inputs(scope, ids).await?;
        Ok(events
            .into_iter()
            .map(|(event, seen)| {
                let told = audience.told(&seen);
                FanOut {
                    readers: told
                        .readers
                        .iter()
                        .filter_map(|id| users.get(id))
                        .map(|user| Recipient {
                            preferences: preferences.get(&user.id).cloned().unwrap_or_default(),
                            user: user.clone(),
                        })
                        .collect(),
                    endpoints: told
                        .endpoints
                        .iter()
                        .filter_map(|id| endpoints.get(id))
                        .cloned()
                        .collect(),
                    event,
                }
            })
            .collect())
    }

    /// The measurements among those `events` analysed that a `result.urgent` event is about,
    /// in one query (none when no event is an analysis).
    async fn urgent_measurements(
        &self,
        scope: &Service,
        events: &[event::Model],
    ) -> StoreResult<std::collections::HashSet<Id>> {
        let analysed: Vec<Id> = events
            .iter()
            .filter(|e| e.kind == EventKind::MeasurementAnalysed)
            .filter_map(|e| e.measurement_id)
            .collect();
        if analysed.is_empty() {
            return Ok(Default::default());
        }
        let urgent: Vec<Option<Id>> = event::Entity::find()
            .select_only()
            .column(event::Column::MeasurementId)
            .filter(event::Column::Kind.eq(EventKind::ResultUrgent))
            .filter(event::Column::MeasurementId.is_in(analysed))
            .filter(scope.notifications("events", "patient_id", self.now()))
            .into_tuple()
            .all(&self.db)
            .await?;
        Ok(urgent.into_iter().flatten().collect())
    }

    /// What the fan-out of the events `ids` is decided from: the events, their groups, the
    /// staff, settings and endpoints of those groups, the administrators when an event is
    /// theirs, and the accounts and preferences of everyone they name. Every set is read in
    /// one query (per 500 accounts), whatever the number of events.
    async fn fan_out_inputs(&self, scope: &Service, ids: &[Id]) -> StoreResult<FanOutInputs> {
        let events = event::Entity::find()
            .filter(event::Column::Id.is_in(ids.iter().copied()))
            .filter(scope.notifications("events", "patient_id", self.now()))
            .all(&self.db)
            .await?;
        if events.is_empty() {
            return Ok(FanOutInputs::default());
        }
        let mut groups = self.groups_of_events(&events).await?;
        let (mut audience, endpoints) = self
            .audience_of_groups(unique(groups.values().flatten().copied()))
            .await?;
        if events.iter().any(|e| e.kind.reaches_administrators()) {
            audience.administrators = self.administrator_ids().await?;
        }
        let people = unique(
            events
                .iter()
                .map(|e| e.patient_id)
                .chain(audience.staff.values().flatten().copied())
                .chain(audience.administrators.iter().copied()),
        );
        let users = self.accounts_by_id(scope, &people).await?;
        audience.active = users.values().map(|u| (u.id, u.activation)).collect();
        let found: Vec<Id> = users.keys().copied().collect();
        let preferences = self.preferences_of(&found).await?;
        let urgent = self.urgent_measurements(scope, &events).await?;
        let events = events
            .into_iter()
            .map(|e| {
                let seen = recipients::Event {
                    kind: e.kind,
                    patient: e.patient_id,
                    actor: e.actor_id,
                    groups: groups.remove(&e.id).unwrap_or_default(),
                    urgent: e.kind == EventKind::MeasurementAnalysed
                        && e.measurement_id.is_some_and(|m| urgent.contains(&m)),
                };
                (e, seen)
            })
            .collect();
        Ok(FanOutInputs {
            events,
            audience,
            users,
            preferences,
            endpoints: endpoints.into_iter().map(|e| (e.id, e)).collect(),
        })
    }

    /// The staff of `groups`, the kinds each lets reach them, and their webhook endpoints (the
    /// audience's share of them too); no query when there are no groups.
    async fn audience_of_groups(
        &self,
        groups: Vec<Id>,
    ) -> StoreResult<(Audience, Vec<webhook_endpoint::Model>)> {
        let mut audience = Audience::default();
        if groups.is_empty() {
            return Ok((audience, Vec::new()));
        }
        audience.staff_events = group_notification_setting::Entity::find()
            .filter(group_notification_setting::Column::GroupId.is_in(groups.clone()))
            .all(&self.db)
            .await?
            .into_iter()
            .map(|s| (s.group_id, KindSet::from_stored(&s.staff_events)))
            .collect();
        let places: Vec<(Id, Id)> = staff_enlistment::Entity::find()
            .select_only()
            .column(staff_enlistment::Column::GroupId)
            .column(staff_enlistment::Column::UserId)
            .filter(staff_enlistment::Column::GroupId.is_in(groups.clone()))
            .into_tuple()
            .all(&self.db)
            .await?;
        for (group, user) in places {
            audience.staff.entry(group).or_default().push(user);
        }
        let endpoints = webhook_endpoint::Entity::find()
            .filter(webhook_endpoint::Column::GroupId.is_in(groups))
            .all(&self.db)
            .await?;
        audience.endpoints = endpoints
            .iter()
            .map(|e| recipients::Endpoint {
                id: e.id,
                group: e.group_id,
                events: KindSet::from_stored(&e.events),
                enabled: e.enabled,
            })
            .collect();
        Ok((audience, endpoints))
    }

    /// The accounts `ids` that `scope` sees, active or not, by id.
    async fn accounts_by_id(
        &self,
        scope: &Service,
        ids: &[Id],
    ) -> StoreResult<HashMap<Id, user::Model>> {
        let mut users = HashMap::new();
        for chunk in ids.chunks(500) {
            let found = user::Entity::find()
                .filter(user::Column::Id.is_in(chunk.iter().copied()))
                .filter(scope.users("users", "id", self.now()))
                .all(&self.db)
                .await?;
            users.extend(found.into_iter().map(|u| (u.id, u)));
        }
        Ok(users)
    }

    /// The groups whose staff see what each event is about, by event id.
    async fn groups_of_events(
        &self,
        events: &[event::Model],
    ) -> StoreResult<HashMap<Id, BTreeSet<Id>>> {
        let mut groups: HashMap<Id, BTreeSet<Id>> = HashMap::new();
        let mut by_report: Vec<(Id, Id)> = Vec::new();
        let mut by_measurement: Vec<(Id, Id)> = Vec::new();
        for e in events {
            match (e.kind, e.measurement_id, e.report_id) {
                (EventKind::WebhookDisabled, _, _) => {}
                (EventKind::PeriodicReportCreated, _, Some(report)) => {
                    by_report.push((e.id, report))
                }
                (_, Some(measurement), _) => by_measurement.push((e.id, measurement)),
                _ => {}
            }
        }
        if !by_measurement.is_empty() {
            let rows: Vec<(Id, Id)> = measurement_group::Entity::find()
                .select_only()
                .column(measurement_group::Column::MeasurementId)
                .column(measurement_group::Column::GroupId)
                .filter(
                    measurement_group::Column::MeasurementId
                        .is_in(by_measurement.iter().map(|(_, m)| *m)),
                )
                .into_tuple()
                .all(&self.db)
                .await?;
            for (event, measurement) in &by_measurement {
                let of_it = rows.iter().filter(|(m, _)| m == measurement);
                groups
                    .entry(*event)
                    .or_default()
                    .extend(of_it.map(|(_, g)| *g));
            }
        }
        if !by_report.is_empty() {
            // A report reaches the staff of the group it was made for, and no other.
            let reports: HashMap<Id, Option<Id>> = report::Entity::find()
                .select_only()
                .column(report::Column::Id)
                .column(report::Column::GroupId)
                .filter(report::Column::Id.is_in(by_report.iter().map(|(_, r)| *r)))
                .into_tuple::<(Id, Option<Id>)>()
                .all(&self.db)
                .await?
                .into_iter()
                .collect();
            for (event, report) in &by_report {
                let entry = groups.entry(*event).or_default();
                if let Some(Some(group)) = reports.get(report) {
                    entry.insert(*group);
                }
            }
        }
        Ok(groups)
    }

    /// The ids of every administrator.
    async fn administrator_ids(&self) -> StoreResult<Vec<Id>> {
        // Roles are a JSON list; its text is matched, which both databases can do.
        Ok(user::Entity::find()
            .select_only()
            .column(user::Column::Id)
            .filter(Expr::cust("CAST(roles AS TEXT) LIKE '%\"admin\"%'"))
            .into_tuple()
            .all(&self.db)
            .await?)
    }

    /// The preferences of `users`; those who never chose have none in the map.
    pub async fn preferences_of(&self, users: &[Id]) -> StoreResult<HashMap<Id, Preferences>> {
        let mut found = HashMap::new();
        for chunk in users.chunks(500) {
            let rows = notification_preference::Entity::find()
                .filter(notification_preference::Column::UserId.is_in(chunk.iter().copied()))
                .all(&self.db)
                .await?;
            for row in rows {
                found.insert(
                    row.user_id,
                    Preferences::from_stored(&row.muted, row.daily_digest, row.attach_pdf),
                );
            }
        }
        Ok(found)
    }

    /// The preferences of `user` (everything on when it never chose).
    pub async fn preferences(&self, user: &Id) -> StoreResult<Preferences> {
        Ok(self
            .preferences_of(&[*user])
            .await?
            .remove(user)
            .unwrap_or_default())
    }

    /// The events each of `groups` lets reach its staff (every event when never chosen), in
    /// one query however many groups.
    pub async fn group_staff_events(&self, groups: &[Id]) -> StoreResult<HashMap<Id, KindSet>> {
        let mut chosen: HashMap<Id, KindSet> = group_notification_setting::Entity::find()
            .filter(group_notification_setting::Column::GroupId.is_in(groups.iter().copied()))
            .all(&self.db)
            .await?
            .into_iter()
            .map(|s| (s.group_id, KindSet::from_stored(&s.staff_events)))
            .collect();
        Ok(groups
            .iter()
            .map(|g| (*g, chosen.remove(g).unwrap_or_else(KindSet::all_public)))
            .collect())
    }

    /// `viewer`'s inbox: its own entries shown in the inbox that it may still read.
    fn inbox_of(&self, viewer: &Viewer) -> sea_orm::Select<notification::Entity> {
        self.inbox_as(viewer, viewer)
    }

    /// The entries of `reader`'s inbox that `scope` (the reader's own rules, probed per row
    /// or as a set) lets it read.
    fn inbox_as(
        &self,
        reader: &Viewer,
        scope: &dyn Scope,
    ) -> sea_orm::Select<notification::Entity> {
        notification::Entity::find()
            .filter(notification::Column::InInbox.eq(true))
            .filter(self.readable_as(reader, scope))
    }

    /// Entries of `viewer`'s that it may still read: about a patient it sees, and about a
    /// measurement or periodic report it sees (a physician who left a group, or whose
    /// prescription ended, no longer reads of what that gave it).
    fn readable(&self, viewer: &Viewer) -> Condition {
        self.readable_as(viewer, viewer)
    }

    /// [`Reader::readable`] for `reader`'s entries, judged by `scope`.
    fn readable_as(&self, reader: &Viewer, scope: &dyn Scope) -> Condition {
        Condition::all()
            .add(notification::Column::UserId.eq(reader.user_id))
            .add(scope.users("notifications", "patient_id", self.now()))
            .add(entry_readable(scope))
    }

    /// A page of `viewer`'s inbox. The page probes the access gate per entry it reads. The
    /// exact total of the whole inbox is read from the kept tallies, one row per patient
    /// ([`Reader::inbox_total`]); a filtered one reads every entry the filter and the viewer
    /// may read, where the gate is cheaper as a set ([`AsSet`]).
    pub async fn inbox(
        &self,
        viewer: &Viewer,
        spec: &ListSpec,
    ) -> StoreResult<(Vec<notification::Model>, Option<u64>)> {
        let page = ListSpec {
            skip_count: true,
            ..spec.clone()
        };
        let (entries, _) = self.page(self.inbox_of(viewer), &page).await?;
        let total = if spec.skip_count {
            None
        } else if spec.condition.is_empty() {
            Some(self.inbox_total(viewer).await?)
        } else {
            self.total(self.inbox_as(viewer, &AsSet(viewer)), spec)
                .await?
        };
        Ok((entries, total))
    }

    /// Whether `viewer` has an unread entry about `measurement`.
    pub async fn has_unread_about(&self, viewer: &Viewer, measurement: &Id) -> StoreResult<bool> {
        let found = notification::Entity::find()
            .select_only()
            .column(notification::Column::Id)
            .filter(self.readable(viewer))
            .filter(notification::Column::MeasurementId.eq(*measurement))
            .filter(notification::Column::Read.eq(false))
            .limit(1)
            .into_tuple::<Id>()
            .one(&self.db)
            .await?;
        Ok(found.is_some())
    }

    /// How many entries of `viewer`'s inbox are unread, counting no further than
    /// [`UNREAD_COUNTED`]: the bell asks every 20 s, and "99+" is all it shows past that.
    pub async fn unread_count(&self, viewer: &Viewer) -> StoreResult<u64> {
        let unread = self
            .inbox_of(viewer)
            .filter(notification::Column::Read.eq(false));
        self.count_up_to(unread, UNREAD_COUNTED).await
    }

    /// One entry of `viewer`'s that it may still read; another reader's, or one about what
    /// it no longer sees, is not found.
    pub async fn own_notification(
        &self,
        viewer: &Viewer,
        id: &Id,
    ) -> StoreResult<notification::Model> {
        notification::Entity::find_by_id(*id)
            .filter(self.readable(viewer))
            .one(&self.db)
            .await?
            .ok_or(StoreError::NotFound)
    }

    /// Whether `reader` may still read its entry about event `event` (an e-mail about it goes
    /// only while it may).
    pub async fn may_read_event(&self, reader: &Viewer, event: &Id) -> StoreResult<bool> {
        use sea_orm::PaginatorTrait;
        let found = notification::Entity::find()
            .filter(notification::Column::EventId.eq(*event))
            .filter(self.readable(reader))
            .count(&self.db)
            .await?;
        Ok(found > 0)
    }

    /// The entries waiting for `reader`'s digest that it may still read, oldest first.
    pub async fn digest_entries(&self, reader: &Viewer) -> StoreResult<Vec<notification::Model>> {
        Ok(notification::Entity::find()
            .filter(self.readable(reader))
            .filter(notification::Column::Digest.eq(true))
            .order_by_asc(notification::Column::CreationTimestamp)
            .order_by_asc(notification::Column::Id)
            .all(&self.db)
            .await?)
    }
}

/// The rules an inbox entry carries itself, judged by `scope`: its measurement, if it names
/// one, is one `scope` sees; a periodic report's entry names a report `scope` sees. The
/// entry's measurement is judged by the entry's own columns (its id, and its patient, who
/// made it), as the access gate judges anything that hangs off a measurement: no read of the
/// measurements table per entry. Whether its patient is one `scope` sees is the other half
/// of [`Reader::readable`].
pub(super) fn entry_readable(scope: &dyn Scope) -> Condition {
    let report_seen = Query::select()
        .expr(Expr::val(1))
        .from(report::Entity)
        .and_where(
            Expr::col((report::Entity, report::Column::Id))
                .equals((notification::Entity, notification::Column::ReportId)),
        )
        .cond_where(scope.periodic_reports())
        .to_owned();
    Condition::all()
        .add(
            Condition::any()
                .add(notification::Column::MeasurementId.is_null())
                .add(scope.measurements("notifications", "measurement_id", "patient_id")),
        )
        .add(
            Condition::any()
                .add(notification::Column::Kind.ne(EventKind::PeriodicReportCreated))
                .add(Expr::exists(report_seen)),
        )
}

impl Tx {
    /// Marks read the staff's unread entries about `measurement` (every reader but its
    /// patient, `patient`): a review concludes it, so what asked them to look at it has been
    /// acted on. The patient's own entries stay as they are. Returns how many.
    pub async fn settle_staff_notifications(
        &self,
        measurement: &Id,
        patient: &Id,
    ) -> StoreResult<u64> {
        self.mark_unread_read(
            Condition::all()
                .add(notification::Column::MeasurementId.eq(*measurement))
                .add(notification::Column::UserId.ne(*patient)),
        )
        .await
    }

    /// Records an event in this store's transaction (see the module's notes) and wakes the
    /// notifier once it commits.
    pub async fn record_event(&self, new: NewEvent) -> StoreResult<Id> {
        let id = write_event(&self.db, self.now(), new).await?;
        self.events_written();
        Ok(id)
    }

    /// Delivers planned events to their readers' inboxes (one entry per reader, whatever the
    /// channel, so a digest can find it), enqueues their delivery jobs and marks them fanned
    /// out, in this store's transaction.
    pub async fn fan_out(&self, planned: &[(FanOut, Vec<NewJob>)]) -> StoreResult<()> {
        let rows: Vec<notification::ActiveModel> = planned
            .iter()
            .flat_map(|(p, _)| {
                let event = &p.event;
                p.readers.iter().map(move |r| notification::ActiveModel {
                    id: Set(Id::generate()),
                    user_id: Set(r.user.id),
                    event_id: Set(event.id),
                    kind: Set(event.kind),
                    patient_id: Set(event.patient_id),
                    measurement_id: Set(event.measurement_id),
                    report_id: Set(event.report_id),
                    detail: Set(event.detail.clone()),
                    in_inbox: Set(r.preferences.wants(event.kind, Channel::Inbox)),
                    digest: Set(r.preferences.daily_digest
                        && r.preferences.wants(event.kind, Channel::Email)),
                    read: Set(false),
                    read_at: Set(None),
                    creation_timestamp: Set(event.creation_timestamp),
                })
            })
            .collect();
        // 13 values a row keeps every statement far below SQLite's parameter limit.
        for chunk in rows.chunks(500) {
            notification::Entity::insert_many(chunk.to_vec())
                .on_conflict_do_nothing_on([
                    notification::Column::UserId,
                    notification::Column::EventId,
                ])
                .exec(&self.db)
                .await?;
        }
        let delivered: Vec<(Id, Id)> = planned
            .iter()
            .flat_map(|(p, _)| p.readers.iter().map(|r| (r.user.id, p.event.patient_id)))
            .collect();
        self.retally_inboxes(delivered).await?;
        let jobs: Vec<NewJob> = planned.iter().flat_map(|(_, j)| j.clone()).collect();
        if !jobs.is_empty() {
            super::jobs::insert_jobs(&self.db, self.now(), &jobs).await?;
            self.events_written();
        }
        let ids: Vec<Id> = planned.iter().map(|(p, _)| p.event.id).collect();
        for chunk in ids.chunks(500) {
            event::Entity::update_many()
                .col_expr(event::Column::FannedOutTimestamp, Expr::value(self.now()))
                .filter(event::Column::Id.is_in(chunk.iter().copied()))
                .exec(&self.db)
                .await?;
        }
        Ok(())
    }

    /// Stores the preferences of `user`.
    pub async fn set_preferences(&self, user: &Id, preferences: &Preferences) -> StoreResult<()> {
        let row = notification_preference::ActiveModel {
            user_id: Set(*user),
            muted: Set(preferences.muted_to_stored()),
            daily_digest: Set(preferences.daily_digest),
            attach_pdf: Set(preferences.attach_pdf),
            update_timestamp: Set(self.now()),
        };
        notification_preference::Entity::insert(row)
            .on_conflict(
                OnConflict::column(notification_preference::Column::UserId)
                    .update_columns([
                        notification_preference::Column::Muted,
                        notification_preference::Column::DailyDigest,
                        notification_preference::Column::AttachPdf,
                        notification_preference::Column::UpdateTimestamp,
                    ])
                    .to_owned(),
            )
            .exec_without_returning(&self.db)
            .await?;
        Ok(())
    }

    /// Sets the events `group` lets reach its staff.
    pub async fn set_group_staff_events(&self, group: &Id, kinds: &KindSet) -> StoreResult<()> {
        let row = group_notification_setting::ActiveModel {
            group_id: Set(*group),
            staff_events: Set(kinds.to_stored()),
            update_timestamp: Set(self.now()),
        };
        group_notification_setting::Entity::insert(row)
            .on_conflict(
                OnConflict::column(group_notification_setting::Column::GroupId)
                    .update_columns([
                        group_notification_setting::Column::StaffEvents,
                        group_notification_setting::Column::UpdateTimestamp,
                    ])
                    .to_owned(),
            )
            .exec_without_returning(&self.db)
            .await?;
        Ok(())
    }

    /// Marks `viewer`'s entry `id` read or unread; another reader's, or one about what it no
    /// longer sees, is not found.
    pub async fn mark_notification(
        &self,
        viewer: &Viewer,
        id: &Id,
        read: bool,
    ) -> StoreResult<notification::Model> {
        let current = self.own_notification(viewer, id).await?;
        let read_at = if read {
            current.read_at.or(Some(self.now()))
        } else {
            None
        };
        notification::Entity::update_many()
            .col_expr(notification::Column::Read, Expr::value(read))
            .col_expr(notification::Column::ReadAt, Expr::value(read_at))
            .filter(notification::Column::Id.eq(*id))
            .exec(&self.db)
            .await?;
        Ok(notification::Model {
            read,
            read_at,
            ..current
        })
    }

    /// Marks `viewer`'s unread entries about measurement `measurement` read: the reader opened
    /// it, so what the inbox announced about it has been seen. Returns how many.
    pub async fn mark_measurement_notifications_read(
        &self,
        viewer: &Viewer,
        measurement: &Id,
    ) -> StoreResult<u64> {
        self.mark_unread_read(
            Condition::all()
                .add(self.readable(viewer))
                .add(notification::Column::MeasurementId.eq(*measurement)),
        )
        .await
    }

    /// Marks every unread entry of `viewer`'s inbox that it may still read read; returns how
    /// many.
    pub async fn mark_all_notifications_read(&self, viewer: &Viewer) -> StoreResult<u64> {
        self.mark_unread_read(self.readable(viewer)).await
    }

    /// Marks the unread entries `which` selects read, now; returns how many.
    async fn mark_unread_read(&self, which: Condition) -> StoreResult<u64> {
        let result = notification::Entity::update_many()
            .col_expr(notification::Column::Read, Expr::value(true))
            .col_expr(notification::Column::ReadAt, Expr::value(self.now()))
            .filter(which)
            .filter(notification::Column::Read.eq(false))
            .exec(&self.db)
            .await?;
        Ok(result.rows_affected)
    }

    /// Takes `ids` out of their reader's digest (they were sent).
    pub async fn digest_sent(&self, ids: &[Id]) -> StoreResult<()> {
        if ids.is_empty() {
            return Ok(());
        }
        notification::Entity::update_many()
            .col_expr(notification::Column::Digest, Expr::value(false))
            .filter(notification::Column::Id.is_in(ids.iter().copied()))
            .exec(&self.db)
            .await?;
        Ok(())
    }
}

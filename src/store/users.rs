//! Users, their enlistments in groups, roles, activation and login-failure counters.

use std::collections::HashMap;

use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, EntityTrait, QueryFilter, QueryOrder, Set,
};
use serde_json::json;

use super::entities::{measurement, patient_enlistment, profile, report, staff_enlistment, user};
use super::query::ListSpec;
use super::{Reader, Scope, StoreError, StoreResult, Tx, Viewer};
use crate::domain::account::StaffRole;
use crate::domain::id::Id;

/// A user with its enlistments, as the user record shows it.
#[derive(Debug, Clone)]
pub struct UserRecord {
    pub user: user::Model,
    pub patient_enlistments: Vec<patient_enlistment::Model>,
    pub staff_enlistments: Vec<staff_enlistment::Model>,
}

/// Everything needed to create an account; values already parsed.
#[derive(Debug, Clone)]
pub struct NewUser {
    pub email: String,
    pub password_hash: String,
    pub first_name: String,
    pub last_name: String,
    pub phone_number: Option<String>,
    pub language: String,
    pub time_zone: String,
    pub roles: Vec<String>,
    /// Whether the user must choose its own password at its first portal login.
    pub password_change_due: bool,
}

/// Changes to an account's own fields; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct UserChanges {
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    /// `Some(None)` clears the number.
    pub phone_number: Option<Option<String>>,
    pub language: Option<String>,
    pub time_zone: Option<String>,
    pub password_hash: Option<String>,
    /// A new (normalised) address; one another account has is [`StoreError::EmailUsed`].
    pub email: Option<String>,
}

impl Reader {
    /// The account with this (normalised) e-mail address, if `scope` sees it.
    pub async fn user_by_email(
        &self,
        scope: &dyn Scope,
        email: &str,
    ) -> StoreResult<Option<user::Model>> {
        Ok(user::Entity::find()
            .filter(user::Column::Email.eq(email))
            .filter(scope.users("users", "id", self.now()))
            .one(&self.db)
            .await?)
    }

    /// The account with this id, if `scope` sees it.
    pub async fn user_by_id(&self, scope: &dyn Scope, id: &Id) -> StoreResult<Option<user::Model>> {
        Ok(user::Entity::find_by_id(*id)
            .filter(scope.users("users", "id", self.now()))
            .one(&self.db)
            .await?)
    }

    /// The account with this id if `viewer` may see it.
    pub async fn visible_user(&self, viewer: &Viewer, id: &Id) -> StoreResult<user::Model> {
        user::Entity::find_by_id(*id)
            .filter(viewer.users("users", "id", self.now()))
            .one(&self.db)
            .await?
            .ok_or(StoreError::NotFound)
    }

    /// The patient who made measurement `id`, if `scope` sees the measurement: whoever sees a
    /// measurement sees whose it is (as its PDF shows), also once the patient's record is out
    /// of its view (an ended prescription).
    pub async fn patient_of_measurement(
        &self,
        scope: &dyn Scope,
        id: &Id,
    ) -> StoreResult<user::Model> {
        use sea_orm::sea_query::Query;
        let creator = Query::select()
            .column((measurement::Entity, measurement::Column::CreatorId))
            .from(measurement::Entity)
            .and_where(Expr::col((measurement::Entity, measurement::Column::Id)).eq(*id))
            .cond_where(scope.measurements("measurements", "id", "creator_id"))
            .to_owned();
        user::Entity::find()
            .filter(user::Column::Id.in_subquery(creator))
            .one(&self.db)
            .await?
            .ok_or(StoreError::NotFound)
    }

    /// The patient a periodic report `id` is about, if `scope` sees the report.
    pub async fn patient_of_report(&self, scope: &dyn Scope, id: &Id) -> StoreResult<user::Model> {
        use sea_orm::sea_query::Query;
        let patient = Query::select()
            .column((report::Entity, report::Column::UserId))
            .from(report::Entity)
            .and_where(Expr::col((report::Entity, report::Column::Id)).eq(*id))
            .cond_where(scope.periodic_reports())
            .to_owned();
        user::Entity::find()
            .filter(user::Column::Id.in_subquery(patient))
            .one(&self.db)
            .await?
            .ok_or(StoreError::NotFound)
    }

    /// Adds enlistments to users, two queries whatever the number of users.
    pub async fn user_records(&self, users: Vec<user::Model>) -> StoreResult<Vec<UserRecord>> {
        let ids: Vec<Id> = users.iter().map(|u| u.id).collect();
        let mut patients: HashMap<Id, Vec<patient_enlistment::Model>> = HashMap::new();
        for e in patient_enlistment::Entity::find()
            .filter(patient_enlistment::Column::UserId.is_in(ids.clone()))
            .order_by_asc(patient_enlistment::Column::CreationTimestamp)
            .all(&self.db)
            .await?
        {
            patients.entry(e.user_id).or_default().push(e);
        }
        let mut staff: HashMap<Id, Vec<staff_enlistment::Model>> = HashMap::new();
        for e in staff_enlistment::Entity::find()
            .filter(staff_enlistment::Column::UserId.is_in(ids))
            .order_by_asc(staff_enlistment::Column::CreationTimestamp)
            .all(&self.db)
            .await?
        {
            staff.entry(e.user_id).or_default().push(e);
        }
        Ok(users
            .into_iter()
            .map(|user| UserRecord {
                patient_enlistments: patients.remove(&user.id).unwrap_or_default(),
                staff_enlistments: staff.remove(&user.id).unwrap_or_default(),
                user,
            })
            .collect())
    }

    /// One user's record.
    pub async fn user_record(&self, user: user::Model) -> StoreResult<UserRecord> {
        if let Some(record) = self.cache.record(&user.id) {
            return Ok(record);
        }
        let generation = self.cache.generation();
        let record = self
            .user_records(vec![user])
            .await?
            .pop()
            .ok_or(StoreError::NotFound)?;
        self.cache.put_record(generation, &record);
        Ok(record)
    }

    /// A page of the users `viewer` may see.
    pub async fn list_users(
        &self,
        viewer: &Viewer,
        spec: &ListSpec,
    ) -> StoreResult<(Vec<UserRecord>, Option<u64>)> {
        let select = user::Entity::find().filter(viewer.users("users", "id", self.now()));
        let (users, total) = self.page(select, spec).await?;
        Ok((self.user_records(users).await?, total))
    }

    /// The staff of the groups `groups` that `viewer` may see (`visibility::groups`), with
    /// their accounts, by group.
    pub async fn group_staff(
        &self,
        viewer: &Viewer,
        groups: &[Id],
    ) -> StoreResult<HashMap<Id, Vec<user::Model>>> {
        use sea_orm::sea_query::Query;
        let visible = Query::select()
            .column(super::entities::group::Column::Id)
            .from(super::entities::group::Entity)
            .cond_where(viewer.groups())
            .to_owned();
        let enlistments = staff_enlistment::Entity::find()
            .filter(staff_enlistment::Column::GroupId.is_in(groups.to_vec()))
            .filter(staff_enlistment::Column::GroupId.in_subquery(visible))
            .all(&self.db)
            .await?;
        let users: HashMap<Id, user::Model> = user::Entity::find()
            .filter(user::Column::Id.is_in(enlistments.iter().map(|e| e.user_id)))
            .all(&self.db)
            .await?
            .into_iter()
            .map(|u| (u.id, u))
            .collect();
        let mut by_group: HashMap<Id, Vec<user::Model>> = Default::default();
        for enlistment in enlistments {
            if let Some(user) = users.get(&enlistment.user_id) {
                by_group
                    .entry(enlistment.group_id)
                    .or_default()
                    .push(user.clone());
            }
        }
        for staff in by_group.values_mut() {
            staff.sort_by(|a, b| (&a.last_name, &a.first_name).cmp(&(&b.last_name, &b.first_name)));
        }
        Ok(by_group)
    }

    /// Whether `user_id` is staff of `group_id`.
    pub async fn is_staff_of(&self, user_id: &Id, group_id: &Id) -> StoreResult<bool> {
        Ok(staff_enlistment::Entity::find()
            .filter(
                Condition::all()
                    .add(staff_enlistment::Column::UserId.eq(user_id))
                    .add(staff_enlistment::Column::GroupId.eq(group_id)),
            )
            .one(&self.db)
            .await?
            .is_some())
    }
}

impl Tx {
    /// Creates a user and its empty profile in one transaction.
    pub async fn create_user(&self, new: NewUser) -> StoreResult<user::Model> {
        let now = self.now();
        let id = Id::generate();
        let txn = self.db.begin().await?;
        let created = user::ActiveModel {
            id: Set(id),
            email: Set(new.email),
            password_hash: Set(new.password_hash),
            first_name: Set(new.first_name),
            last_name: Set(new.last_name),
            phone_number: Set(new.phone_number),
            language: Set(new.language),
            time_zone: Set(new.time_zone),
            activation: Set(true),
            roles: Set(json!(new.roles)),
            profile_image: Set(None),
            failed_count: Set(0),
            last_failed_timestamp: Set(None),
            password_change_due: Set(new.password_change_due),
            legal_hold: Set(false),
            erased_timestamp: Set(None),
            deactivation_timestamp: Set(None),
            creation_timestamp: Set(now),
            update_timestamp: Set(now),
        }
        .insert(&txn)
        .await?;
        profile::ActiveModel {
            id: Set(id),
            data: Set(json!({})),
            country: Set(None),
            city: Set(None),
            physician: Set(None),
            gender: Set(None),
            creation_timestamp: Set(now),
            update_timestamp: Set(now),
        }
        .insert(&txn)
        .await?;
        txn.commit().await?;
        Ok(created)
    }

    /// Applies `changes` to the user `id`.
    pub async fn update_user(&self, id: &Id, changes: UserChanges) -> StoreResult<user::Model> {
        // The action that calls this has found the account through its viewer.
        let mut model: user::ActiveModel = user::Entity::find_by_id(*id)
            .one(&self.db)
            .await?
            .ok_or(StoreError::NotFound)?
            .into();
        if let Some(v) = changes.first_name {
            model.first_name = Set(v);
        }
        if let Some(v) = changes.last_name {
            model.last_name = Set(v);
        }
        if let Some(v) = changes.phone_number {
            model.phone_number = Set(v);
        }
        if let Some(v) = changes.language {
            model.language = Set(v);
        }
        if let Some(v) = changes.time_zone {
            model.time_zone = Set(v);
        }
        if let Some(v) = changes.password_hash {
            // A new password is the user's own (or, after an administrator's reset, nobody's
            // until the user sets one through its link).
            model.password_hash = Set(v);
            model.password_change_due = Set(false);
        }
        if let Some(v) = changes.email {
            model.email = Set(v);
        }
        model.update_timestamp = Set(self.now());
        let updated = model.update(&self.db).await?;
        self.cache.invalidate();
        Ok(updated)
    }

    /// Replaces the user's global roles.
    pub async fn set_roles(&self, id: &Id, roles: Vec<String>) -> StoreResult<user::Model> {
        // The action that calls this has found the account through its viewer.
        let mut model: user::ActiveModel = user::Entity::find_by_id(*id)
            .one(&self.db)
            .await?
            .ok_or(StoreError::NotFound)?
            .into();
        model.roles = Set(json!(roles));
        model.update_timestamp = Set(self.now());
        let updated = model.update(&self.db).await?;
        self.cache.invalidate();
        Ok(updated)
    }

    /// Activates or deactivates a user. Deactivation revokes every token (atomically with the
    /// change when the store is an action's, see [`Store::begin`]); activation also lifts a
    /// lockout after failed logins.
    pub async fn set_activation(&self, id: &Id, activation: bool) -> StoreResult<user::Model> {
        let mut model: user::ActiveModel = user::Entity::find_by_id(*id)
            .one(&self.db)
            .await?
            .ok_or(StoreError::NotFound)?
            .into();
        if model.activation.as_ref() != &activation {
            model.deactivation_timestamp = Set((!activation).then(|| self.now()));
        }
        model.activation = Set(activation);
        if activation {
            model.failed_count = Set(0);
            model.last_failed_timestamp = Set(None);
        }
        model.update_timestamp = Set(self.now());
        let updated = model.update(&self.db).await?;
        if !activation {
            self.revoke_tokens_of(id).await?;
        }
        self.cache.invalidate();
        Ok(updated)
    }

    /// Shows on the account the failures in a row of its worst network (the wire's
    /// `failed_count` and `last_failed_timestamp`, and the administrators' lock column).
    pub async fn show_failed_logins(
        &self,
        id: &Id,
        failures: i32,
        last_failed: Option<i64>,
    ) -> StoreResult<()> {
        user::Entity::update_many()
            .col_expr(user::Column::FailedCount, Expr::value(failures))
            .col_expr(user::Column::LastFailedTimestamp, Expr::value(last_failed))
            .filter(user::Column::Id.eq(id))
            .exec(&self.db)
            .await?;
        self.cache.invalidate();
        Ok(())
    }

    /// Clears the failure counter after a successful login.
    pub async fn reset_failed_logins(&self, id: &Id) -> StoreResult<()> {
        user::Entity::update_many()
            .col_expr(user::Column::FailedCount, Expr::value(0))
            .filter(user::Column::Id.eq(id))
            .filter(user::Column::FailedCount.ne(0))
            .exec(&self.db)
            .await?;
        self.cache.invalidate();
        Ok(())
    }

    /// Enlists a patient in a group until `expiry`. An active enlistment in the same group is
    /// extended (or shortened) instead of duplicated: its end until now is returned.
    pub async fn enlist_patient(
        &self,
        user_id: &Id,
        group_id: &Id,
        expiry: i64,
    ) -> StoreResult<Option<i64>> {
        let now = self.now();
        let active = patient_enlistment::Entity::find()
            .filter(patient_enlistment::Column::UserId.eq(user_id))
            .filter(patient_enlistment::Column::GroupId.eq(group_id))
            .filter(patient_enlistment::Column::ExpiryTimestamp.gt(now))
            .one(&self.db)
            .await?;
        let previous = active.as_ref().map(|e| e.expiry_timestamp);
        match active {
            Some(enlistment) => {
                let mut model: patient_enlistment::ActiveModel = enlistment.into();
                model.expiry_timestamp = Set(expiry);
                model.update(&self.db).await?;
            }
            None => {
                patient_enlistment::ActiveModel {
                    id: Set(Id::generate()),
                    user_id: Set(user_id.to_owned()),
                    group_id: Set(group_id.to_owned()),
                    creation_timestamp: Set(now),
                    expiry_timestamp: Set(expiry),
                    scheduled_until: Set(None),
                }
                .insert(&self.db)
                .await?;
            }
        }
        // The group's staff care for the patient until the new end.
        self.recount_care(user_id).await?;
        self.touch_user(user_id, now).await?;
        Ok(previous)
    }

    /// Ends a patient's active enlistments in a group now. `NotFound` when there is none.
    pub async fn end_patient_enlistment(&self, user_id: &Id, group_id: &Id) -> StoreResult<()> {
        let now = self.now();
        let result = patient_enlistment::Entity::update_many()
            .col_expr(
                patient_enlistment::Column::ExpiryTimestamp,
                Expr::value(now),
            )
            .filter(patient_enlistment::Column::UserId.eq(user_id))
            .filter(patient_enlistment::Column::GroupId.eq(group_id))
            .filter(patient_enlistment::Column::ExpiryTimestamp.gt(now))
            .exec(&self.db)
            .await?;
        if result.rows_affected == 0 {
            return Err(StoreError::NotFound);
        }
        // The group's staff no longer care for the patient through it.
        self.recount_care(user_id).await?;
        self.touch_user(user_id, now).await
    }

    /// Makes a user staff of a group with `roles` (replacing the roles when already staff).
    pub async fn enlist_staff(
        &self,
        user_id: &Id,
        group_id: &Id,
        roles: Vec<StaffRole>,
    ) -> StoreResult<()> {
        let now = self.now();
        let roles: Vec<&str> = roles.iter().map(StaffRole::as_str).collect();
        let existing = staff_enlistment::Entity::find()
            .filter(staff_enlistment::Column::UserId.eq(user_id))
            .filter(staff_enlistment::Column::GroupId.eq(group_id))
            .one(&self.db)
            .await?;
        match existing {
            Some(enlistment) => {
                let mut model: staff_enlistment::ActiveModel = enlistment.into();
                model.roles = Set(json!(roles));
                model.update_timestamp = Set(now);
                model.update(&self.db).await?;
            }
            None => {
                staff_enlistment::ActiveModel {
                    id: Set(Id::generate()),
                    user_id: Set(user_id.to_owned()),
                    group_id: Set(group_id.to_owned()),
                    roles: Set(json!(roles)),
                    creation_timestamp: Set(now),
                    update_timestamp: Set(now),
                }
                .insert(&self.db)
                .await?;
                // What the group shares, the user's inbox now counts as readable.
                self.retally_reader(user_id).await?;
            }
        }
        self.touch_user(user_id, now).await
    }

    /// Removes a user from a group's staff. `NotFound` when it was not staff there.
    pub async fn remove_staff(&self, user_id: &Id, group_id: &Id) -> StoreResult<()> {
        let result = staff_enlistment::Entity::delete_many()
            .filter(staff_enlistment::Column::UserId.eq(user_id))
            .filter(staff_enlistment::Column::GroupId.eq(group_id))
            .exec(&self.db)
            .await?;
        if result.rows_affected == 0 {
            return Err(StoreError::NotFound);
        }
        // What only the group shared, the user's inbox no longer counts.
        self.retally_reader(user_id).await?;
        self.touch_user(user_id, self.now()).await
    }

    /// Marks a user changed after a change to its enlistments.
    async fn touch_user(&self, user_id: &Id, now: i64) -> StoreResult<()> {
        user::Entity::update_many()
            .col_expr(user::Column::UpdateTimestamp, Expr::value(now))
            .filter(user::Column::Id.eq(user_id))
            .exec(&self.db)
            .await?;
        self.cache.invalidate();
        Ok(())
    }
}

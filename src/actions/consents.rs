//! Consent (GDPR art. 7 and 9(2)(a)): a patient's consent to the processing of their health
//! data, given by registering through the API, and to sharing their data with a group, given
//! when a prescription there starts; the history of both; and the withdrawal of sharing, which
//! ends the group's access as ending the prescription does.
//!
//! Every consent given or withdrawn is a row of its own with its audit record, written in the
//! transaction of what it is part of (the registration, the prescription, the withdrawal).

use sea_orm::ActiveEnum;

use super::enlistments::end_prescription;
use super::{ActionResult, Actions, EntryExt, done, entry};
use crate::domain::consent::{GROUP_SHARING_VERSION, HEALTH_DATA_VERSION};
use crate::domain::id::Id;
use crate::store::entities::consent::{self, ConsentDoor, ConsentKind};
use crate::store::{AuditAction, AuditEntry, NewConsent, Tx, Viewer};

impl Actions {
    /// The consents of patient `patient`, oldest first, for `viewer`: the patient, an
    /// administrator, and the staff who see the patient's record (a running prescription in
    /// their group); `NotFound` for anyone else. The read is recorded.
    pub async fn consent_history(
        &self,
        viewer: &Viewer,
        patient: &Id,
    ) -> ActionResult<Vec<consent::Model>> {
        self.store.visible_user(viewer, patient).await?;
        let consents = self.store.consents_of(viewer, patient).await?;
        self.store
            .record_read(
                entry(viewer, AuditAction::UserView, "user", patient)
                    .patient(patient)
                    .detail("consents"),
            )
            .await?;
        Ok(consents)
    }

    /// Withdraws patient `patient`'s consent to sharing their data with group `group`, through
    /// `door`: the patient, or an administrator on their behalf. The group's access ends as
    /// when its prescription ends (the same path: the prescription, the links its staff made,
    /// the report files' tokens), and the withdrawal is recorded, in one transaction.
    /// `NotFound` when no prescription of the patient runs in the group. Answers the recorded
    /// withdrawal.
    pub async fn withdraw_group_sharing(
        &self,
        viewer: &Viewer,
        patient: &Id,
        group: &Id,
        door: ConsentDoor,
    ) -> ActionResult<consent::Model> {
        self.act(async |tx| {
            tx.consent_to_withdraw(viewer, patient).await?;
            // The withdrawal names the text that was consented to; a prescription older than
            // consents' records names the text in force.
            let version = tx
                .consents_of(viewer, patient)
                .await?
                .into_iter()
                .rev()
                .find(|c| {
                    c.kind == ConsentKind::GroupSharing && c.group_id == Some(*group) && c.given
                })
                .map_or_else(|| GROUP_SHARING_VERSION.to_owned(), |c| c.text_version);
            let ended = end_prescription(tx, viewer, patient, group).await?;
            let (withdrawn, record) = record(
                tx,
                viewer,
                NewConsent {
                    user_id: *patient,
                    kind: ConsentKind::GroupSharing,
                    group_id: Some(*group),
                    text_version: version,
                    door,
                    given: false,
                    actor_id: viewer.user_id,
                },
            )
            .await?;
            done(withdrawn, vec![ended, record])
        })
        .await
    }
}

/// Records `patient`'s consent to the processing of their health data at the current text,
/// given through `door`, recorded by `actor`; answers its audit record.
pub(super) async fn give_health_data(
    tx: &Tx,
    actor: &Viewer,
    patient: &Id,
    door: ConsentDoor,
) -> ActionResult<AuditEntry> {
    let new = NewConsent {
        user_id: *patient,
        kind: ConsentKind::HealthData,
        group_id: None,
        text_version: HEALTH_DATA_VERSION.to_owned(),
        door,
        given: true,
        actor_id: actor.user_id,
    };
    Ok(record(tx, actor, new).await?.1)
}

/// Records `patient`'s consent to sharing their data with `group` at the current text, given
/// through `door`, recorded by `actor`; answers its audit record.
pub(super) async fn give_sharing(
    tx: &Tx,
    actor: &Viewer,
    patient: &Id,
    group: &Id,
    door: ConsentDoor,
) -> ActionResult<AuditEntry> {
    let new = NewConsent {
        user_id: *patient,
        kind: ConsentKind::GroupSharing,
        group_id: Some(*group),
        text_version: GROUP_SHARING_VERSION.to_owned(),
        door,
        given: true,
        actor_id: actor.user_id,
    };
    Ok(record(tx, actor, new).await?.1)
}

/// Writes a consent and its audit record (`consent.give` or `consent.withdraw`), whose detail
/// says what it is to, at which text and through which door.
async fn record(
    tx: &Tx,
    actor: &Viewer,
    new: NewConsent,
) -> ActionResult<(consent::Model, AuditEntry)> {
    let row = tx.record_consent(new).await?;
    let action = if row.given {
        AuditAction::ConsentGive
    } else {
        AuditAction::ConsentWithdraw
    };
    let group = row
        .group_id
        .map(|g| format!(" group {g}"))
        .unwrap_or_default();
    let detail = format!(
        "{}{group}, text {}, through {}",
        row.kind.to_value(),
        row.text_version,
        row.door.to_value()
    );
    let audit = entry(actor, action, "consent", &row.id)
        .patient(&row.user_id)
        .detail(detail);
    Ok((row, audit))
}

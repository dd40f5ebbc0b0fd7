//! Measurements: reading one (which leaves a trace), and changing one (a patient's context,
//! tags and review request; a physician's review).

use super::{ActionError, ActionResult, Actions, EntryExt, Records, done, entry};
use crate::domain::id::Id;
pub use crate::domain::measurement::Review;
use crate::domain::measurement::{DataError, MeasurementUpdate, NewMeasurement};
use crate::domain::notification::EventKind;
use crate::store::entities::measurement;
use crate::store::{AuditAction, MeasurementChange, MeasurementRecord, NewEvent, Tx, Viewer};

impl From<DataError> for ActionError {
    fn from(err: DataError) -> Self {
        match err {
            DataError::StaffOnly(_) => ActionError::Forbidden(err.to_string()),
            DataError::Missing(_) | DataError::Invalid { .. } => {
                ActionError::invalid(err.to_string(), "error-review-invalid")
            }
        }
    }
}

impl Actions {
    /// Stores a patient's new measurement, parsed and analysed ([`NewMeasurement::parse`]),
    /// in the groups the patient is enlisted in now.
    pub async fn upload_measurement(
        &self,
        viewer: &Viewer,
        new: NewMeasurement,
    ) -> ActionResult<MeasurementRecord> {
        let run = new.run;
        crate::telemetry::metrics::analysis(run.source, run.readable, run.took);
        self.act(async |tx| {
            let record = tx.create_measurement(&viewer.user_id, new).await?;
            let m = &record.measurement;
            let audit = entry(viewer, AuditAction::MeasurementUpload, "measurement", &m.id)
                .patient(&m.creator_id)
                .detail(m.status.as_str());
            done(record, audit)
        })
        .await
    }

    /// One measurement, as its reader sees it; the read is recorded.
    pub async fn view_measurement(
        &self,
        viewer: &Viewer,
        id: &Id,
    ) -> ActionResult<MeasurementRecord> {
        let record = self.store.visible_measurement(viewer, id).await?;
        let m = &record.measurement;
        self.store
            .record_read(
                entry(viewer, AuditAction::MeasurementView, "measurement", &m.id)
                    .patient(&m.creator_id),
            )
            .await?;
        Ok(record)
    }

    /// Changes a measurement with `update`: its patient and the staff may change context and
    /// tags and ask for a review; the staff of the patient's groups and administrators may
    /// also review it ([`MeasurementUpdate::review`]). Bumps `updateTimestamp`.
    pub async fn update_measurement(
        &self,
        viewer: &Viewer,
        id: &Id,
        update: MeasurementUpdate,
    ) -> ActionResult<measurement::Model> {
        self.act(async |tx| update_measurement_in(tx, viewer, id, update).await)
            .await
    }
}

/// [`Actions::update_measurement`] inside the transaction `store`: the change and its audit
/// record (the operator's demo clinic reviews through it too).
pub(super) async fn update_measurement_in(
    store: &Tx,
    viewer: &Viewer,
    id: &Id,
    update: MeasurementUpdate,
) -> ActionResult<(measurement::Model, Records)> {
    let current = store.visible_measurement(viewer, id).await?.measurement;
    update.check_author(viewer.may_review(&current.creator_id).is_ok())?;
    let status = current.status;
    let next = update
        .next_status(status)
        .map_err(|message| ActionError::State {
            message,
            key: "error-no-results",
        })?;
    let mut data = current.data_object();
    update.apply_to(&mut data, &viewer.user_id, store.clock().now_millis());
    let (action, detail) = match &update.review {
        Some(review) => (
            AuditAction::MeasurementReview,
            format!("review: {}", review.fields().join(", ")),
        ),
        None => (
            AuditAction::MeasurementUpdate,
            update.changed_fields().join(", "),
        ),
    };
    let updated = store
        .update_measurement(
            &current,
            MeasurementChange {
                data,
                status: next,
                tags: update.tags,
            },
        )
        .await?;
    if update.review.is_some() {
        store
            .record_event(NewEvent {
                kind: EventKind::MeasurementReviewed,
                patient_id: current.creator_id,
                actor_id: Some(viewer.user_id),
                measurement_id: Some(*id),
                report_id: None,
                detail: String::new(),
            })
            .await?;
        store
            .settle_staff_notifications(id, &current.creator_id)
            .await?;
    }
    let record = entry(viewer, action, "measurement", id)
        .patient(&current.creator_id)
        .detail(detail);
    done(updated, record)
}

//! A physician's review on the measurement page: the conclusion, picked from the rhythm labels
//! in order of severity (or written out), the clinical note for the care team and the note for
//! the patient. The patient's own page shows only the conclusion and the note for the patient,
//! as the measurement PDF does.

use actix_web::HttpResponse;
use actix_web::web::Path;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::chrome::see_other;
use super::context::{CsrfForm, Member};
use super::error::WebError;
use super::measurements::detail_page;
use crate::actions::ActionError;
use crate::analysis::Label;
use crate::domain::id::Id;
use crate::domain::measurement::{MeasurementUpdate, Review, Summary};
use crate::domain::payload::Payload;
use crate::reports::common::translated_or_raw;

/// The form's value for a conclusion written out instead of picked.
const OTHER: &str = "other";

/// A physician's review as shown.
pub struct ReviewView {
    /// The conclusion in the reader's words.
    pub label: String,
    /// The clinical note; `None` on the patient's own page, which never shows it.
    pub note: Option<String>,
    pub patient_note: String,
    pub reviewer: String,
    pub when: String,
}

/// One conclusion the review form offers.
pub struct Conclusion {
    pub value: &'static str,
    pub text: String,
    pub selected: bool,
}

/// What the review form starts with: the saved review, or the analysis' own result.
pub struct ReviewForm {
    pub conclusions: Vec<Conclusion>,
    /// Whether the saved conclusion is free text.
    pub other: bool,
    pub other_text: String,
    pub note: String,
    pub patient_note: String,
    /// Why the form was refused, shown beside the conclusion it is about.
    pub error: Option<String>,
}

fn text_of<'a>(review: &'a Map<String, Value>, key: &str) -> &'a str {
    review.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The stored review (`data.review`) as `member` may read it; `own` is the patient's own view.
pub async fn review_view(
    member: &Member,
    data: &Payload<'_>,
    own: bool,
) -> Result<Option<ReviewView>, WebError> {
    let Some(Value::Object(review)) = data.value("review") else {
        return Ok(None);
    };
    let reviewer = match review
        .get("reviewer_id")
        .and_then(Value::as_str)
        .and_then(|id| Id::parse(id).ok())
    {
        Some(id) => member
            .state
            .store
            .user_names(&member.viewer(), &[id])
            .await?
            .remove(&id)
            .unwrap_or_default(),
        None => String::new(),
    };
    Ok(Some(ReviewView {
        label: translated_or_raw(&member.tr, "label", text_of(&review, "label")),
        note: (!own).then(|| text_of(&review, "diagnosis").to_owned()),
        patient_note: text_of(&review, "patient_note").to_owned(),
        reviewer,
        when: review
            .get("review_timestamp")
            .and_then(Value::as_i64)
            .map(|t| member.datetime(t))
            .unwrap_or_default(),
    }))
}

/// The conclusions the form offers, in the reader's words, with `selected` picked.
fn conclusions(member: &Member, selected: Option<Label>) -> Vec<Conclusion> {
    Label::ALL
        .into_iter()
        .map(|label| Conclusion {
            value: label.as_str(),
            text: translated_or_raw(&member.tr, "label", label.as_str()),
            selected: selected == Some(label),
        })
        .collect()
}

/// The review form for a measurement's `data`: the saved review, so that a correction is an
/// edit, or else the analysis' most severe rhythm label as the proposed conclusion.
pub fn review_form(member: &Member, data: &Map<String, Value>) -> ReviewForm {
    let saved = data.get("review").and_then(Value::as_object);
    let saved_label = saved.map(|r| text_of(r, "label")).unwrap_or("");
    let proposed = match saved {
        Some(_) => Label::from_wire(saved_label),
        // The analysis' labels come least severe first: the most severe known one is the last.
        None => Summary::of(data)
            .labels
            .iter()
            .rev()
            .find_map(|label| Label::from_wire(label)),
    };
    let other = saved.is_some() && proposed.is_none() && !saved_label.is_empty();
    ReviewForm {
        conclusions: conclusions(member, proposed),
        other,
        other_text: if other {
            saved_label.to_owned()
        } else {
            String::new()
        },
        note: saved
            .map(|r| text_of(r, "diagnosis").to_owned())
            .unwrap_or_default(),
        patient_note: saved
            .map(|r| text_of(r, "patient_note").to_owned())
            .unwrap_or_default(),
        error: None,
    }
}

/// A review as the form sends it.
#[derive(Debug, Deserialize)]
pub struct ReviewInput {
    /// A rhythm label's wire name, `other`, or (from an older form) the conclusion itself.
    pub label: String,
    #[serde(default)]
    pub label_other: String,
    #[serde(default)]
    pub note: String,
    #[serde(default)]
    pub patient_note: String,
}

impl ReviewInput {
    /// The conclusion to store: the picked label's wire name, or the text written out; else
    /// the message key of why not.
    fn conclusion(&self) -> Result<&str, &'static str> {
        let label = self.label.trim();
        if label == OTHER {
            match self.label_other.trim() {
                "" => Err("review-other-empty"),
                text => Ok(text),
            }
        } else {
            Ok(label)
        }
    }

    /// The form as its author filled it in, with `error`: a refused review keeps every word.
    fn refused(&self, member: &Member, error: String) -> ReviewForm {
        let picked = Label::from_wire(self.label.trim());
        ReviewForm {
            conclusions: conclusions(member, picked),
            other: picked.is_none(),
            other_text: self.label_other.clone(),
            note: self.note.clone(),
            patient_note: self.patient_note.clone(),
            error: Some(error),
        }
    }
}

/// Records a review (staff of the patient's group, or an administrator). The measurement's
/// update time moves, so its existing report is out of date from now on.
pub async fn review(
    member: Member,
    id: Path<String>,
    CsrfForm(form): CsrfForm<ReviewInput>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    let conclusion = match form.conclusion() {
        Ok(conclusion) => conclusion,
        Err(key) => {
            let refused = form.refused(&member, member.tr.text(key));
            return detail_page(&member, &id, None, Some(refused)).await;
        }
    };
    let review = Review::parse(Some(conclusion), Some(&form.note), Some(&form.patient_note));
    let saved = match review.map_err(ActionError::from) {
        Ok(review) => {
            member
                .state
                .actions
                .update_measurement(&member.viewer(), &id, MeasurementUpdate::review(review))
                .await
        }
        Err(refused) => Err(refused),
    };
    match saved {
        Ok(_) => Ok(see_other(&format!("/portal/measurements/{id}#review"))),
        // A rule of the review itself: the page again, with the form as it was sent.
        Err(ActionError::Invalid { key, .. }) => {
            let refused = form.refused(&member, member.tr.text(key));
            detail_page(&member, &id, None, Some(refused)).await
        }
        Err(other) => Err(other.into()),
    }
}

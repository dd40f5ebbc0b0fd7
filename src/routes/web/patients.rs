//! A physician's patients: those of their groups with their latest measurement (filtered and
//! sorted by its result when asked), and one
//! patient's profile and measurements. What a physician may see is decided by the store's
//! visibility rules: another group's patient is simply not found.

use actix_web::HttpResponse;
use actix_web::web::{Path, Query};
use askama::Template;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::chrome::{Chrome, html};
use super::context::{Member, Visitor};
use super::error::WebError;
use super::measurements::{Choice, Filters, MeasurementList, measurement_list, result_choices};
use super::view::{self, MeasurementRow, PAGE_SIZE, Pager};
use crate::domain::id::Id;
use crate::domain::periods::ChosenPeriod;
use crate::domain::person_name::full_name;
use crate::store::PatientListing;

/// A patient in the list.
pub struct PatientRow {
    pub id: Id,
    pub name: String,
    pub email: String,
    pub last: Option<MeasurementRow>,
}

#[derive(Template)]
#[template(path = "web/patients.html")]
struct PatientsPage {
    c: Chrome,
    rows: Vec<PatientRow>,
    pager: Pager,
    results: Vec<Choice>,
    by_result: bool,
    /// Whether a result filter left out some patients.
    filtered: bool,
}

/// Paging of a simple list.
#[derive(Debug, Default, Deserialize)]
pub struct PageQuery {
    pub page: Option<u64>,
}

/// The patient list's query: a page, the latest result to show only, and the order (`result`
/// for the most severe latest result first, anything else by name).
#[derive(Debug, Default, Deserialize)]
pub struct PatientsQuery {
    pub page: Option<u64>,
    pub result: Option<String>,
    pub sort: Option<String>,
}

/// The patients of the member's groups (all patients for administrators), filtered and
/// sorted by their latest result when asked; values that mean nothing are ignored.
pub async fn list(member: Member, query: Query<PatientsQuery>) -> Result<HttpResponse, WebError> {
    let page = query.page.unwrap_or(0).min(10_000);
    let result = view::result_filter(query.result.as_deref());
    let by_result = query.sort.as_deref() == Some("result");
    let listing = PatientListing { result, by_result };
    let (patients, total) = member
        .state
        .actions
        .list_patients(&member.viewer(), listing, page * PAGE_SIZE, PAGE_SIZE)
        .await?;
    let mut base = Vec::new();
    if let Some(result) = result {
        base.push(format!("result={}", result.as_str()));
    }
    if by_result {
        base.push("sort=result".to_owned());
    }
    let mut rows: Vec<PatientRow> = patients
        .into_iter()
        .map(|p| PatientRow {
            name: full_name(&p.user.first_name, &p.user.last_name),
            email: p.user.email.clone(),
            id: p.user.id,
            last: p
                .last_measurement
                .as_ref()
                .map(|m| view::measurement_row(&member, m, Some(&p.user.time_zone))),
        })
        .collect();
    view::name_reviewers(
        &member,
        &member.viewer(),
        rows.iter_mut()
            .filter_map(|row| row.last.as_mut())
            .filter_map(|last| last.conclusion.as_mut()),
    )
    .await?;
    html(&PatientsPage {
        results: result_choices(&member, result.map(|r| r.as_str())),
        c: Chrome::new(&member, "patients", "patients-title"),
        pager: Pager::counted_up_to(page, total, &base.join("&")).ended_at(rows.len()),
        rows,
        by_result,
        filtered: result.is_some(),
    })
}

/// The profile as a read-only list of labelled values.
pub fn profile_summary(visitor: &Visitor, document: &Map<String, Value>) -> Vec<(String, String)> {
    let tr = &visitor.tr;
    let text = |key: &str| document.get(key).and_then(Value::as_str).map(str::to_owned);
    let number = |key: &str| document.get(key).and_then(Value::as_f64);
    let list = |key: &str, prefix: &str| -> Option<String> {
        let items: Vec<String> = document
            .get(key)?
            .as_array()?
            .iter()
            .filter_map(Value::as_str)
            .map(|v| {
                tr.try_text(&format!("{prefix}-{v}"))
                    .unwrap_or_else(|| v.to_owned())
            })
            .collect();
        (!items.is_empty()).then(|| items.join(", "))
    };
    let mut rows = Vec::new();
    let mut push = |label: &str, value: Option<String>| {
        rows.push((tr.text(label), value.unwrap_or_else(|| "–".into())));
    };
    // Dates and numbers as the reports write them, in the reader's language (`14-03-1958`,
    // `67,5 kg` in Dutch), not as stored.
    let language = tr.language();
    push(
        "birthday",
        text("birthday").map(|day| {
            chrono::NaiveDate::parse_from_str(&day, "%Y-%m-%d")
                .map(|date| crate::reports::format::short_date(language, date))
                .unwrap_or(day)
        }),
    );
    push(
        "gender",
        document
            .get("gender")
            .and_then(Value::as_i64)
            .map(|g| tr.text(&format!("gender-{g}"))),
    );
    push(
        "weight",
        number("weight").map(|w| {
            let w = crate::reports::format::decimal(language, w, 1);
            format!("{w} {}", tr.text("kg"))
        }),
    );
    push(
        "length",
        number("length").map(|l| {
            let l = crate::reports::format::decimal(language, l, 1);
            format!("{l} {}", tr.text("cm"))
        }),
    );
    push(
        "profile-country",
        text("country").map(|code| {
            crate::i18n::locale::country_name(language, &code).map_or(code, str::to_owned)
        }),
    );
    push("profile-city", text("city"));
    push("physician", text("physician"));
    push("comorbidities", list("comorbidities", "comorbidity"));
    push(
        "smoker",
        document
            .get("smoker")
            .and_then(Value::as_bool)
            .map(|s| tr.text(if s { "yes" } else { "no" })),
    );
    push(
        "activity-level",
        text("activity").map(|a| tr.text(&format!("activity-{a}"))),
    );
    push("profile-impediments", list("impediments", "impediment"));
    let device = document
        .get("service_info")
        .and_then(|s| s.get("device"))
        .and_then(Value::as_object);
    push(
        "profile-device",
        device.map(|d| {
            ["manufacturer", "model", "type", "os"]
                .iter()
                .filter_map(|k| d.get(*k).and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(" ")
        }),
    );
    rows
}

#[derive(Template)]
#[template(path = "web/patient.html")]
struct PatientPage {
    c: Chrome,
    id: Id,
    name: String,
    email: String,
    profile: Vec<(String, String)>,
    list: MeasurementList,
    rows: Vec<super::reports::ReportRow>,
    can_make_report: bool,
    /// The groups a report may be made for, where there are several.
    groups: Vec<super::measurements::Choice>,
    /// The periods a report may cover besides a from–to of the reader's choosing.
    periods: Vec<super::measurements::Choice>,
    /// The report form's days, as typed when it was refused, and why.
    report: ReportDraft,
}

/// The report form of a patient's page as it was sent, when it was refused.
#[derive(Debug, Clone, Default)]
pub struct ReportDraft {
    pub from: String,
    pub to: String,
    /// The message beside the days.
    pub error: Option<String>,
}

#[derive(Template)]
#[template(path = "web/measurement_list.html")]
struct ListFragment {
    c: Chrome,
    list: MeasurementList,
}

/// One patient: profile and measurements (htmx asks for the list fragment only).
pub async fn detail(
    member: Member,
    id: Path<String>,
    filters: Query<Filters>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    patient_page(&member, &id, &filters, ReportDraft::default()).await
}

/// A patient's page, its report form as `report` holds it (400 when it was refused).
pub async fn patient_page(
    member: &Member,
    id: &Id,
    filters: &Filters,
    report: ReportDraft,
) -> Result<HttpResponse, WebError> {
    let id = *id;
    let viewer = member.viewer();
    // Every view of the patient is recorded, the list fragments htmx asks for included.
    let patient = member.state.actions.view_user(&viewer, &id).await?;
    let list = measurement_list(
        member,
        &viewer,
        &id,
        filters,
        format!("/portal/patients/{id}"),
        (id != *member.id()).then_some(patient.time_zone.as_str()),
    )
    .await?;
    let name = full_name(&patient.first_name, &patient.last_name);
    let c = Chrome::new(member, "patients", "patient-title").about(name.clone());
    if member.htmx {
        return html(&ListFragment { c, list });
    }
    let document = member
        .state
        .actions
        .view_profile(&viewer, &id)
        .await?
        .and_then(|p| p.data.as_object().cloned())
        .unwrap_or_default();
    let (rows, _) = super::reports::report_list(member, &viewer, &id, 0, "").await?;
    let groups = super::reports::group_choices(member, &viewer, &id, None).await?;
    let refused = report.error.is_some();
    let mut response = html(&PatientPage {
        report,
        rows,
        groups,
        periods: super::trends::period_choices(&member.tr, &ChosenPeriod::ALL, ChosenPeriod::Week),
        can_make_report: viewer.may_report_on(&id).is_ok(),
        profile: profile_summary(member, &document),
        c,
        name,
        email: patient.email,
        id,
        list,
    })?;
    if refused {
        *response.status_mut() = actix_web::http::StatusCode::BAD_REQUEST;
    }
    Ok(response)
}

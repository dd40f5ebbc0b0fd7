//! Measurements: the list (newest first, paged, filtered by result and date), the detail with
//! the analysis' findings and charts, the report PDF (created or reused exactly as the SDK's
//! `getMeasurementReportUrl` would) and a physician's review.

use actix_web::HttpResponse;
use actix_web::web::{Path, Query};
use askama::Template;
use chrono::NaiveDate;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::chrome::{Chrome, html, see_other};
use super::context::{CsrfForm, Member, Visitor};
use super::error::WebError;
use super::links::{self, LinkForm, LinkRow};
use super::review::{ReviewForm, ReviewView, review_form, review_view};
use super::view::{self, FindingsView, MeasurementRow, PAGE_SIZE, Pager, RESULTS};
use crate::actions::{DEFAULT_LINK_DAYS, MAX_LINK_DAYS};
use crate::domain::account::Language;
use crate::domain::id::Id;
use crate::domain::person_name::full_name;
use crate::domain::rql::{CompareOp, Expr, Query as ListQuery, Value as RqlValue};
use crate::domain::time::{parse_day, start_of_day};
use crate::reports::findings::Findings;
use crate::store::Viewer;
use crate::store::resources::MEASUREMENTS;

/// The filters of a measurement list.
#[derive(Debug, Default, Deserialize)]
pub struct Filters {
    pub result: Option<String>,
    /// First day shown, `YYYY-MM-DD` in the viewer's zone.
    pub from: Option<String>,
    /// Last day shown, `YYYY-MM-DD` in the viewer's zone.
    pub to: Option<String>,
    pub page: Option<u64>,
}

/// A filter choice.
pub struct Choice {
    pub value: String,
    pub label: String,
    pub selected: bool,
}

/// One page of a patient's measurements, ready for the list fragment.
pub struct MeasurementList {
    pub rows: Vec<MeasurementRow>,
    pub pager: Pager,
    pub results: Vec<Choice>,
    pub from: String,
    pub to: String,
    /// Where the filter form sends its query.
    pub action: String,
}

fn local_midnight(visitor: &Visitor, date: &str, days_later: i64) -> Option<i64> {
    let day = parse_day(date)?.checked_add_signed(chrono::Duration::days(days_later))?;
    start_of_day(day, visitor.zone)
}

/// A page of `patient_id`'s measurements as `viewer` may see them, filtered.
pub async fn measurement_list(
    visitor: &Visitor,
    viewer: &Viewer,
    patient_id: &Id,
    filters: &Filters,
    action: String,
    patient_zone: Option<&str>,
) -> Result<MeasurementList, WebError> {
    let mut query = ListQuery::default().and(Expr::eq("creatorId", &patient_id.to_string()));
    let result = view::result_filter(filters.result.as_deref()).map(|r| r.as_str());
    if let Some(result) = result {
        query = query.and(Expr::eq("data.mostSevereLabel.key", result));
    }
    let from = filters.from.as_deref().unwrap_or("").trim();
    let to = filters.to.as_deref().unwrap_or("").trim();
    let taken = "data.measurement_timestamp";
    if let Some(start) = local_midnight(visitor, from, 0) {
        query = query.and(Expr::compare(CompareOp::Ge, taken, RqlValue::Epoch(start)));
    }
    if let Some(end) = local_midnight(visitor, to, 1) {
        query = query.and(Expr::compare(CompareOp::Lt, taken, RqlValue::Epoch(end)));
    }
    let page = filters.page.unwrap_or(0).min(10_000);
    let query = query.sort_by(taken, true).page(PAGE_SIZE, page * PAGE_SIZE);
    let spec = view::list_spec(&MEASUREMENTS, &query)?;
    let (headers, total) = visitor
        .state
        .actions
        .list_measurement_headers(viewer, &spec)
        .await?;
    let mut base = Vec::new();
    if let Some(result) = result {
        base.push(format!("result={result}"));
    }
    if NaiveDate::parse_from_str(from, "%Y-%m-%d").is_ok() {
        base.push(format!("from={from}"));
    }
    if NaiveDate::parse_from_str(to, "%Y-%m-%d").is_ok() {
        base.push(format!("to={to}"));
    }
    let results = result_choices(visitor, result);
    let mut rows: Vec<MeasurementRow> = headers
        .iter()
        .map(|m| view::measurement_row(visitor, m, patient_zone))
        .collect();
    view::name_reviewers(
        visitor,
        viewer,
        rows.iter_mut().filter_map(|row| row.conclusion.as_mut()),
    )
    .await?;
    Ok(MeasurementList {
        rows,
        pager: Pager::new(page, total.unwrap_or(0), &base.join("&")),
        results,
        from: if base.iter().any(|b| b.starts_with("from=")) {
            from.to_owned()
        } else {
            String::new()
        },
        to: if base.iter().any(|b| b.starts_with("to=")) {
            to.to_owned()
        } else {
            String::new()
        },
        action,
    })
}

/// The result filter's choices, most severe first.
pub fn result_choices(visitor: &Visitor, selected: Option<&str>) -> Vec<Choice> {
    RESULTS
        .iter()
        .map(|r| Choice {
            value: r.as_str().to_owned(),
            label: visitor.tr.text(&format!("result-{}", r.as_str())),
            selected: Some(r.as_str()) == selected,
        })
        .collect()
}

#[derive(Template)]
#[template(path = "web/measurements.html")]
struct ListPage {
    c: Chrome,
    list: MeasurementList,
}

#[derive(Template)]
#[template(path = "web/measurement_list.html")]
struct ListFragment {
    c: Chrome,
    list: MeasurementList,
}

/// The member's own measurements; htmx asks for the list fragment only.
pub async fn list(member: Member, filters: Query<Filters>) -> Result<HttpResponse, WebError> {
    let list = measurement_list(
        &member,
        &member.viewer(),
        member.id(),
        &filters,
        "/portal/measurements".into(),
        None,
    )
    .await?;
    let c = Chrome::new(&member, "measurements", "measurements-title");
    if member.htmx {
        html(&ListFragment { c, list })
    } else {
        html(&ListPage { c, list })
    }
}

/// The state of a measurement's latest report.
pub struct ReportState {
    /// `none`, `current` or `outdated`.
    pub key: &'static str,
    pub label: String,
    pub created: String,
}

#[derive(Template)]
#[template(path = "web/measurement.html")]
struct DetailPage {
    c: Chrome,
    row: MeasurementRow,
    patient: Option<(Id, String)>,
    findings: FindingsView,
    details: Vec<(String, String)>,
    review: Option<ReviewView>,
    review_form: ReviewForm,
    /// The reader's and the patient's clock, each with its zone, when they differ.
    zones: Option<(String, String)>,
    /// The same patient's measurements before and after this one, as this reader may see.
    previous: Option<Id>,
    next: Option<Id>,
    report: ReportState,
    can_report: bool,
    can_review: bool,
    links: Vec<LinkRow>,
    /// Where the links' forms post: the measurement's path.
    links_base: String,
    /// The address of a link just made: shown this once, never stored.
    new_link: Option<String>,
    default_link_days: i64,
    max_link_days: i64,
}

/// The members of a payload that [`details_of`] and [`review_form`] read (the latter through
/// [`Summary::of`](crate::domain::measurement::Summary::of)).
const DETAIL_MEMBERS: [&str; 6] = [
    "context",
    "technical_details",
    "tags",
    "review",
    "mostSevereLabel",
    "analysis",
];

fn details_of(visitor: &Visitor, data: &Map<String, Value>) -> Vec<(String, String)> {
    let tr = &visitor.tr;
    let mut details = Vec::new();
    let context = data.get("context").and_then(Value::as_object);
    let symptoms: Vec<String> = context
        .and_then(|c| c.get("symptoms"))
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(|s| {
                    tr.try_text(&format!("symptom-{s}"))
                        .unwrap_or_else(|| s.to_owned())
                })
                .collect()
        })
        .unwrap_or_default();
    details.push((
        tr.text("symptoms"),
        if symptoms.is_empty() {
            tr.text("no-symptoms")
        } else {
            symptoms.join(", ")
        },
    ));
    if let Some(activity) = context
        .and_then(|c| c.get("activity"))
        .and_then(Value::as_str)
    {
        details.push((
            tr.text("context-activity"),
            tr.try_text(&format!("context-{activity}"))
                .unwrap_or_else(|| activity.to_owned()),
        ));
    }
    if let Some(ms) = data
        .get("technical_details")
        .and_then(|t| t.get("duration_ms"))
        .and_then(Value::as_f64)
    {
        details.push((
            tr.text("duration"),
            tr.text_with(
                "duration-seconds",
                &[(
                    "seconds",
                    crate::reports::format::decimal(tr.language(), ms / 1000.0, 0),
                )],
            ),
        ));
    }
    // The tags the app knows are shown in the reader's words (`tag-afternoon`); any other
    // tag, the app's own, as it was sent.
    let tags: Vec<String> = data
        .get("tags")
        .and_then(Value::as_array)
        .map(|t| {
            t.iter()
                .filter_map(Value::as_str)
                .map(|tag| {
                    tr.try_text(&format!("tag-{}", tag.to_ascii_lowercase()))
                        .unwrap_or_else(|| tag.to_owned())
                })
                .collect()
        })
        .unwrap_or_default();
    if !tags.is_empty() {
        details.push((tr.text("tags"), tags.join(", ")));
    }
    details
}

/// One measurement with its chart, results, review and report state.
pub async fn detail(member: Member, id: Path<String>) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    detail_page(&member, &id, None, None).await
}

/// The measurement page, with the address of a link just made, if any, and a refused review
/// form as its author filled it in (then answered 400), if any.
pub async fn detail_page(
    member: &Member,
    id: &Id,
    new_link: Option<String>,
    refused: Option<ReviewForm>,
) -> Result<HttpResponse, WebError> {
    let id = *id;
    let viewer = member.viewer();
    let store = &member.state.store;
    let record = member.state.actions.view_measurement(&viewer, &id).await?;
    // What the inbox said about it has now been seen.
    member
        .state
        .actions
        .read_notifications_about(&viewer, &id)
        .await?;
    let m = &record.measurement;
    let own = m.creator_id == *member.id();
    let patient_user = if own {
        member.user().clone()
    } else {
        store.patient_of_measurement(&viewer, &m.id).await?
    };
    let patient = (!own).then(|| {
        let u = &patient_user;
        (u.id, full_name(&u.first_name, &u.last_name))
    });
    let data = m.payload();
    let review = review_view(member, &data, own).await?;
    let latest = store.latest_measurement_report(&viewer, &m.id).await?;
    let language = Language::or_english(Some(&member.user().language));
    let reusable = latest.as_ref().and_then(|latest| {
        latest.reusable(m.update_timestamp, language.code(), &patient_user.time_zone)
    });
    let report = match (&latest, reusable) {
        (None, _) => ReportState {
            key: "none",
            label: member.tr.text("report-none"),
            created: String::new(),
        },
        (Some(found), Some(_)) => ReportState {
            key: "current",
            label: member.tr.text("report-current"),
            created: member.datetime(found.report.creation_timestamp),
        },
        (Some(found), None) => ReportState {
            key: "outdated",
            label: member.tr.text("report-outdated"),
            created: member.datetime(found.report.creation_timestamp),
        },
    };
    let links = link_rows(member, &id).await?;
    let (previous, next) = store.neighbouring_measurements(&viewer, m).await?;
    let can_report = view::reportable(m);
    // The analysis is pure and takes about a millisecond, so the pulse strip is computed
    // again for the page rather than stored.
    let findings = Findings::of(&member.tr, &data);
    let members = data.subset(&DETAIL_MEMBERS);
    // The page names both clocks itself (`zones`), so its heading's row needs no second one.
    let mut row = view::measurement_row(member, &m.into(), None);
    view::name_reviewers(member, &viewer, row.conclusion.as_mut()).await?;
    let taken = m.measurement_timestamp.unwrap_or(m.creation_timestamp);
    let zones = (!own)
        .then(|| member.patient_time(taken, &patient_user.time_zone))
        .flatten()
        .map(|(time, zone)| {
            (
                format!("{} ({})", member.datetime(taken), member.zone.name()),
                format!("{time} ({})", zone.name()),
            )
        });
    let subject = match &patient {
        Some((_, name)) => format!("{} · {name}", row.when),
        None => row.when.clone(),
    };
    let status = match refused {
        Some(_) => actix_web::http::StatusCode::BAD_REQUEST,
        None => actix_web::http::StatusCode::OK,
    };
    let mut page = html(&DetailPage {
        c: Chrome::new(
            member,
            if own { "measurements" } else { "patients" },
            "measurement-title",
        )
        .about(subject),
        row,
        patient,
        findings: view::findings_view(member, &findings),
        details: details_of(member, &members),
        review,
        review_form: refused.unwrap_or_else(|| review_form(member, &members)),
        zones,
        previous,
        next,
        report,
        can_report,
        can_review: viewer.may_review(&m.creator_id).is_ok() && view::has_results(m),
        links,
        links_base: format!("/portal/measurements/{id}"),
        new_link,
        default_link_days: DEFAULT_LINK_DAYS,
        max_link_days: MAX_LINK_DAYS,
    })?;
    *page.status_mut() = status;
    Ok(page)
}

/// The shared links of a measurement, as its page lists them.
async fn link_rows(member: &Member, id: &Id) -> Result<Vec<LinkRow>, WebError> {
    let links = member
        .state
        .actions
        .shared_links(&member.viewer(), id)
        .await?;
    links::link_rows(member, links).await
}

/// Makes a shared link of the measurement's report and shows the page with its address,
/// this once.
pub async fn create_link(
    member: Member,
    id: Path<String>,
    CsrfForm(form): CsrfForm<LinkForm>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    let language = Language::or_english(Some(&member.user().language));
    let made = member
        .state
        .actions
        .create_shared_link(&member.viewer(), &id, language, form.days())
        .await?;
    detail_page(
        &member,
        &id,
        Some(links::address(&member, &made.secret)),
        None,
    )
    .await
}

/// Revokes the apps' tokens of the measurement's reports; they answer 404 from now on.
pub async fn revoke_app_tokens(
    member: Member,
    id: Path<String>,
    CsrfForm(_): CsrfForm<Vec<(String, String)>>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    member
        .state
        .actions
        .revoke_file_tokens(&member.viewer(), &id)
        .await?;
    Ok(see_other(&format!("/portal/measurements/{id}#links")))
}

/// Revokes a shared link; its address answers 404 from now on.
pub async fn revoke_link(
    member: Member,
    path: Path<(String, String)>,
    CsrfForm(_): CsrfForm<Vec<(String, String)>>,
) -> Result<HttpResponse, WebError> {
    let (id, link) = path.into_inner();
    let (id, link) = (Id::parse(&id)?, Id::parse(&link)?);
    member
        .state
        .actions
        .revoke_shared_link(&member.viewer(), &id, &link)
        .await?;
    Ok(see_other(&format!("/portal/measurements/{id}#links")))
}

/// What the report buttons post.
#[derive(Debug, Deserialize)]
pub struct ReportForm {
    /// `share` to come back to the page with the shared link instead of opening the PDF.
    #[serde(default)]
    pub then: String,
}

/// Creates or reuses the measurement's report, then opens its PDF (or, with `then=share`,
/// returns to the page showing the link).
pub async fn report_pdf(
    member: Member,
    id: Path<String>,
    CsrfForm(form): CsrfForm<ReportForm>,
) -> Result<HttpResponse, WebError> {
    let id = Id::parse(&id)?;
    let language = Language::or_english(Some(&member.user().language));
    let pdf = member
        .state
        .actions
        .measurement_pdf(&member.viewer(), &id, language, true)
        .await?;
    if form.then == "share" {
        return Ok(see_other(&format!("/portal/measurements/{id}#report")));
    }
    Ok(see_other(&format!(
        "/files/v1/{}/file",
        member.state.file_tokens.token(&pdf.file)
    )))
}

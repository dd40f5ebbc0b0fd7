//! The audit trail: its entries newest first, filtered by whose data, who acted, when and what,
//! and their export as CSV whose cells a spreadsheet will not run.

use actix_web::HttpResponse;
use actix_web::web::Query;
use askama::Template;
use serde::Deserialize;

use crate::domain::account::Email;
use crate::domain::id::Id;
use crate::domain::rql::{Expr as RqlExpr, Query as ListQuery, Value as RqlValue};
use crate::domain::time::{end_of_day, parse_day, start_of_day};
use crate::routes::web::chrome::{Chrome, html};
use crate::routes::web::context::Member;
use crate::routes::web::error::WebError;
use crate::routes::web::view::{self, PAGE_SIZE, Pager};
use crate::store::AuditFilter;
use crate::store::entities::audit_event;
use crate::store::resources::USERS;

/// An entry of the audit trail as shown: who did what (in words, the stored code beside),
/// whose data and which object, each a link where the page it leads to exists.
pub struct AuditRow {
    pub when: String,
    pub actor: String,
    pub actor_link: Option<String>,
    pub action: String,
    /// The stored action (`measurement.view`), which the text filter finds.
    pub code: String,
    pub patient: String,
    pub patient_link: Option<String>,
    pub object: String,
    pub object_link: Option<String>,
    pub detail: String,
}

/// How many people a name may match before the filter asks for an address instead.
const NAME_CANDIDATES: u64 = 20;

/// Actions someone may take without logging in: recorded by no account.
const WITHOUT_LOGIN: [&str; 4] = [
    "session.login.failed",
    "account.password.reset.request",
    "link.download",
    "file.download",
];

#[derive(Template)]
#[template(path = "web/admin_audit.html")]
struct AuditPage {
    c: Chrome,
    rows: Vec<AuditRow>,
    pager: Pager,
    query: AuditQuery,
    /// The query string of the filter (for the pager and the export link).
    filter: String,
    error: Option<String>,
}

/// The audit trail's filter as the form sends it: whose data (`user`) and who acted
/// (`actor`), each an e-mail address or an id, and a range of days (`YYYY-MM-DD`, in the
/// administrator's zone, both included).
#[derive(Debug, Default, Clone, Deserialize, serde::Serialize)]
pub struct AuditQuery {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u64>,
    #[serde(default)]
    pub user: String,
    #[serde(default)]
    pub actor: String,
    #[serde(default)]
    pub from: String,
    #[serde(default)]
    pub to: String,
    /// Text in the action, the object's kind or the detail.
    #[serde(default)]
    pub q: String,
}

impl AuditQuery {
    /// The filter, or the translation key of what is wrong with it.
    async fn filter(&self, member: &Member) -> Result<AuditFilter, &'static str> {
        let store = &member.state.store;
        let viewer = member.viewer();
        let person = async |text: &str| -> Result<Option<Id>, &'static str> {
            let text = text.trim();
            if text.is_empty() {
                return Ok(None);
            }
            if let Ok(id) = Id::parse(text) {
                return Ok(Some(id));
            }
            if let Ok(email) = Email::parse(text) {
                return match store
                    .user_to_administer_by_email(&viewer, email.as_str())
                    .await
                {
                    Ok(Some(user)) => Ok(Some(user.id)),
                    _ => Err("admin-audit-unknown-user"),
                };
            }
            // A name: each word in the first or the last name, in any case.
            let words = view::search_text(Some(&text.replace('*', "")));
            let word = |w: &str| {
                let like = |field: &str| RqlExpr::Like {
                    field: field.to_owned(),
                    pattern: RqlValue::String(format!("*{w}*")),
                };
                RqlExpr::Or(vec![like("first_name"), like("last_name")])
            };
            let query = words
                .split_whitespace()
                .fold(ListQuery::default(), |q, w| q.and(word(w)))
                .page(NAME_CANDIDATES, 0)
                .without_count();
            let spec = view::list_spec(&USERS, &query).map_err(|_| "admin-audit-unknown-user")?;
            let Ok((found, _)) = store.users_to_administer(&viewer, &spec).await else {
                return Err("admin-audit-unknown-user");
            };
            // The one whose whole name it is, else the one whose name holds the words.
            let lowered = words.to_lowercase();
            let typed: Vec<&str> = lowered.split_whitespace().collect();
            let whole = |u: &crate::store::entities::user::Model| {
                let name = format!("{} {}", u.first_name, u.last_name).to_lowercase();
                let mut mine: Vec<&str> = name.split_whitespace().collect();
                let mut theirs = typed.clone();
                mine.sort_unstable();
                theirs.sort_unstable();
                mine == theirs
            };
            let exact: Vec<Id> = found
                .iter()
                .filter(|r| whole(&r.user))
                .map(|r| r.user.id)
                .collect();
            match (exact.as_slice(), found.as_slice()) {
                ([id], _) => Ok(Some(*id)),
                (_, [one]) => Ok(Some(one.user.id)),
                (_, []) => Err("admin-audit-unknown-user"),
                _ => Err("admin-audit-several-users"),
            }
        };
        let day = |text: &str, next: bool| -> Result<Option<i64>, &'static str> {
            let text = text.trim();
            if text.is_empty() {
                return Ok(None);
            }
            parse_day(text)
                .and_then(|day| {
                    if next {
                        end_of_day(day, member.zone)
                    } else {
                        start_of_day(day, member.zone)
                    }
                })
                .map(Some)
                .ok_or("admin-audit-bad-date")
        };
        Ok(AuditFilter {
            patient: person(&self.user).await?,
            actor: person(&self.actor).await?,
            from: day(&self.from, false)?,
            until: day(&self.to, true)?,
            text: Some(view::search_text(Some(&self.q))).filter(|t| !t.is_empty()),
        })
    }

    /// The query string of the filter, without the page.
    fn base(&self) -> String {
        let without_page = AuditQuery {
            page: None,
            ..self.clone()
        };
        serde_urlencoded::to_string(&without_page).unwrap_or_default()
    }
}

/// The names of the actors, patients and accounts of these entries, by id: those that still
/// exist.
async fn audit_names(
    member: &Member,
    events: &[audit_event::Model],
) -> Result<std::collections::HashMap<Id, String>, WebError> {
    let mut ids: Vec<Id> = events.iter().map(|e| e.actor_id).collect();
    ids.extend(events.iter().filter_map(|e| e.patient_id));
    ids.extend(
        events
            .iter()
            .filter(|e| e.object_kind == "user")
            .filter_map(|e| e.object_id),
    );
    ids.sort();
    ids.dedup();
    Ok(member
        .state
        .store
        .user_names(&member.viewer(), &ids)
        .await?)
}

/// The audit trail, newest first, filtered by whose data, who acted and when.
pub async fn audit_trail(
    member: Member,
    query: Query<AuditQuery>,
) -> Result<HttpResponse, WebError> {
    let query = query.into_inner();
    let page = query.page.unwrap_or(0).min(10_000);
    let (events, total, error) = match query.filter(&member).await {
        Ok(filter) => {
            let (events, total) = member
                .state
                .actions
                .audit_trail(&member.viewer(), &filter, page * PAGE_SIZE, PAGE_SIZE)
                .await?;
            (events, total, None)
        }
        Err(key) => {
            // The page is the administrators' whatever the filter says.
            member
                .state
                .store
                .audit_page(&member.viewer(), &AuditFilter::default(), 0, 0)
                .await?;
            (Vec::new(), 0, Some(member.tr.text(key)))
        }
    };
    let names = audit_names(&member, &events).await?;
    // Every page asks which of its measurements still exist, even none, so that it costs
    // the same statements whatever it lists.
    let measurements: Vec<Id> = events
        .iter()
        .filter(|e| e.object_kind == "measurement")
        .filter_map(|e| e.object_id)
        .collect();
    let existing = member
        .state
        .store
        .measurement_headers(&member.viewer(), &measurements)
        .await?;
    let rows = events
        .iter()
        .map(|e| audit_row(&member, e, &names, &existing))
        .collect();
    let filter = query.base();
    let mut response = html(&AuditPage {
        c: Chrome::new(&member, "admin", "admin-audit-title"),
        rows,
        pager: Pager::counted_up_to(page, total, &filter).ended_at(events.len()),
        filter,
        query,
        error: error.clone(),
    })?;
    if error.is_some() {
        *response.status_mut() = actix_web::http::StatusCode::BAD_REQUEST;
    }
    Ok(response)
}

/// An entry in the reader's words, with links to what still exists.
fn audit_row(
    member: &Member,
    e: &audit_event::Model,
    names: &std::collections::HashMap<Id, String>,
    measurements: &std::collections::HashMap<Id, crate::store::entities::measurement::Header>,
) -> AuditRow {
    let (actor, actor_link) = match names.get(&e.actor_id) {
        Some(name) => (
            name.clone(),
            Some(format!("/portal/admin/users/{}", e.actor_id)),
        ),
        None if e.actor_id == crate::actions::ANONYMOUS => {
            let key = if WITHOUT_LOGIN.contains(&e.action.as_str()) {
                "audit-nobody"
            } else {
                "audit-operator"
            };
            (member.tr.text(key), None)
        }
        None => (e.actor_id.to_string(), None),
    };
    let (patient, patient_link) = match e.patient_id {
        Some(id) => match names.get(&id) {
            Some(name) => (name.clone(), Some(format!("/portal/patients/{id}"))),
            None => (id.to_string(), None),
        },
        None => (String::new(), None),
    };
    let object_link = e.object_id.and_then(|id| match e.object_kind.as_str() {
        "measurement" => measurements
            .contains_key(&id)
            .then(|| format!("/portal/measurements/{id}")),
        "user" => names
            .contains_key(&id)
            .then(|| format!("/portal/admin/users/{id}")),
        "group" => Some("/portal/admin/groups".to_owned()),
        _ => None,
    });
    AuditRow {
        when: member.datetime(e.creation_timestamp),
        actor,
        actor_link,
        action: member
            .tr
            .try_text(&format!("audit-{}", e.action.replace('.', "-")))
            .unwrap_or_else(|| e.action.clone()),
        code: e.action.clone(),
        patient,
        patient_link,
        object: format!(
            "{} {}",
            e.object_kind,
            e.object_id.map(|id| id.to_string()).unwrap_or_default()
        ),
        object_link,
        detail: e.detail.clone(),
    }
}

/// The entries matching the audit trail's filter as CSV (UTF-8, RFC 4180), newest first, for
/// a patient's access report; the export is itself recorded.
pub async fn audit_export(
    member: Member,
    query: Query<AuditQuery>,
) -> Result<HttpResponse, WebError> {
    let filter = query.filter(&member).await.map_err(WebError::BadRequest)?;
    let events = member
        .state
        .actions
        .export_audit(&member.viewer(), &filter)
        .await?;
    let names = audit_names(&member, &events).await?;
    let name = |id: &Id| names.get(id).cloned().unwrap_or_default();
    let mut csv = csv::Writer::from_writer(Vec::new());
    let write = |csv: &mut csv::Writer<Vec<u8>>, record: &[String]| {
        csv.write_record(record.iter().map(|cell| inert(cell)))
            .map_err(|e| WebError::Internal(e.into()))
    };
    write(
        &mut csv,
        &[
            "time",
            "actor_id",
            "actor",
            "action",
            "patient_id",
            "patient",
            "object_kind",
            "object_id",
            "detail",
        ]
        .map(str::to_owned),
    )?;
    for e in &events {
        write(
            &mut csv,
            &[
                crate::domain::time::rfc3339_millis(e.creation_timestamp),
                e.actor_id.to_string(),
                name(&e.actor_id),
                e.action.clone(),
                e.patient_id.map(|id| id.to_string()).unwrap_or_default(),
                e.patient_id.as_ref().map(name).unwrap_or_default(),
                e.object_kind.clone(),
                e.object_id.map(|id| id.to_string()).unwrap_or_default(),
                e.detail.clone(),
            ],
        )?;
    }
    let body = csv
        .into_inner()
        .map_err(|e| WebError::Internal(anyhow::anyhow!("csv: {e}")))?;
    Ok(HttpResponse::Ok()
        .content_type("text/csv; charset=utf-8")
        .insert_header((
            actix_web::http::header::CONTENT_DISPOSITION,
            "attachment; filename=\"tacho-audit.csv\"",
        ))
        .body(body))
}

/// A cell a spreadsheet will not run: text that would start a formula gets a leading `'`
/// (OWASP, CSV injection).
fn inert(cell: &str) -> String {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{cell}")
    } else {
        cell.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::inert;

    #[test]
    fn exported_cells_never_start_a_formula() {
        for cell in ["=HYPERLINK(\"x\")", "+1", "-2", "@SUM(A1)", "\tx"] {
            assert!(inert(cell).starts_with('\''), "{cell}");
        }
        assert_eq!(inert("user.view"), "user.view");
        assert_eq!(inert(""), "");
    }
}

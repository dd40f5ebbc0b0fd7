//! The audit trail: its entries newest first, filtered by whose data, who acted, when and what,
//! and their export as CSV whose cells a spreadsheet will not run.

use actix_web::HttpResponse;
use actix_web::web::Query;
use askama::Template;
use serde::Deserialize;

use crate::domain::account::Email;
use crate::domain::id::Id;
use crate::domain::time::{end_of_day, parse_day, start_of_day};
use crate::routes::web::chrome::{Chrome, html};
use crate::routes::web::context::Member;
use crate::routes::web::error::WebError;
use crate::routes::web::view::{self, PAGE_SIZE, Pager};
use crate::store::AuditFilter;
use crate::store::entities::audit_event;

/// An entry of the audit trail as shown.
pub struct AuditRow {
    pub when: String,
    pub actor: String,
    pub action: String,
    pub patient: String,
    pub object: String,
    pub detail: String,
}

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
            let email = Email::parse(text).map_err(|_| "admin-audit-unknown-user")?;
            match store
                .user_to_administer_by_email(&viewer, email.as_str())
                .await
            {
                Ok(Some(user)) => Ok(Some(user.id)),
                _ => Err("admin-audit-unknown-user"),
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

/// The names of the actors and patients of these entries, by id.
async fn audit_names(
    member: &Member,
    events: &[audit_event::Model],
) -> Result<std::collections::HashMap<Id, String>, WebError> {
    let mut ids: Vec<Id> = events.iter().map(|e| e.actor_id).collect();
    ids.extend(events.iter().filter_map(|e| e.patient_id));
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
    let name = |id: &Id| names.get(id).cloned().unwrap_or_else(|| id.to_string());
    let rows = events
        .iter()
        .map(|e| AuditRow {
            when: member.datetime(e.creation_timestamp),
            actor: name(&e.actor_id),
            action: e.action.clone(),
            patient: e.patient_id.as_ref().map(name).unwrap_or_default(),
            object: format!(
                "{} {}",
                e.object_kind,
                e.object_id.map(|id| id.to_string()).unwrap_or_default()
            ),
            detail: e.detail.clone(),
        })
        .collect();
    let filter = query.base();
    let mut response = html(&AuditPage {
        c: Chrome::new(&member, "admin", "admin-audit-title"),
        rows,
        pager: Pager::new(page, total, &filter),
        filter,
        query,
        error: error.clone(),
    })?;
    if error.is_some() {
        *response.status_mut() = actix_web::http::StatusCode::BAD_REQUEST;
    }
    Ok(response)
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

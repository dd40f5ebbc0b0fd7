//! Shared links as the portal lists them, for a measurement's page and a periodic report's:
//! when each was made and by whom, until when it opens, and whether it still does.

use super::context::Member;
use super::error::WebError;
use crate::domain::id::Id;
use crate::store::entities::{report_link, shared_link};

/// A shared link as a page lists it.
pub struct LinkRow {
    pub id: Id,
    pub made: String,
    pub by: String,
    pub expires: String,
    /// `open`, `revoked` or `expired`.
    pub state: &'static str,
    pub state_label: String,
}

/// What a link's row is made of, whichever kind of report it opens.
pub struct Grant {
    pub id: Id,
    pub creator_id: Id,
    pub creation_timestamp: i64,
    pub expires_at: i64,
    pub revoked: bool,
}

impl From<shared_link::Model> for Grant {
    fn from(link: shared_link::Model) -> Self {
        Grant {
            id: link.id,
            creator_id: link.creator_id,
            creation_timestamp: link.creation_timestamp,
            expires_at: link.expires_at,
            revoked: link.revoked_at.is_some(),
        }
    }
}

impl From<report_link::Model> for Grant {
    fn from(link: report_link::Model) -> Self {
        Grant {
            id: link.id,
            creator_id: link.creator_id,
            creation_timestamp: link.creation_timestamp,
            expires_at: link.expires_at,
            revoked: link.revoked_at.is_some(),
        }
    }
}

/// The rows of `links`, in their order, with their makers' names in one read.
pub async fn link_rows(
    member: &Member,
    links: impl IntoIterator<Item = impl Into<Grant>>,
) -> Result<Vec<LinkRow>, WebError> {
    let grants: Vec<Grant> = links.into_iter().map(Into::into).collect();
    let mut makers: Vec<Id> = grants.iter().map(|g| g.creator_id).collect();
    makers.sort();
    makers.dedup();
    let state = &member.state;
    let names = state.store.user_names(&member.viewer(), &makers).await?;
    let now = state.store.clock().now_millis();
    Ok(grants
        .into_iter()
        .map(|grant| {
            let state = if grant.revoked {
                "revoked"
            } else if now < grant.expires_at {
                "open"
            } else {
                "expired"
            };
            LinkRow {
                id: grant.id,
                made: member.datetime(grant.creation_timestamp),
                by: names.get(&grant.creator_id).cloned().unwrap_or_default(),
                expires: member.datetime(grant.expires_at),
                state,
                state_label: member.tr.text(&format!("shared-link-{state}")),
            }
        })
        .collect())
}

/// A link to make: how many days it opens.
#[derive(Debug, serde::Deserialize)]
pub struct LinkForm {
    pub days: String,
}

impl LinkForm {
    /// The days asked for; anything that is not a number is refused as 0 days would be.
    pub fn days(&self) -> i64 {
        self.days.trim().parse::<i64>().unwrap_or(0)
    }
}

/// The address a link's secret opens.
pub fn address(member: &Member, secret: &str) -> String {
    format!("{}/share/{secret}", member.state.settings.base_url)
}

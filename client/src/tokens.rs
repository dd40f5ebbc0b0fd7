//! The OAuth2 tokens a client holds, and the token endpoint's answer.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// How long before its expiry an access token is replaced, so that a request never carries a
/// token that expires on the way.
pub(crate) const REFRESH_MARGIN: Duration = Duration::from_secs(30);

/// The tokens of a login: persist them (they serialise with serde) and resume later with
/// [`Client::with_tokens`](crate::Client::with_tokens).
///
/// The refresh token rotates on every refresh, and presenting a rotated one again revokes the
/// whole login; always persist the latest [`Client::tokens`](crate::Client::tokens).
/// `Debug` does not print the tokens themselves.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// The bearer token sent with every request.
    pub access_token: String,
    /// The token that buys a new access token (once).
    pub refresh_token: String,
    /// The id of the user who logged in.
    pub user_id: String,
    /// When the access token expires, as the client computed it when it got the token;
    /// `None` when unknown (the client then refreshes only when the server refuses the token).
    pub expires_at: Option<DateTime<Utc>>,
}

impl Tokens {
    /// Whether the access token expires within the refresh margin.
    pub(crate) fn expires_soon(&self, now: DateTime<Utc>) -> bool {
        self.expires_at
            .is_some_and(|at| at - chrono::Duration::from_std(REFRESH_MARGIN).unwrap() <= now)
    }
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"<redacted>")
            .field("refresh_token", &"<redacted>")
            .field("user_id", &self.user_id)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// The token endpoint's answer.
#[derive(Deserialize)]
pub(crate) struct Grant {
    access_token: String,
    refresh_token: String,
    user_id: String,
    expires_in: Option<u64>,
}

impl Grant {
    /// The tokens, with the expiry counted from `received`.
    pub(crate) fn into_tokens(self, received: DateTime<Utc>) -> Tokens {
        Tokens {
            expires_at: self
                .expires_in
                .and_then(|s| chrono::Duration::try_seconds(s as i64))
                .map(|d| received + d),
            access_token: self.access_token,
            refresh_token: self.refresh_token,
            user_id: self.user_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_expire_soon_within_the_margin_and_never_when_unknown() {
        let now = Utc::now();
        let mut tokens = Tokens {
            access_token: "a".into(),
            refresh_token: "r".into(),
            user_id: "u".into(),
            expires_at: Some(now + chrono::Duration::seconds(31)),
        };
        assert!(!tokens.expires_soon(now));
        assert!(tokens.expires_soon(now + chrono::Duration::seconds(2)));
        tokens.expires_at = None;
        assert!(!tokens.expires_soon(now + chrono::Duration::days(400)));
        let shown = format!("{tokens:?}");
        assert!(!shown.contains("\"a\"") && shown.contains("<redacted>"));
    }
}

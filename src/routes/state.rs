//! What every request handler can reach, built by `startup` and handed to the route table.

use std::sync::Arc;

use actix_web::cookie::Key;

use crate::actions::Actions;
use crate::auth::Authenticator;
use crate::auth::throttle::LoginThrottle;
use crate::config::Settings;
use crate::file_cache::FileCache;
use crate::notify::Notifier;
use crate::reports::Reports;
use crate::routes::web::session::PortalSessions;
use crate::store::Store;

/// What every request handler can reach.
pub struct AppState {
    pub store: Store,
    pub reports: Arc<Reports>,
    /// Every change a person can make (and every read that leaves a trace), for both doors.
    pub actions: Actions,
    /// Hot stored files (row and contents) for `/files/v1/<token>/file`.
    pub files: FileCache,
    pub auth: Authenticator,
    /// Makes and checks the apps' `readFileToken`s.
    pub file_tokens: crate::auth::file_token::FileTokens,
    /// Notification deliveries (webhook secrets are derived through it).
    pub notifier: Notifier,
    /// Registrations per client network (`TACHO_REGISTRATION_RATE` an hour).
    pub registration_throttle: LoginThrottle,
    pub settings: Arc<Settings>,
    /// Where portal sessions live.
    pub sessions: PortalSessions,
    /// The key signing portal session cookies (shared by instances through the database).
    pub cookie_key: Key,
}

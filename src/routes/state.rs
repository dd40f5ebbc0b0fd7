//! What every request handler can reach, built by `startup` and handed to the route table.

use std::sync::Arc;

use actix_web::cookie::Key;

use crate::actions::Actions;
use crate::auth::throttle::LoginThrottle;
use crate::config::Settings;
use crate::file_cache::FileCache;
use crate::routes::web::session::PortalSessions;
use crate::storage::FileStorage;
use crate::store::ReadOnly;

/// What every request handler can reach. It holds no way to write: the store is
/// [`ReadOnly`], and every change goes through `actions`, which alone hold the writable store,
/// the authenticator, the report maker and the notifier.
pub struct AppState {
    /// Every read; no transaction.
    pub store: ReadOnly,
    /// Every change a person can make (and every read that leaves a trace), for both doors.
    pub actions: Actions,
    /// Hot stored files (row and contents) for `/files/v1/<token>/file`.
    pub files: FileCache,
    /// Where stored files' contents are kept: read for downloads, probed for readiness.
    pub storage: Arc<dyn FileStorage>,
    /// Makes and checks the apps' `readFileToken`s.
    pub file_tokens: crate::auth::file_token::FileTokens,
    /// Registrations per client network (`TACHO_REGISTRATION_RATE` an hour).
    pub registration_throttle: LoginThrottle,
    pub settings: Arc<Settings>,
    /// Where portal sessions live.
    pub sessions: PortalSessions,
    /// The key signing portal session cookies (shared by instances through the database).
    pub cookie_key: Key,
}

//! Where portal sessions live: the database by default, Redis when `TACHO_REDIS_URL` is set.
//! The cookie carries only a random 64-character key (signed); the state stays on the server,
//! so logging out or deactivating a user ends a session for good.

use std::collections::HashMap;

use actix_session::SessionMiddleware;
use actix_session::config::{PersistentSession, TtlExtensionPolicy};
use actix_session::storage::{
    LoadError, RedisSessionStore, SaveError, SessionKey, SessionStore, UpdateError,
};
use actix_web::cookie::time::Duration as CookieDuration;
use actix_web::cookie::{Key, SameSite};
use anyhow::Context;
use rand::distr::{Alphanumeric, SampleString};
use redis::AsyncCommands;
use redis::aio::ConnectionManager;

use crate::config::Settings;
use crate::domain::id::Id;
use crate::store::{Store, Unaudited};

/// The session value naming the logged-in user.
pub const USER_KEY: &str = "uid";
/// The session value holding the CSRF token.
pub const CSRF_KEY: &str = "csrf";
/// The session value holding when the user logged in (epoch ms, the store's clock): a session
/// ends this long after it however active it stays (`TACHO_SESSION_TTL`).
pub const LOGIN_AT_KEY: &str = "login_at";

/// A cookie's name: with the `__Host-` prefix when the portal is served over HTTPS, which
/// makes browsers refuse it unless it is `Secure`, for the whole host and set by the host itself
/// (so a sibling subdomain cannot plant one).
pub fn cookie_name(settings: &Settings, name: &str) -> String {
    if is_https(settings) {
        format!("__Host-{name}")
    } else {
        name.to_owned()
    }
}

/// Whether the public address is HTTPS.
pub fn is_https(settings: &Settings) -> bool {
    settings.base_url.starts_with("https://")
}

type State = HashMap<String, String>;

/// The session backend chosen at start-up.
#[derive(Clone)]
pub enum PortalSessions {
    /// The `sessions` table.
    Database(Store),
    /// A Redis server every instance shares: the sessions, and beside them each user's set
    /// of session keys (see [`redis_user_set`]).
    Redis {
        sessions: RedisSessionStore,
        index: ConnectionManager,
        /// How long a user's set of keys is kept after its last change: the longest a session
        /// can last.
        index_ttl: CookieDuration,
    },
}

impl PortalSessions {
    /// Redis when a URL is configured, else the database.
    pub async fn connect(settings: &Settings, store: &Store) -> anyhow::Result<Self> {
        match &settings.redis_url {
            Some(url) => {
                let url = crate::config::ExposeSecret::expose_secret(url);
                let sessions = RedisSessionStore::new(url)
                    .await
                    .context("cannot connect to TACHO_REDIS_URL")?;
                let client =
                    redis::Client::open(url).context("TACHO_REDIS_URL is not a Redis URL")?;
                let index = ConnectionManager::new(client)
                    .await
                    .context("cannot connect to TACHO_REDIS_URL")?;
                let index_ttl = CookieDuration::seconds(settings.session_ttl.as_secs() as i64);
                Ok(PortalSessions::Redis {
                    sessions,
                    index,
                    index_ttl,
                })
            }
            None => Ok(PortalSessions::Database(store.clone())),
        }
    }

    /// Whether sessions are kept in Redis.
    pub fn is_redis(&self) -> bool {
        matches!(self, PortalSessions::Redis { .. })
    }
}

/// The set in Redis that holds the session keys of one user, so that they can be ended
/// together (a deactivation); each session key expires on its own.
fn redis_user_set(user_id: &Id) -> String {
    format!("tacho:user-sessions:{user_id}")
}

#[async_trait::async_trait]
impl crate::actions::SessionEnder for PortalSessions {
    async fn end_sessions_of(&self, user_id: &Id) -> anyhow::Result<u64> {
        match self {
            PortalSessions::Database(store) => Ok(store
                .write(Unaudited::Sessions, async |tx| {
                    tx.delete_sessions_of(user_id).await
                })
                .await?),
            PortalSessions::Redis { index, .. } => {
                let mut conn = index.clone();
                let set = redis_user_set(user_id);
                let keys: Vec<String> = conn.smembers(&set).await?;
                let mut ended = 0;
                if !keys.is_empty() {
                    ended = conn.del(&keys).await?;
                }
                let _: u64 = conn.del(&set).await?;
                Ok(ended)
            }
        }
    }
}

/// Adds a session key to its user's set, which lives as long as the newest session in it.
async fn index_session(
    index: &ConnectionManager,
    user_id: &Id,
    key: &SessionKey,
    ttl: &CookieDuration,
) -> anyhow::Result<()> {
    let mut conn = index.clone();
    let set = redis_user_set(user_id);
    let _: u64 = conn.sadd(&set, key.as_ref()).await?;
    let _: bool = conn.expire(&set, ttl.whole_seconds()).await?;
    Ok(())
}

/// The key that signs session cookies: shared by every instance through the database.
pub async fn cookie_key(store: &Store) -> anyhow::Result<Key> {
    let bytes = store.shared_key("session-cookie-key", 64).await?;
    Key::try_from(bytes.as_slice()).context("the stored session cookie key is too short")
}

/// The session middleware of the portal: `HttpOnly`, `SameSite=Lax`, `Secure` and
/// `__Host-tacho_session` when the public address is HTTPS. A session ends after
/// `TACHO_SESSION_IDLE` without a request (each request moves its expiry, ASVS 5.0 V7.3.1), and
/// `TACHO_SESSION_TTL` after its login whatever happens ([`LOGIN_AT_KEY`], V7.3.2). A session
/// is stored only once it holds something: the login makes the first.
pub fn middleware(
    sessions: PortalSessions,
    key: Key,
    settings: &Settings,
) -> SessionMiddleware<PortalSessions> {
    let idle = CookieDuration::seconds(settings.session_idle.as_secs() as i64);
    SessionMiddleware::builder(sessions, key)
        .cookie_name(cookie_name(settings, "tacho_session"))
        .cookie_http_only(true)
        .cookie_same_site(SameSite::Lax)
        .cookie_secure(is_https(settings))
        .cookie_path("/".into())
        .session_lifecycle(
            PersistentSession::default()
                .session_ttl(idle)
                .session_ttl_extension_policy(TtlExtensionPolicy::OnEveryRequest),
        )
        .build()
}

fn new_key() -> SessionKey {
    Alphanumeric
        .sample_string(&mut rand::rng(), 64)
        .try_into()
        .expect("64 characters are a valid session key")
}

fn user_of(state: &State) -> Option<Id> {
    state
        .get(USER_KEY)
        .and_then(|v| serde_json::from_str::<Id>(v).ok())
}

fn expiry(store: &Store, ttl: &CookieDuration) -> i64 {
    store.clock().now_millis() + ttl.whole_milliseconds() as i64
}

impl SessionStore for PortalSessions {
    async fn load(&self, key: &SessionKey) -> Result<Option<State>, LoadError> {
        match self {
            PortalSessions::Redis { sessions, .. } => sessions.load(key).await,
            PortalSessions::Database(store) => {
                let Some(row) = store
                    .session(key.as_ref())
                    .await
                    .map_err(|e| LoadError::Other(e.into()))?
                else {
                    return Ok(None);
                };
                serde_json::from_str(&row.state)
                    .map(Some)
                    .map_err(|e| LoadError::Deserialization(e.into()))
            }
        }
    }

    async fn save(&self, state: State, ttl: &CookieDuration) -> Result<SessionKey, SaveError> {
        match self {
            PortalSessions::Redis {
                sessions,
                index,
                index_ttl,
            } => {
                let user = user_of(&state);
                let key = sessions.save(state, ttl).await?;
                if let Some(user) = user {
                    index_session(index, &user, &key, index_ttl)
                        .await
                        .map_err(SaveError::Other)?;
                }
                Ok(key)
            }
            PortalSessions::Database(store) => {
                let key = new_key();
                let text = serde_json::to_string(&state)
                    .map_err(|e| SaveError::Serialization(e.into()))?;
                let (user, until) = (user_of(&state), expiry(store, ttl));
                store
                    .write(Unaudited::Sessions, async |tx| {
                        tx.insert_session(key.as_ref(), text, user, until).await
                    })
                    .await
                    .map_err(|e| SaveError::Other(e.into()))?;
                Ok(key)
            }
        }
    }

    async fn update(
        &self,
        key: SessionKey,
        state: State,
        ttl: &CookieDuration,
    ) -> Result<SessionKey, UpdateError> {
        match self {
            PortalSessions::Redis {
                sessions,
                index,
                index_ttl,
            } => {
                let user = user_of(&state);
                let key = sessions.update(key, state, ttl).await?;
                if let Some(user) = user {
                    index_session(index, &user, &key, index_ttl)
                        .await
                        .map_err(UpdateError::Other)?;
                }
                Ok(key)
            }
            PortalSessions::Database(store) => {
                let text = serde_json::to_string(&state)
                    .map_err(|e| UpdateError::Serialization(e.into()))?;
                let user = user_of(&state);
                let until = expiry(store, ttl);
                let updated = store
                    .write(Unaudited::Sessions, async |tx| {
                        tx.update_session(key.as_ref(), text.clone(), user, until)
                            .await
                    })
                    .await
                    .map_err(|e| UpdateError::Other(e.into()))?;
                if updated {
                    return Ok(key);
                }
                // The session expired meanwhile: keep the state under a fresh key.
                let key = new_key();
                store
                    .write(Unaudited::Sessions, async |tx| {
                        tx.insert_session(key.as_ref(), text, user, until).await
                    })
                    .await
                    .map_err(|e| UpdateError::Other(e.into()))?;
                Ok(key)
            }
        }
    }

    async fn update_ttl(&self, key: &SessionKey, ttl: &CookieDuration) -> anyhow::Result<()> {
        match self {
            PortalSessions::Redis { sessions, .. } => sessions.update_ttl(key, ttl).await,
            PortalSessions::Database(store) => {
                let until = expiry(store, ttl);
                Ok(store
                    .write(Unaudited::Sessions, async |tx| {
                        tx.touch_session(key.as_ref(), until).await
                    })
                    .await?)
            }
        }
    }

    async fn delete(&self, key: &SessionKey) -> anyhow::Result<()> {
        match self {
            PortalSessions::Redis { sessions, .. } => sessions.delete(key).await,
            PortalSessions::Database(store) => Ok(store
                .write(Unaudited::Sessions, async |tx| {
                    tx.delete_session(key.as_ref()).await
                })
                .await?),
        }
    }
}

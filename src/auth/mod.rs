//! Authentication: password checks with lockout, opaque token issue and rotation, bearer checks.
//! Used by the token endpoint, the bearer extractor and (later) the portal's login form.

pub mod file_token;
pub mod lockout;
pub mod password;
pub mod throttle;
pub mod token;

use std::sync::Arc;
use std::time::Duration;

use crate::domain::id::Id;
use crate::domain::network::Network;
use crate::store::entities::user;
use crate::store::{
    AccessCheck, NewTokenPair, RefreshCheck, Service, Store, StoreError, Tx, Unaudited,
};
use lockout::LockState;
use password::PasswordHasher;

/// Why a login or refresh was refused.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// Unknown e-mail or wrong password (the two are indistinguishable on purpose).
    #[error("invalid e-mail address or password")]
    InvalidCredentials,
    /// The account is deactivated.
    #[error("the account is deactivated")]
    Deactivated,
    /// Attempted during a freeze; the password was not checked.
    #[error("too many failed attempts; try again in {retry_after_secs} s")]
    Frozen { retry_after_secs: u64 },
    /// This failure started (or lengthened) a freeze.
    #[error("too many failed attempts; the account is frozen for {freeze_secs} s")]
    FreezeStarted { freeze_secs: u64 },
    /// Too many attempts from the client's network; nothing was checked.
    #[error("too many login attempts; retry in {retry_after_secs} s")]
    Throttled { retry_after_secs: u64 },
    /// Blocked after too many failures until an administrator unblocks it.
    #[error(
        "the account is blocked after too many failed attempts; an administrator must unblock it"
    )]
    Blocked,
    /// The refresh token is unknown, expired or revoked.
    #[error("the refresh token is invalid or expired")]
    InvalidRefreshToken,
    /// A rotated refresh token was presented again; the whole login has been revoked.
    #[error("the refresh token was already used; the session has been revoked")]
    RefreshTokenReused,
    /// A fault of the service.
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl LoginError {
    /// A short name of the refusal, for the audit trail.
    pub fn kind(&self) -> &'static str {
        match self {
            LoginError::InvalidCredentials => "invalid credentials",
            LoginError::Deactivated => "deactivated",
            LoginError::Frozen { .. } => "frozen",
            LoginError::FreezeStarted { .. } => "freeze started",
            LoginError::Blocked => "blocked",
            LoginError::Throttled { .. } => "throttled",
            LoginError::InvalidRefreshToken => "invalid refresh token",
            LoginError::RefreshTokenReused => "refresh token reused",
            LoginError::Internal(_) => "internal",
        }
    }
}

impl From<StoreError> for LoginError {
    fn from(err: StoreError) -> Self {
        LoginError::Internal(err.into())
    }
}

/// Why a bearer token was refused.
#[derive(Debug, thiserror::Error)]
pub enum BearerError {
    #[error("access token unknown or revoked")]
    Unknown,
    #[error("access token expired")]
    Expired,
    #[error(transparent)]
    Internal(#[from] StoreError),
}

/// Tokens handed to a client after a login or refresh.
#[derive(Debug, Clone)]
pub struct IssuedTokens {
    pub access_token: String,
    pub refresh_token: String,
    pub expires_in: u64,
    pub user_id: Id,
}

/// Performs logins and token checks against the store.
#[derive(Clone)]
pub struct Authenticator {
    store: Store,
    hasher: PasswordHasher,
    access_ttl: Duration,
    refresh_ttl: Duration,
    login_lifetime: Duration,
}

/// The longest a login lasts unless [`Authenticator::with_login_lifetime`] says otherwise.
const DEFAULT_LOGIN_LIFETIME: Duration = Duration::from_secs(90 * 24 * 3600);

impl Authenticator {
    /// An authenticator issuing tokens with the given lifetimes.
    pub fn new(
        store: Store,
        hasher: PasswordHasher,
        access_ttl: Duration,
        refresh_ttl: Duration,
    ) -> Self {
        Authenticator {
            store,
            hasher,
            access_ttl,
            refresh_ttl,
            login_lifetime: DEFAULT_LOGIN_LIFETIME,
        }
    }

    /// Ends every login (token family) this long after its password grant, however often its
    /// refresh token is rotated.
    pub fn with_login_lifetime(mut self, lifetime: Duration) -> Self {
        self.login_lifetime = lifetime;
        self
    }

    /// The password hasher, for account creation and password changes.
    pub fn hasher(&self) -> &PasswordHasher {
        &self.hasher
    }

    /// Checks an e-mail and password under the lockout rules, for a client in `network`, and
    /// returns the user. The attempt is counted before the password is checked (see
    /// [`Store::reserve_login_attempt`]), per e-mail address as typed and client network, so
    /// that an address no account has is counted, frozen and blocked like any other, and an
    /// attacker's failures do not lock the owner out of another network.
    pub async fn verify_login(
        &self,
        email: &str,
        password: &str,
        network: Network,
    ) -> Result<user::Model, LoginError> {
        let typed = email.trim().to_lowercase();
        let login = login_key(&typed);
        let network = network.to_string();
        let now = self.store.clock().now_millis();
        let failures = self.reserve(&login, &network, now).await?;
        let known = match crate::domain::account::Email::parse(&typed) {
            Ok(email) => {
                self.store
                    .user_by_email(&Service::SignIn, email.as_str())
                    .await?
            }
            Err(_) => None,
        };
        let checked = match &known {
            Some(user) => {
                self.hasher
                    .verify(password.to_owned(), user.password_hash.clone())
                    .await
            }
            None => {
                // Same work as for a real account, so timing does not reveal which e-mails exist.
                self.hasher.verify_dummy(password.to_owned()).await;
                false
            }
        };
        let Some(user) = known.as_ref().filter(|_| checked).cloned() else {
            if let Some(user) = &known {
                let (worst, last) = self.store.worst_login_failures(&login).await?;
                self.store
                    .write(Unaudited::Logins, async |tx| {
                        tx.show_failed_logins(&user.id, worst, last).await
                    })
                    .await?;
            }
            return Err(match lockout::state(failures, Some(now), now) {
                LockState::Blocked => LoginError::Blocked,
                LockState::Frozen { .. } => LoginError::FreezeStarted {
                    freeze_secs: lockout::freeze_millis(failures) as u64 / 1000,
                },
                LockState::Open => LoginError::InvalidCredentials,
            });
        };
        self.store
            .write(Unaudited::Logins, async |tx| {
                tx.clear_login_attempt(&login, &network).await
            })
            .await?;
        if !user.activation {
            return Err(LoginError::Deactivated);
        }
        let (worst, last) = self.store.worst_login_failures(&login).await?;
        if (worst, last) != (user.failed_count, user.last_failed_timestamp) {
            self.store
                .write(Unaudited::Logins, async |tx| {
                    tx.show_failed_logins(&user.id, worst, last).await
                })
                .await?;
        }
        Ok(user)
    }

    /// Reserves one attempt of `login` from `network`: the failures in a row it makes,
    /// counting itself, or why no attempt may be made now.
    async fn reserve(&self, login: &str, network: &str, now: i64) -> Result<i32, LoginError> {
        // Each round loses only to an attempt that counted itself meanwhile, so a burst is let
        // through one count at a time; beyond a few rounds the client is told to wait.
        for _ in 0..16 {
            let (seen, last) = self.store.login_failures(login, network).await?;
            match lockout::state(seen, last, now) {
                LockState::Blocked => return Err(LoginError::Blocked),
                LockState::Frozen { until } => {
                    return Err(LoginError::Frozen {
                        retry_after_secs: ((until - now).max(1) as u64).div_ceil(1000),
                    });
                }
                LockState::Open => {}
            }
            let reserved = self
                .store
                .write(Unaudited::Logins, async |tx| {
                    tx.reserve_login_attempt(login, network, seen).await
                })
                .await?;
            if reserved {
                return Ok(seen + 1);
            }
        }
        Err(LoginError::Frozen {
            retry_after_secs: 1,
        })
    }

    /// Redeems a refresh token (the OAuth2 refresh grant): it is spent, whatever follows, and
    /// a token spent before revokes its whole login (RFC 6819 5.2.2.3). Answers the login's
    /// user and family, for [`Authenticator::issue_tokens`].
    pub async fn redeem_refresh_token(&self, refresh_token: &str) -> Result<(Id, Id), LoginError> {
        let hash = token::hash(refresh_token);
        let check = self
            .store
            .write(Unaudited::Logins, async |tx| {
                tx.consume_refresh_token(&hash).await
            })
            .await?;
        match check {
            RefreshCheck::Rotated { user, family_id } => Ok((user.id, family_id)),
            RefreshCheck::Reused => Err(LoginError::RefreshTokenReused),
            RefreshCheck::Invalid => Err(LoginError::InvalidRefreshToken),
        }
    }

    /// The user a bearer token acts for.
    pub async fn authenticate(&self, bearer: &str) -> Result<user::Model, BearerError> {
        match self.store.check_access_token(&token::hash(bearer)).await? {
            AccessCheck::Valid(user) => Ok(*user),
            AccessCheck::Unknown => Err(BearerError::Unknown),
            AccessCheck::Expired => Err(BearerError::Expired),
        }
    }

    /// A new pair of tokens for `user_id`, written in `tx` (the action that records the
    /// login or the refresh): of a new login, or of the login `family_id` a refresh token
    /// was redeemed from.
    pub async fn issue_tokens(
        &self,
        tx: &Tx,
        user_id: Id,
        family_id: Option<Id>,
    ) -> Result<IssuedTokens, LoginError> {
        let now = tx.clock().now_millis();
        let started = match &family_id {
            Some(family) => tx.family_started_at(family).await?.unwrap_or(now),
            None => now,
        };
        // No token of a login outlives the login's absolute end (ASVS 5.0 V7.3.2).
        let end = started.saturating_add(millis(self.login_lifetime));
        if end <= now {
            return Err(LoginError::InvalidRefreshToken);
        }
        let access_expires_at = now.saturating_add(millis(self.access_ttl)).min(end);
        let access_token = token::generate();
        let refresh_token = token::generate();
        let pair = NewTokenPair {
            user_id,
            family_id,
            access_hash: token::hash(&access_token),
            access_expires_at,
            refresh_hash: token::hash(&refresh_token),
            refresh_expires_at: now.saturating_add(millis(self.refresh_ttl)).min(end),
        };
        tx.insert_token_pair(pair).await?;
        Ok(IssuedTokens {
            access_token,
            refresh_token,
            expires_in: u64::try_from((access_expires_at - now) / 1000).unwrap_or(0),
            user_id,
        })
    }
}

/// The key failed logins are counted under: the SHA-256 of the e-mail address as typed,
/// trimmed and in lower case (an address no account has is counted all the same).
pub fn login_key(email: &str) -> String {
    token::hash(&email.trim().to_lowercase())
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// Shared handle used by the web layer.
pub type SharedAuthenticator = Arc<Authenticator>;

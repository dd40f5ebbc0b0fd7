//! Accounts: creating one (registration, or an administrator for someone else), changing its
//! fields or password, activation, lifting a lockout, global roles.

use super::{
    ANONYMOUS, ActionError, ActionResult, Actions, EntryExt, act_on, consents, done, entry,
};
use crate::auth::{IssuedTokens, LoginError};
use crate::domain::account::{
    Email, Language, NewPassword, PersonName, PhoneNumber, Role, TimeZone,
};
use crate::domain::id::Id;
use crate::domain::network::Network;
use crate::store::entities::consent::ConsentDoor;
use crate::store::entities::user;
use crate::store::{AdminTask, AuditAction, NewUser, Service, StoreError, Tx, UserChanges, Viewer};

/// A new account, parsed.
#[derive(Debug)]
pub struct NewAccount {
    pub email: Email,
    pub password: NewPassword,
    pub first_name: PersonName,
    pub last_name: PersonName,
    pub phone_number: Option<PhoneNumber>,
    pub language: Language,
    pub time_zone: TimeZone,
    /// Global roles from the start (administrators only).
    pub roles: Vec<Role>,
}

/// Global roles to grant and to revoke.
#[derive(Debug, Default)]
pub struct RoleChange {
    pub grant: Vec<Role>,
    pub revoke: Vec<Role>,
}

impl RoleChange {
    /// Grants `roles` when `grant`, else revokes them.
    pub fn of(roles: Vec<Role>, grant: bool) -> Self {
        if grant {
            RoleChange {
                grant: roles,
                revoke: Vec::new(),
            }
        } else {
            RoleChange {
                grant: Vec::new(),
                revoke: roles,
            }
        }
    }
}

/// An account's own fields to change, parsed; `None` leaves a field as it is.
#[derive(Debug, Default)]
pub struct AccountChanges {
    pub first_name: Option<PersonName>,
    pub last_name: Option<PersonName>,
    /// `Some(None)` clears the number.
    pub phone_number: Option<Option<PhoneNumber>>,
    pub language: Option<Language>,
    pub time_zone: Option<TimeZone>,
}

impl Actions {
    /// Creates an account and its empty profile. Without a viewer it is a registration (the
    /// new user is the actor of the record and gets no roles), which records the new user's
    /// consent to the processing of health data; with one, an administrator creates it for
    /// someone else.
    pub async fn create_account(
        &self,
        viewer: Option<&Viewer>,
        new: NewAccount,
    ) -> ActionResult<user::Model> {
        if let Some(viewer) = viewer {
            viewer
                .administer(AdminTask::CreateUsers)
                .map_err(StoreError::Denied)?;
        } else if !new.roles.is_empty() {
            let denied = crate::store::Denied::AdminOnly(AdminTask::ChangeRoles);
            return Err(StoreError::Denied(denied).into());
        }
        // Hashed before the transaction (a hash takes tens of milliseconds, and the
        // transaction holds SQLite's write lock), and whether or not the address is in use, so
        // that the answer's timing does not tell which addresses have accounts.
        let password = new.password.expose().to_owned();
        let hasher = self.auth.hasher();
        let password_hash = match viewer {
            Some(_) => hasher.hash(password).await?,
            None => hasher.hash_for_registration(password).await?,
        };
        self.act(async |tx| {
            let roles: Vec<String> = new.roles.iter().map(|r| r.as_str().to_owned()).collect();
            // An administrator chose this password: the user is asked for its own.
            let due = viewer.is_some();
            let created = insert_account(tx, &Service::SignIn, new, password_hash, due).await?;
            let detail = format!("roles: {}", roles.join(","));
            let records = match viewer {
                // The patient is not there to consent: an administrator's account records none.
                Some(viewer) => {
                    vec![entry(viewer, AuditAction::UserCreate, "user", &created.id).detail(detail)]
                }
                None => {
                    let itself = Viewer::of(&created);
                    let registered = entry(&itself, AuditAction::UserRegister, "user", &created.id)
                        .detail(detail);
                    // Registering is consent to the processing of health data at the version
                    // the server states (`GET /consent/v1/current`); only the API registers.
                    let consent =
                        consents::give_health_data(tx, &itself, &created.id, ConsentDoor::Api)
                            .await?;
                    vec![registered, consent]
                }
            };
            done(created, records)
        })
        .await
    }

    /// Changes an account's own fields (the user itself, or an administrator).
    pub async fn change_account(
        &self,
        viewer: &Viewer,
        id: &Id,
        changes: AccountChanges,
    ) -> ActionResult<user::Model> {
        self.act(async |tx| {
            tx.user_to_change(viewer, id).await?;
            let mut fields = Vec::new();
            let mut mark = |present: bool, name: &'static str| {
                if present {
                    fields.push(name);
                }
            };
            mark(changes.first_name.is_some(), "first_name");
            mark(changes.last_name.is_some(), "last_name");
            mark(changes.phone_number.is_some(), "phone_number");
            mark(changes.language.is_some(), "language");
            mark(changes.time_zone.is_some(), "time_zone");
            let updated = tx
                .update_user(
                    id,
                    UserChanges {
                        first_name: changes.first_name.map(|n| n.as_str().to_owned()),
                        last_name: changes.last_name.map(|n| n.as_str().to_owned()),
                        phone_number: changes
                            .phone_number
                            .map(|p| p.map(|p| p.as_str().to_owned())),
                        language: changes.language.map(Language::upper),
                        time_zone: changes.time_zone.map(|z| z.name().to_owned()),
                        ..UserChanges::default()
                    },
                )
                .await?;
            let record =
                entry(viewer, AuditAction::AccountUpdate, "user", id).detail(fields.join(", "));
            done(updated, record)
        })
        .await
    }

    /// Takes one turn of `network`'s allowance of login attempts (`TACHO_LOGIN_RATE` a minute
    /// per /24 or /48, shared by both doors and by forgotten-password requests); refused, how
    /// long to wait.
    pub fn take_login_turn(&self, network: Network) -> Result<(), LoginError> {
        self.login_throttle.check(network).map_err(|wait| {
            crate::telemetry::metrics::login("throttled");
            LoginError::Throttled {
                retry_after_secs: wait.as_secs().max(1),
            }
        })
    }

    /// A login by e-mail address and password from a client in `network`, under the login
    /// throttle of that network and the lockout rules, through the portal's login form (the
    /// API's password grant is [`Actions::log_in_for_tokens`]). Each is recorded: a success by
    /// its user, a failure by no one ([`ANONYMOUS`]) about the account when one has that
    /// address, with the network, never the address typed.
    pub async fn log_in(
        &self,
        email: &str,
        password: &str,
        network: Network,
    ) -> Result<user::Model, LoginError> {
        self.log_in_issuing(email, password, network, false)
            .await
            .map(|(user, _)| user)
    }

    /// [`Actions::log_in`] for the API's password grant: the login's tokens are issued in the
    /// transaction that records it.
    pub async fn log_in_for_tokens(
        &self,
        email: &str,
        password: &str,
        network: Network,
    ) -> Result<IssuedTokens, LoginError> {
        let (_, issued) = self.log_in_issuing(email, password, network, true).await?;
        issued.ok_or_else(|| LoginError::Internal(anyhow::anyhow!("no tokens were issued")))
    }

    async fn log_in_issuing(
        &self,
        email: &str,
        password: &str,
        network: Network,
        tokens: bool,
    ) -> Result<(user::Model, Option<IssuedTokens>), LoginError> {
        self.take_login_turn(network)?;
        let verified = self.auth.verify_login(email, password, network).await;
        crate::telemetry::metrics::login(match &verified {
            Ok(_) => "success",
            Err(LoginError::InvalidCredentials | LoginError::Deactivated) => "failure",
            Err(LoginError::FreezeStarted { .. }) => "lockout",
            Err(LoginError::Frozen { .. } | LoginError::Blocked) => "locked",
            Err(_) => "error",
        });
        match verified {
            Ok(user) => {
                act_on(&self.store, async |tx| {
                    let issued = match tokens {
                        true => Some(self.auth.issue_tokens(tx, user.id, None).await?),
                        false => None,
                    };
                    let record = entry(
                        &Viewer::of(&user),
                        AuditAction::SessionLogin,
                        "user",
                        &user.id,
                    )
                    .detail(format!("from {network}"));
                    done((user.clone(), issued), record)
                })
                .await
            }
            Err(LoginError::Internal(e)) => Err(LoginError::Internal(e)),
            Err(refused) => {
                let anonymous = Viewer {
                    user_id: ANONYMOUS,
                    admin: false,
                };
                // Only a well-formed address can name an account (and only such text reaches
                // the database).
                let account = match crate::domain::account::Email::parse(email.trim()) {
                    Ok(email) => self
                        .store
                        .user_by_email(&Service::SignIn, email.as_str())
                        .await?
                        .map(|u| u.id),
                    Err(_) => None,
                };
                let mut record = entry(
                    &anonymous,
                    AuditAction::SessionLoginFailed,
                    "user",
                    &account.unwrap_or(ANONYMOUS),
                )
                .detail(format!("from {network}: {}", refused.kind()));
                record.patient_id = account;
                self.store.record_read(record).await?;
                Err(refused)
            }
        }
    }

    /// A refresh grant (the OAuth2 `refresh_token` grant) from a client in `network`, under
    /// its login throttle: the refresh token is spent, and the login's new tokens are issued in
    /// the transaction that records the grant.
    pub async fn refresh_login(
        &self,
        refresh_token: &str,
        network: Network,
    ) -> Result<IssuedTokens, LoginError> {
        self.take_login_turn(network)?;
        let (user, family) = self.auth.redeem_refresh_token(refresh_token).await?;
        act_on(&self.store, async |tx| {
            let issued = self.auth.issue_tokens(tx, user, Some(family)).await?;
            let owner = Viewer {
                user_id: user,
                admin: false,
            };
            done(
                issued,
                entry(&owner, AuditAction::TokenRefresh, "user", &user),
            )
        })
        .await
    }

    /// Changes the viewer's own password after checking the current one (under the login
    /// lockout rules: a wrong current password counts as a failed login). Every login of the
    /// account ends with it: its tokens are revoked and its pending account links spent with
    /// the change, and then its portal sessions are ended (the portal gives the session that
    /// made the change a new one).
    pub async fn change_password(
        &self,
        viewer: &Viewer,
        email: &str,
        current: &str,
        new: NewPassword,
        network: Network,
    ) -> ActionResult<()> {
        self.verify_own_password(viewer, email, current, network)
            .await?;
        let hash = self.auth.hasher().hash(new.expose().to_owned()).await?;
        self.act(async |tx| {
            let changes = UserChanges {
                password_hash: Some(hash),
                ..UserChanges::default()
            };
            tx.update_user(&viewer.user_id, changes).await?;
            end_logins(tx, &viewer.user_id).await?;
            let record = entry(
                viewer,
                AuditAction::AccountPassword,
                "user",
                &viewer.user_id,
            )
            .detail("password changed");
            done((), record)
        })
        .await?;
        self.sessions.end_sessions_of(&viewer.user_id).await?;
        Ok(())
    }

    /// The viewer's own account, after checking that `password` is its current password under
    /// the login lockout rules (a wrong one counts as a failed login). Asked before a change
    /// that a stolen session alone must not make.
    pub(super) async fn verify_own_password(
        &self,
        viewer: &Viewer,
        email: &str,
        password: &str,
        network: Network,
    ) -> ActionResult<user::Model> {
        match self.auth.verify_login(email, password, network).await {
            Ok(user) if user.id == viewer.user_id => Ok(user),
            Err(crate::auth::LoginError::Internal(e)) => Err(ActionError::Internal(e)),
            _ => Err(ActionError::invalid(
                "the current password is wrong",
                "password-current-wrong",
            )),
        }
    }

    /// Ends every login of the viewer's account: all its API tokens and all its portal
    /// sessions, the one that asks included, and every pending account link (a password reset,
    /// an address change) that someone with one of those logins may have asked for.
    pub async fn sign_out_everywhere(&self, viewer: &Viewer) -> ActionResult<()> {
        self.act(async |tx| {
            end_logins(tx, &viewer.user_id).await?;
            let action = AuditAction::SessionLogoutEverywhere;
            done((), entry(viewer, action, "user", &viewer.user_id))
        })
        .await?;
        self.sessions.end_sessions_of(&viewer.user_id).await?;
        Ok(())
    }

    /// Revokes the login a token belongs to (RFC 7009): its access and refresh tokens. A
    /// token that is unknown, expired or already revoked changes nothing, and the caller is
    /// not told which (RFC 7009 2.2).
    pub async fn revoke_token(&self, token: &str) -> ActionResult<()> {
        self.act(async |tx| {
            let hash = crate::auth::token::hash(token);
            let Some((family, user)) = tx.token_family(&hash).await? else {
                return done((), Vec::new());
            };
            tx.revoke_family(&family).await?;
            let owner = Viewer {
                user_id: user,
                admin: false,
            };
            let record = entry(&owner, AuditAction::TokenRevoke, "user", &user)
                .detail(format!("login {family}"));
            done((), record)
        })
        .await
    }

    /// Activates or deactivates an account (administrators; never one's own deactivation).
    /// Deactivation revokes its tokens and spends its pending account links with the change,
    /// and then ends its portal sessions;
    /// activation also lifts a lockout after failed logins.
    pub async fn set_activation(
        &self,
        viewer: &Viewer,
        id: &Id,
        active: bool,
    ) -> ActionResult<user::Model> {
        let task = AdminTask::ChangeActivation;
        let updated = self
            .act(async |tx| {
                let user = tx.user_to_administer(viewer, id, task).await?;
                if active {
                    let login = crate::auth::login_key(&user.email);
                    tx.clear_login_attempts(&login).await?;
                } else {
                    viewer.may_lock_out(id, task).map_err(StoreError::Denied)?;
                }
                let updated = tx.set_activation(id, active).await?;
                let action = if active {
                    AuditAction::UserActivate
                } else {
                    tx.spend_account_links_of(id).await?;
                    AuditAction::UserDeactivate
                };
                done(updated, entry(viewer, action, "user", id))
            })
            .await?;
        if !active {
            self.sessions.end_sessions_of(id).await?;
        }
        Ok(updated)
    }

    /// Lifts a lockout after failed logins (administrators): the count starts again at zero.
    pub async fn unblock(&self, viewer: &Viewer, id: &Id) -> ActionResult<user::Model> {
        self.act(async |tx| {
            let user = tx
                .user_to_administer(viewer, id, AdminTask::ChangeActivation)
                .await?;
            lift_lockout(tx, &user).await?;
            let record = entry(viewer, AuditAction::UserUnblock, "user", id)
                .detail(format!("after {} failed logins", user.failed_count));
            let unblocked = tx
                .user_by_id(viewer, id)
                .await?
                .ok_or(StoreError::NotFound)?;
            done(unblocked, record)
        })
        .await
    }

    /// Grants and revokes global roles (administrators; never one's own admin role).
    pub async fn change_roles(
        &self,
        viewer: &Viewer,
        id: &Id,
        change: RoleChange,
    ) -> ActionResult<user::Model> {
        let task = AdminTask::ChangeRoles;
        self.act(async |tx| {
            let user = tx.user_to_administer(viewer, id, task).await?;
            if change.revoke.contains(&Role::Admin) {
                viewer.may_lock_out(id, task).map_err(StoreError::Denied)?;
            }
            let mut roles = user.role_names()?;
            for role in &change.grant {
                let name = role.as_str().to_owned();
                if !roles.contains(&name) {
                    roles.push(name);
                }
            }
            roles.retain(|r| !change.revoke.iter().any(|role| role.as_str() == r));
            let updated = tx.set_roles(id, roles.clone()).await?;
            done(
                updated,
                entry(viewer, AuditAction::UserRoles, "user", id).detail(roles.join(",")),
            )
        })
        .await
    }
}

/// Writes a new account and its empty profile, unless its address is in use: for an
/// administrator's creation, a registration, and the operator's command line.
pub(super) async fn insert_account(
    tx: &Tx,
    scope: &Service,
    new: NewAccount,
    password_hash: String,
    password_change_due: bool,
) -> ActionResult<user::Model> {
    if tx.user_by_email(scope, new.email.as_str()).await?.is_some() {
        return Err(StoreError::EmailUsed.into());
    }
    let created = tx
        .create_user(NewUser {
            email: new.email.as_str().to_owned(),
            password_hash,
            first_name: new.first_name.as_str().to_owned(),
            last_name: new.last_name.as_str().to_owned(),
            phone_number: new.phone_number.map(|p| p.as_str().to_owned()),
            language: new.language.upper(),
            time_zone: new.time_zone.name().to_owned(),
            roles: new.roles.iter().map(|r| r.as_str().to_owned()).collect(),
            password_change_due,
        })
        .await?;
    Ok(created)
}

/// Ends every login of `user` that the store holds: its API tokens, and the account links
/// (a password reset, an address change) that one of those logins may have asked for.
pub(super) async fn end_logins(tx: &Tx, user: &Id) -> ActionResult<()> {
    tx.revoke_tokens_of(user).await?;
    tx.spend_account_links_of(user).await?;
    Ok(())
}

/// Lifts a lockout after failed logins: the account's count starts again at zero, and so do
/// the attempts counted against its address.
pub(super) async fn lift_lockout(tx: &Tx, user: &user::Model) -> ActionResult<()> {
    tx.reset_failed_logins(&user.id).await?;
    tx.clear_login_attempts(&crate::auth::login_key(&user.email))
        .await?;
    Ok(())
}

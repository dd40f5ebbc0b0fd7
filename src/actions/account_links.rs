//! Account links by e-mail: a forgotten password, an administrator's password reset, and an
//! e-mail change confirmed from the new address. Each link is single-use, expires, and only
//! its SHA-256 is stored (`store::account_links`); a newer link of the same purpose spends the
//! older ones.

use chrono::Duration;

use super::accounts::{end_logins, lift_lockout};
use super::{ANONYMOUS, ActionError, ActionResult, Actions, EntryExt, done, entry};
use crate::auth::token;
use crate::domain::account::{Email, NewPassword};
use crate::domain::id::Id;
use crate::domain::network::Network;
use crate::notify::AccountMail;
use crate::store::entities::{account_link, user};
use crate::store::{
    AdminTask, AuditAction, NewAccountLink, Service, StoreError, Tx, UserChanges, Viewer,
};

/// How long a password reset link works: long enough to read the mail, short enough that an
/// old mailbox is no way in (OWASP Forgot Password Cheat Sheet: short-lived tokens).
pub const RESET_LINK_HOURS: i64 = 1;
/// How long an e-mail change link works.
pub const EMAIL_LINK_HOURS: i64 = 24;
/// The least time between two forgotten-password mails to one account, so that asking again
/// and again from many addresses cannot fill its mailbox.
pub const RESET_MAIL_COOLDOWN_SECONDS: i64 = 60;

/// What a link is for: its stored name, how long it works and the portal page it opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
    PasswordReset,
    EmailChange,
    /// Stops a pending address change; sent to the current address.
    EmailChangeStop,
}

impl Purpose {
    fn as_str(self) -> &'static str {
        match self {
            Purpose::PasswordReset => "password_reset",
            Purpose::EmailChange => "email_change",
            Purpose::EmailChangeStop => "email_change_stop",
        }
    }

    fn hours(self) -> i64 {
        match self {
            Purpose::PasswordReset => RESET_LINK_HOURS,
            Purpose::EmailChange | Purpose::EmailChangeStop => EMAIL_LINK_HOURS,
        }
    }

    fn page(self) -> &'static str {
        match self {
            Purpose::PasswordReset => "/portal/password/reset/",
            Purpose::EmailChange => "/portal/account/email/confirm/",
            Purpose::EmailChangeStop => "/portal/account/email/stop/",
        }
    }
}

/// A password reset by an administrator.
pub struct AdminReset {
    pub user: user::Model,
    /// The link to set a new password, for the administrator to hand to the user, when the
    /// server sends no e-mail; `None` when it was mailed. Valid once, for
    /// [`RESET_LINK_HOURS`] hours.
    pub handover: Option<String>,
}

impl Actions {
    /// Whether account links can be sent (the server has an SMTP relay).
    pub fn sends_mail(&self) -> bool {
        self.notifier.mailer().is_some()
    }

    /// Asks for a password reset link for address `email` from a client in `network`, under
    /// the login throttle of that network. The caller is told nothing, and the request does
    /// the same work for every address: it takes the network's turn and hands the address to
    /// a background task, which looks the account up and mails it a link (see
    /// [`Actions::send_password_reset`]). So neither the answer nor its timing tells which
    /// addresses have accounts (OWASP Forgot Password Cheat Sheet).
    pub fn request_password_reset(&self, email: &str, network: Network) -> ActionResult<()> {
        self.take_login_turn(network)
            .map_err(|refused| match refused {
                crate::auth::LoginError::Throttled { retry_after_secs } => {
                    ActionError::Throttled { retry_after_secs }
                }
                other => ActionError::Internal(other.into()),
            })?;
        let Ok(email) = Email::parse(email) else {
            return Ok(());
        };
        let actions = self.clone();
        let asked_at = self.store.clock().now_millis();
        tokio::spawn(async move {
            if let Err(error) = actions.send_password_reset(email, asked_at).await {
                tracing::warn!(error = %format!("{error:#}"), "a password reset request failed");
            }
        });
        Ok(())
    }

    /// Sends a password reset link to the account with address `email`, if there is an active
    /// one and none was sent in the [`RESET_MAIL_COOLDOWN_SECONDS`] before `asked_at` (the
    /// request's instant, whenever the background task gets to run).
    async fn send_password_reset(&self, email: Email, asked_at: i64) -> ActionResult<()> {
        let Some(user) = self
            .store
            .user_by_email(&Service::SignIn, email.as_str())
            .await?
        else {
            return Ok(());
        };
        if !user.activation {
            return Ok(());
        }
        let last = self
            .store
            .last_account_link_at(&user.id, Purpose::PasswordReset.as_str())
            .await?;
        if last.is_some_and(|at| asked_at - at < RESET_MAIL_COOLDOWN_SECONDS * 1000) {
            // The link sent a moment ago is still good; the answer does not say so.
            return Ok(());
        }
        let requester = Viewer {
            user_id: ANONYMOUS,
            admin: false,
        };
        let link = self
            .act(async |tx| {
                let link = self
                    .new_link(tx, &user, Purpose::PasswordReset, None)
                    .await?;
                let action = AuditAction::AccountPasswordResetRequest;
                done(link, entry(&requester, action, "user", &user.id))
            })
            .await?;
        self.mail_reset(user, link).await;
        Ok(())
    }

    /// Resets the password of the account with `id` (administrators; never their own): the
    /// current password stops working, every login ends, and the user gets a link to set a
    /// new one: by e-mail, or, on a server that sends none, from the administrator, to whom
    /// the link is handed once ([`AdminReset::handover`]; only its hash is stored). Without
    /// that, a patient who forgot the password on such a server could never log in again.
    pub async fn admin_reset_password(&self, viewer: &Viewer, id: &Id) -> ActionResult<AdminReset> {
        let task = AdminTask::ResetPasswords;
        viewer.may_lock_out(id, task).map_err(StoreError::Denied)?;
        let user = self.store.user_to_administer(viewer, id, task).await?;
        // The old password is replaced by one nobody knows, so that a leaked password stops
        // working now, not when the user gets to the mail.
        let unknown = self.auth.hasher().hash(token::generate()).await?;
        let link = self
            .act(async |tx| {
                let changes = UserChanges {
                    password_hash: Some(unknown),
                    ..UserChanges::default()
                };
                tx.update_user(id, changes).await?;
                end_logins(tx, id).await?;
                let link = self
                    .new_link(tx, &user, Purpose::PasswordReset, None)
                    .await?;
                done(
                    link,
                    entry(viewer, AuditAction::UserPasswordReset, "user", id),
                )
            })
            .await?;
        self.sessions.end_sessions_of(id).await?;
        let Some(mailer) = self.notifier.mailer() else {
            return Ok(AdminReset {
                user,
                handover: Some(link),
            });
        };
        mailer
            .send_account_link(
                &user,
                &user.email,
                AccountMail::AdminReset,
                &link,
                Purpose::PasswordReset.hours(),
                None,
            )
            .await?;
        Ok(AdminReset {
            user,
            handover: None,
        })
    }

    /// Whether `secret` is an open password reset link (the form asks before it is sent).
    pub async fn password_reset_is_open(&self, secret: &str) -> ActionResult<bool> {
        Ok(self
            .store
            .account_link_is_open(&token::hash(secret), Purpose::PasswordReset.as_str())
            .await?)
    }

    /// Sets a new password through reset link `secret`, which is spent. Every login of the
    /// account ends, and a lockout after failed logins is lifted: the mailbox proved the owner.
    pub async fn reset_password(
        &self,
        secret: &str,
        new: NewPassword,
    ) -> ActionResult<user::Model> {
        let hash = self.auth.hasher().hash(new.expose().to_owned()).await?;
        let user = self
            .act(async |tx| {
                let link = spend_link(tx, secret, Purpose::PasswordReset).await?;
                let changes = UserChanges {
                    password_hash: Some(hash),
                    ..UserChanges::default()
                };
                let user = tx.update_user(&link.user_id, changes).await?;
                lift_lockout(tx, &user).await?;
                // A pending address change asked for by whoever knew the old password ends too.
                end_logins(tx, &user.id).await?;
                let record = entry(
                    &Viewer::of(&user),
                    AuditAction::AccountPasswordReset,
                    "user",
                    &user.id,
                );
                done(user, record)
            })
            .await?;
        self.sessions.end_sessions_of(&user.id).await?;
        Ok(user)
    }

    /// Starts a change of the viewer's address to `new`: after the current password is checked
    /// (a wrong one counts as a failed login), a link is sent to the new address, and the
    /// address changes only when it is opened. The current address is told, with a link that
    /// stops the change and ends every login (see [`Actions::stop_email_change`]): someone
    /// with the password or a session cannot move the account away unnoticed.
    pub async fn request_email_change(
        &self,
        viewer: &Viewer,
        current_email: &str,
        password: &str,
        new: Email,
        network: Network,
    ) -> ActionResult<()> {
        let Some(mailer) = self.notifier.mailer() else {
            return Err(mail_off());
        };
        let user = self
            .verify_own_password(viewer, current_email, password, network)
            .await?;
        if new.as_str() == user.email {
            return Err(ActionError::invalid(
                "email: is the current address",
                "email-same",
            ));
        }
        if self
            .store
            .user_by_email(&Service::SignIn, new.as_str())
            .await?
            .is_some()
        {
            return Err(StoreError::EmailUsed.into());
        }
        let (link, stop) = self
            .act(async |tx| {
                let address = Some(new.as_str().to_owned());
                let link = self
                    .new_link(tx, &user, Purpose::EmailChange, address)
                    .await?;
                let stop = self
                    .new_link(tx, &user, Purpose::EmailChangeStop, None)
                    .await?;
                let action = AuditAction::AccountEmailChangeRequest;
                done((link, stop), entry(viewer, action, "user", &user.id))
            })
            .await?;
        mailer
            .send_account_link(
                &user,
                new.as_str(),
                AccountMail::EmailChange,
                &link,
                Purpose::EmailChange.hours(),
                None,
            )
            .await?;
        mailer
            .send_account_link(
                &user,
                &user.email,
                AccountMail::EmailChangeNotice,
                &stop,
                Purpose::EmailChangeStop.hours(),
                Some(new.as_str()),
            )
            .await?;
        Ok(())
    }

    /// Whether `secret` is an open link that stops an address change (its page asks first).
    pub async fn email_change_stop_is_open(&self, secret: &str) -> ActionResult<bool> {
        Ok(self
            .store
            .account_link_is_open(&token::hash(secret), Purpose::EmailChangeStop.as_str())
            .await?)
    }

    /// Stops a pending address change through link `secret`, sent to the current address,
    /// which is spent: every pending account link of the account is spent, every API token
    /// revoked and every portal session ended, since whoever asked for the change had the
    /// password or a session. The owner then sets a new password through a forgotten-password
    /// link, which goes to the address that was kept.
    pub async fn stop_email_change(&self, secret: &str) -> ActionResult<()> {
        let user = self
            .act(async |tx| {
                let link = spend_link(tx, secret, Purpose::EmailChangeStop).await?;
                let user = link.user_id;
                let stopped = tx
                    .spend_account_links_for(&user, Purpose::EmailChange.as_str())
                    .await?;
                end_logins(tx, &user).await?;
                let owner = Viewer {
                    user_id: user,
                    admin: false,
                };
                let record = entry(&owner, AuditAction::AccountEmailChangeStop, "user", &user)
                    .detail(format!(
                        "{stopped} pending changes stopped; every login ended"
                    ));
                done(user, record)
            })
            .await?;
        self.sessions.end_sessions_of(&user).await?;
        Ok(())
    }

    /// Confirms an address change through link `secret`, which is spent. The account's API
    /// tokens stay valid: the login name changed, not who holds them.
    pub async fn confirm_email_change(&self, secret: &str) -> ActionResult<user::Model> {
        self.act(async |tx| {
            let link = spend_link(tx, secret, Purpose::EmailChange).await?;
            let new_email = link.new_email.clone().ok_or_else(link_closed)?;
            if tx
                .user_by_email(&Service::SignIn, &new_email)
                .await?
                .is_some()
            {
                return Err(StoreError::EmailUsed.into());
            }
            let changes = UserChanges {
                email: Some(new_email),
                ..UserChanges::default()
            };
            let user = tx.update_user(&link.user_id, changes).await?;
            // The change happened: the link that would have stopped it is moot.
            tx.spend_account_links_for(&user.id, Purpose::EmailChangeStop.as_str())
                .await?;
            let owner = Viewer::of(&user);
            done(
                user.clone(),
                entry(&owner, AuditAction::AccountEmailChange, "user", &user.id),
            )
        })
        .await
    }

    /// Records a new link of `purpose` for `user` in `tx` and returns its address in the
    /// portal.
    async fn new_link(
        &self,
        tx: &Tx,
        user: &user::Model,
        purpose: Purpose,
        new_email: Option<String>,
    ) -> ActionResult<String> {
        let secret = token::generate();
        let expires_at =
            tx.clock().now_millis() + Duration::hours(purpose.hours()).num_milliseconds();
        tx.insert_account_link(NewAccountLink {
            secret_hash: token::hash(&secret),
            user_id: user.id,
            purpose: purpose.as_str(),
            new_email,
            expires_at,
        })
        .await?;
        Ok(self
            .notifier
            .portal_url(&format!("{}{secret}", purpose.page())))
    }

    /// Sends a password reset link; a failure is logged (never the link).
    async fn mail_reset(&self, user: user::Model, link: String) {
        let Some(mailer) = self.notifier.mailer() else {
            tracing::warn!(user = %user.id, "a password reset was asked for, but e-mail is off");
            return;
        };
        let hours = Purpose::PasswordReset.hours();
        if let Err(error) = mailer
            .send_account_link(
                &user,
                &user.email,
                AccountMail::PasswordReset,
                &link,
                hours,
                None,
            )
            .await
        {
            tracing::warn!(user = %user.id, error = %format!("{error:#}"), "an account link was not sent");
        }
    }
}

/// Spends the open link of `purpose` whose secret is `secret`; a used, replaced or expired
/// one is refused.
async fn spend_link(tx: &Tx, secret: &str, purpose: Purpose) -> ActionResult<account_link::Model> {
    tx.spend_account_link(&token::hash(secret), purpose.as_str())
        .await?
        .ok_or_else(link_closed)
}

fn mail_off() -> ActionError {
    ActionError::State {
        message: "e-mail is not set up on this server".into(),
        key: "mail-off",
    }
}

fn link_closed() -> ActionError {
    ActionError::State {
        message: "the link was used, replaced or has expired".into(),
        key: "account-link-closed",
    }
}

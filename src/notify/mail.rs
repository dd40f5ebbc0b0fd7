//! E-mail over SMTP (lettre, rustls): one multipart message, plain text and HTML (askama
//! templates under `templates/mail/`, which escape every value), in the reader's language. A
//! message says only that something new is ready and links to the portal: no names, no
//! results, nothing of the reader's health beyond that. A PDF goes along only when the reader
//! asked for it.

use std::time::Duration;

use anyhow::Context;
use askama::Template;
use lettre::message::header::{ContentType, HeaderName, HeaderValue};
use lettre::message::{Attachment, Mailbox, MultiPart, SinglePart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};

use crate::domain::account::Language;
use crate::domain::id::Id;
use crate::domain::notification::EventKind;
use crate::i18n::Translator;
use crate::store::entities::user;

/// The longest one message may take, from connecting to the relay's last answer.
const SEND_TIMEOUT: Duration = Duration::from_secs(60);

/// How the service sends e-mail.
#[derive(Debug, Clone)]
pub struct MailSettings {
    /// `smtp://host:port` (plain, for a relay on loopback), `smtp://host:port?tls=required`
    /// (STARTTLS) or `smtps://host:port` (TLS); user and password in the URL's user part, so
    /// `Debug` shows `[REDACTED]`.
    pub url: secrecy::SecretString,
    /// The sender, e.g. `Tacho <noreply@clinic.example>`.
    pub from: String,
}

/// One message to send.
#[derive(Debug, Clone)]
pub struct Message {
    /// The event it reports (the newest, for a digest); receivers deduplicate by it.
    pub event_id: Id,
    /// What happened: one event, or a digest's.
    pub kinds: Vec<Told>,
    /// Where the portal shows it.
    pub link: String,
    /// Where the reader changes what it receives.
    pub settings_link: String,
    /// A PDF (file name, bytes), when the reader opted in.
    pub attachment: Option<(String, Vec<u8>)>,
}

/// An event as a message tells it: what happened, and whether to the reader's own data. A
/// patient reads of its own measurements in a patient's words ("your physician reviewed"),
/// the care team in its own ("a colleague reviewed").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Told {
    pub kind: EventKind,
    pub own: bool,
}

/// What an account e-mail's link does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccountMail {
    /// Sets a new password (a forgotten one, or after an administrator's reset).
    PasswordReset,
    /// Confirms a new address; sent to that address.
    EmailChange,
    /// Sets a new password after an administrator reset the old one.
    AdminReset,
    /// Tells the current address that a change to another was asked for, with a link that
    /// stops it.
    EmailChangeNotice,
}

impl AccountMail {
    /// The part of its message names after `mail-subject-` and `mail-body-`.
    fn key(self) -> &'static str {
        match self {
            AccountMail::PasswordReset => "password-reset",
            AccountMail::EmailChange => "email-change",
            AccountMail::AdminReset => "admin-reset",
            AccountMail::EmailChangeNotice => "email-change-notice",
        }
    }
}

/// Sends messages through one SMTP relay.
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    /// The right-hand side of Message-IDs.
    domain: String,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Mailer")
    }
}

impl Mailer {
    /// A mailer for `settings`; the URL and the sender are checked here, at start-up.
    pub fn new(settings: &MailSettings) -> anyhow::Result<Mailer> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(
            secrecy::ExposeSecret::expose_secret(&settings.url),
        )
        .context("TACHO_SMTP_URL is not an smtp:// or smtps:// URL")?
        .timeout(Some(Duration::from_secs(20)))
        .build();
        let from: Mailbox = settings
            .from
            .parse()
            .context("TACHO_MAIL_FROM is not an e-mail address")?;
        let domain = from.email.domain().to_owned();
        Ok(Mailer {
            transport,
            from,
            domain,
        })
    }

    /// Sends `message` to `reader`.
    pub async fn send(&self, reader: &user::Model, message: &Message) -> anyhow::Result<()> {
        let to: Mailbox = reader
            .email
            .parse()
            .context("the reader's stored address is not an e-mail address")?;
        let email = self.build(reader, to, message)?;
        self.deliver(email).await
    }

    /// Hands `email` to the relay.
    async fn deliver(&self, email: lettre::Message) -> anyhow::Result<()> {
        // lettre bounds only the connect; a relay that stops answering mid-session would hold
        // the worker for as long as the relay keeps the connection open.
        tokio::time::timeout(SEND_TIMEOUT, self.transport.send(email))
            .await
            .context("the SMTP relay did not answer in time")?
            .context("the SMTP relay refused the message")?;
        Ok(())
    }

    /// Sends `reader` the single-use `link` of an account e-mail, to `address` (the account's
    /// own, or the new one to confirm), valid for `hours`. It names no health data, and says
    /// what to do when the reader did not ask for it.
    pub async fn send_account_link(
        &self,
        reader: &user::Model,
        address: &str,
        purpose: AccountMail,
        link: &str,
        hours: i64,
        new_address: Option<&str>,
    ) -> anyhow::Result<()> {
        let to: Mailbox = address
            .parse()
            .context("the address is not an e-mail address")?;
        let language = Language::or_english(Some(&reader.language));
        let tr = Translator::new(language);
        let greeting = tr.text_with("mail-greeting", &[("name", reader.first_name.clone())]);
        let mut body = tr.text_with_count(&format!("mail-body-{}", purpose.key()), "hours", hours);
        if let Some(address) = new_address {
            body.push(' ');
            body.push_str(&tr.text_with("mail-new-address", &[("address", address.to_owned())]));
        }
        let action = tr.text(&format!("mail-action-{}", purpose.key()));
        // Whoever did not ask for a link can ignore it; an administrator's reset has already
        // happened, so that mail says whom to ask instead.
        let ignore = match purpose {
            AccountMail::AdminReset => tr.text("mail-ask-admin"),
            AccountMail::EmailChangeNotice => tr.text("mail-was-you"),
            AccountMail::PasswordReset | AccountMail::EmailChange => tr.text("mail-not-you"),
        };
        let plain = format!("{greeting}\n\n{body}\n\n{action}: {link}\n\n{ignore}\n");
        let html = AccountHtml {
            lang: language.code(),
            dir: language.direction(),
            greeting: &greeting,
            body: &body,
            link,
            action: &action,
            ignore: &ignore,
        }
        .render()?;
        let email = lettre::Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(tr.text(&format!("mail-subject-{}", purpose.key())))
            .message_id(Some(format!("<{}@{}>", Id::generate(), self.domain)))
            .header(ContentLanguage(language.code().to_owned()))
            .multipart(
                MultiPart::alternative()
                    .singlepart(SinglePart::plain(plain))
                    .singlepart(SinglePart::html(html)),
            )?;
        self.deliver(email).await
    }

    fn build(
        &self,
        reader: &user::Model,
        to: Mailbox,
        message: &Message,
    ) -> anyhow::Result<lettre::Message> {
        let language = Language::or_english(Some(&reader.language));
        let text = Text::new(Translator::new(language), reader, message);
        let alternative = MultiPart::alternative()
            .singlepart(SinglePart::plain(text.plain()))
            .singlepart(SinglePart::html(text.html()?));
        let body = match &message.attachment {
            Some((name, bytes)) => MultiPart::mixed().multipart(alternative).singlepart(
                Attachment::new(name.clone())
                    .body(bytes.clone(), ContentType::parse("application/pdf")?),
            ),
            None => alternative,
        };
        let mut email = lettre::Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(text.subject())
            .message_id(Some(format!(
                "<{}.{}@{}>",
                message.event_id, reader.id, self.domain
            )))
            .header(ContentLanguage(language.code().to_owned()))
            .multipart(body)?;
        email.headers_mut().insert_raw(HeaderValue::new(
            HeaderName::new_from_ascii_str("X-Tacho-Event-Id"),
            message.event_id.to_string(),
        ));
        Ok(email)
    }
}

/// The HTML part of an account e-mail.
#[derive(Template)]
#[template(path = "mail/account.html")]
struct AccountHtml<'a> {
    lang: &'a str,
    dir: &'a str,
    greeting: &'a str,
    body: &'a str,
    link: &'a str,
    action: &'a str,
    ignore: &'a str,
}

/// The HTML part of an event's (or a digest's) e-mail.
#[derive(Template)]
#[template(path = "mail/event.html")]
struct EventHtml<'a> {
    lang: &'a str,
    dir: &'a str,
    greeting: String,
    /// The paragraphs between the greeting and the link.
    lines: Vec<String>,
    link: &'a str,
    open: String,
    screening: String,
    settings_link: &'a str,
    settings: String,
}

/// The `Content-Language` header (RFC 3282).
#[derive(Debug, Clone)]
struct ContentLanguage(String);

impl lettre::message::header::Header for ContentLanguage {
    fn name() -> HeaderName {
        HeaderName::new_from_ascii_str("Content-Language")
    }

    fn parse(s: &str) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        Ok(ContentLanguage(s.to_owned()))
    }

    fn display(&self) -> HeaderValue {
        HeaderValue::new(Self::name(), self.0.clone())
    }
}

/// A message's words in the reader's language.
struct Text<'a> {
    tr: Translator,
    reader: &'a user::Model,
    message: &'a Message,
}

impl<'a> Text<'a> {
    fn new(tr: Translator, reader: &'a user::Model, message: &'a Message) -> Self {
        Text {
            tr,
            reader,
            message,
        }
    }

    fn digest(&self) -> bool {
        self.message.kinds.len() > 1
    }

    fn subject(&self) -> String {
        match self.message.kinds.as_slice() {
            [told] => self.tr.text(&format!("mail-subject-{}", key(told.kind))),
            kinds => self
                .tr
                .text_with("mail-digest-subject", &[("count", kinds.len().to_string())]),
        }
    }

    /// The paragraphs between the greeting and the link.
    fn lines(&self) -> Vec<String> {
        if self.digest() {
            let mut lines = vec![self.tr.text_with(
                "mail-digest-intro",
                &[("count", self.message.kinds.len().to_string())],
            )];
            lines.extend(
                self.message
                    .kinds
                    .iter()
                    .map(|t| format!("• {}", self.tr.text(&t.kind.message_key_for(t.own)))),
            );
            lines
        } else {
            self.message
                .kinds
                .iter()
                .map(|t| {
                    let staff = !t.own && t.kind == EventKind::MeasurementReviewed;
                    let suffix = if staff { "-staff" } else { "" };
                    self.tr.text(&format!("mail-body-{}{suffix}", key(t.kind)))
                })
                .collect()
        }
    }

    fn greeting(&self) -> String {
        self.tr
            .text_with("mail-greeting", &[("name", self.reader.first_name.clone())])
    }

    fn plain(&self) -> String {
        let mut out = format!("{}\n\n", self.greeting());
        for line in self.lines() {
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str(&format!(
            "\n{}: {}\n\n{}\n\n{}: {}\n",
            self.tr.text("mail-open"),
            self.message.link,
            self.tr.text("mail-screening"),
            self.tr.text("mail-settings"),
            self.message.settings_link
        ));
        out
    }

    fn html(&self) -> askama::Result<String> {
        EventHtml {
            lang: self.tr.language().code(),
            dir: self.tr.language().direction(),
            greeting: self.greeting(),
            lines: self.lines(),
            link: &self.message.link,
            open: self.tr.text("mail-open"),
            screening: self.tr.text("mail-screening"),
            settings_link: &self.message.settings_link,
            settings: self.tr.text("mail-settings"),
        }
        .render()
    }
}

/// The part of a kind's message names after `mail-subject-` and `mail-body-`.
fn key(kind: EventKind) -> String {
    kind.message_key().trim_start_matches("event-").to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a name or a link could smuggle into the HTML, and how it must read there.
    const HOSTILE: &str = "<b>\"Tom\" & 'Jerry'</b>";
    const ESCAPED: &str = "&#60;b&#62;&#34;Tom&#34; &#38; &#39;Jerry&#39;&#60;/b&#62;";

    fn reader(first_name: &str) -> user::Model {
        user::Model {
            id: Id::generate(),
            email: "tom@tacho.test".into(),
            password_hash: String::new(),
            first_name: first_name.into(),
            last_name: "Tester".into(),
            phone_number: None,
            language: "EN".into(),
            time_zone: "Europe/Brussels".into(),
            activation: true,
            roles: serde_json::json!(["patient"]),
            profile_image: None,
            failed_count: 0,
            last_failed_timestamp: None,
            password_change_due: false,
            legal_hold: false,
            erased_timestamp: None,
            deactivation_timestamp: None,
            creation_timestamp: 0,
            update_timestamp: 0,
        }
    }

    #[test]
    fn a_review_is_told_in_the_patients_words_or_the_care_teams() {
        let reader = reader("Jan");
        let told = |own| Message {
            event_id: Id::generate(),
            kinds: vec![Told {
                kind: EventKind::MeasurementReviewed,
                own,
            }],
            link: "https://tacho.test/portal/".into(),
            settings_link: "https://tacho.test/portal/settings".into(),
            attachment: None,
        };
        let lines = |own| {
            let message = told(own);
            Text::new(Translator::new(Language::En), &reader, &message).lines()
        };
        assert!(lines(true)[0].starts_with("Your physician has reviewed"));
        assert!(lines(false)[0].starts_with("A colleague has reviewed"));
    }

    #[test]
    fn html_escapes_what_a_name_could_smuggle_in() {
        let reader = reader(HOSTILE);
        let message = Message {
            event_id: Id::generate(),
            kinds: vec![
                Told {
                    kind: EventKind::MeasurementAnalysed,
                    own: true,
                },
                Told {
                    kind: EventKind::MeasurementReviewed,
                    own: true,
                },
            ],
            link: format!("https://tacho.test/portal/?a=1&b={HOSTILE}"),
            settings_link: format!("https://tacho.test/portal/settings?{HOSTILE}"),
            attachment: None,
        };
        let html = Text::new(Translator::new(Language::En), &reader, &message)
            .html()
            .unwrap();
        assert!(!html.contains("<b>") && !html.contains("\"Tom"), "{html}");
        assert!(html.contains(ESCAPED), "the name, escaped: {html}");
        assert!(
            html.contains(&format!(
                "<a href=\"https://tacho.test/portal/?a=1&#38;b={ESCAPED}\">"
            )),
            "the link, escaped: {html}"
        );
        assert!(html.contains(&format!(
            "<a href=\"https://tacho.test/portal/settings?{ESCAPED}\">"
        )));
        assert_eq!(html.matches("<p>• ").count(), 2, "a digest's lines: {html}");
        assert!(html.starts_with("<!doctype html>\n<html lang=\"en\" dir=\"ltr\">"));
    }

    #[test]
    fn an_account_mail_escapes_its_link_and_words() {
        let html = AccountHtml {
            lang: "ar",
            dir: "rtl",
            greeting: HOSTILE,
            body: HOSTILE,
            link: HOSTILE,
            action: HOSTILE,
            ignore: HOSTILE,
        }
        .render()
        .unwrap();
        assert_eq!(
            html,
            format!(
                "<!doctype html>\n<html lang=\"ar\" dir=\"rtl\">\n<body>\n\
                 <p>{ESCAPED}</p>\n<p>{ESCAPED}</p>\n\
                 <p><a href=\"{ESCAPED}\">{ESCAPED}</a></p>\n\
                 <p><small>{ESCAPED}</small></p>\n\
                 </body>\n</html>"
            )
        );
    }
}

//! Who is asking and in which language: the `Visitor` (maybe anonymous) and `Member` (logged
//! in) extractors, the CSRF token of the session, and `CsrfForm`, the only way a portal
//! handler reads a state-changing request.

use std::future::Future;
use std::pin::Pin;

use actix_session::{Session, SessionExt};
use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::web::Data;
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use chrono_tz::Tz;
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use super::error::WebError;
use super::session::{CSRF_KEY, LOGIN_AT_KEY, USER_KEY, cookie_name};
use crate::auth::token::same_secret;
use crate::config::Settings;
use crate::domain::account::{Language, TimeZone};
use crate::domain::id::Id;
use crate::domain::time::local_time;
use crate::i18n::Translator;
use crate::reports::format;
use crate::routes::AppState;
use crate::store::entities::user;
use crate::store::{Service, UserRecord, Viewer};

/// Largest form body the portal reads.
const FORM_LIMIT: usize = 64 * 1024;
/// Header htmx sends the CSRF token in (set once on `<body hx-headers>`).
pub const CSRF_HEADER: &str = "X-CSRF-Token";

/// The language of a request before login: the first supported one of `Accept-Language`.
pub fn accepted_language(req: &HttpRequest) -> Language {
    let header = req
        .headers()
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let mut ranked: Vec<(f32, Language)> = header
        .split(',')
        .enumerate()
        .filter_map(|(i, part)| {
            let mut pieces = part.trim().split(';');
            let tag = pieces.next()?.trim();
            let primary = tag.split(['-', '_']).next()?;
            let language = Language::parse(primary)?;
            let quality = pieces
                .find_map(|p| p.trim().strip_prefix("q="))
                .and_then(|q| q.parse::<f32>().ok())
                .unwrap_or(1.0);
            // Earlier entries win ties, as the header's order expresses preference too.
            Some((quality - i as f32 * 1e-4, language))
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    ranked.first().map(|(_, l)| *l).unwrap_or(Language::En)
}

/// A new CSRF token: 32 random bytes in hex.
fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::fill(&mut bytes);
    hex::encode(bytes)
}

/// The cookie that carries an anonymous visitor's CSRF token (the login form's), so that no
/// session is stored for a visitor who has not logged in: the form must send back the value
/// of this cookie, which another site can neither read nor set (double submit, OWASP CSRF
/// prevention cheat sheet).
const ANONYMOUS_CSRF_COOKIE: &str = "tacho_csrf";

/// A CSRF cookie to set on the answer, put in the request's extensions by [`Visitor`].
#[derive(Debug, Clone)]
pub struct NewCsrfCookie(pub String);

impl NewCsrfCookie {
    /// The `Set-Cookie` value: HttpOnly, SameSite=Strict, for the whole host, `Secure` and
    /// `__Host-` over HTTPS.
    pub fn header(&self, settings: &Settings) -> String {
        let secure = if super::session::is_https(settings) {
            "; Secure"
        } else {
            ""
        };
        format!(
            "{}={}; Path=/; HttpOnly; SameSite=Strict{secure}",
            cookie_name(settings, ANONYMOUS_CSRF_COOKIE),
            self.0
        )
    }
}

/// The anonymous CSRF token the request's cookie carries, if it looks like one.
fn anonymous_csrf(req: &HttpRequest, settings: &Settings) -> Option<String> {
    req.cookie(&cookie_name(settings, ANONYMOUS_CSRF_COOKIE))
        .map(|c| c.value().to_owned())
        .filter(|v| v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Anyone asking for a portal page.
#[derive(Clone)]
pub struct Visitor {
    pub session: Session,
    pub user: Option<UserRecord>,
    pub tr: Translator,
    pub zone: Tz,
    /// Whether htmx made the request (`HX-Request`): answer with a fragment.
    pub htmx: bool,
    pub csrf: String,
    pub state: Data<AppState>,
}

impl Visitor {
    async fn extract(req: HttpRequest) -> Result<Self, WebError> {
        let state = req
            .app_data::<Data<AppState>>()
            .cloned()
            .ok_or_else(|| WebError::Internal(anyhow::anyhow!("application state missing")))?;
        let session = req.get_session();
        let mut user = None;
        if let Some(id) = session.get::<Id>(USER_KEY)? {
            let now = state.store.clock().now_millis();
            let absolute =
                i64::try_from(state.settings.session_ttl.as_millis()).unwrap_or(i64::MAX);
            let current = session
                .get::<i64>(LOGIN_AT_KEY)?
                .is_some_and(|at| now.saturating_sub(at) < absolute);
            match state.store.user_by_id(&Service::SignIn, &id).await? {
                // A deactivated user's session ends at its next request, whatever the store,
                // and every session ends TACHO_SESSION_TTL after its login.
                Some(found) if found.activation && current => {
                    user = Some(state.store.user_record(found).await?);
                }
                _ => session.purge(),
            }
        }
        let language = match &user {
            Some(record) => Language::or_english(Some(&record.user.language)),
            None => accepted_language(&req),
        };
        let zone = user
            .as_ref()
            .and_then(|r| TimeZone::parse(&r.user.time_zone))
            .map(|z| z.0)
            .unwrap_or(Tz::UTC);
        let csrf = match (&user, session.get::<String>(CSRF_KEY)?) {
            (Some(_), Some(token)) => token,
            (Some(_), None) => {
                let token = new_token();
                session.insert(CSRF_KEY, &token)?;
                token
            }
            (None, _) => match anonymous_csrf(&req, &state.settings) {
                Some(token) => token,
                None => {
                    let token = new_token();
                    req.extensions_mut().insert(NewCsrfCookie(token.clone()));
                    token
                }
            },
        };
        let tr = Translator::new(language);
        req.extensions_mut().insert(tr.clone());
        Ok(Visitor {
            session,
            user,
            tr,
            zone,
            htmx: req.headers().contains_key("HX-Request"),
            csrf,
            state,
        })
    }

    /// A date and time in the visitor's zone and language.
    pub fn datetime(&self, millis: i64) -> String {
        match local_time(self.zone, millis) {
            Some(at) => format!(
                "{} {}",
                format::short_date(self.tr.language(), at.date_naive()),
                format::time(at)
            ),
            None => String::new(),
        }
    }

    /// The instant as the clock in zone `patient_zone` showed it, as `datetime` writes it, when
    /// that clock differs from the visitor's at that instant; `None` when they agree (or the
    /// zone is unknown). A physician in Brussels reads a patient's 11:07 in Dubai as 08:07,
    /// and needs to see both.
    pub fn patient_time(&self, millis: i64, patient_zone: &str) -> Option<(String, Tz)> {
        let zone: Tz = patient_zone.parse().ok()?;
        let theirs = local_time(zone, millis)?;
        let ours = local_time(self.zone, millis)?;
        if chrono::Offset::fix(theirs.offset()) == chrono::Offset::fix(ours.offset()) {
            return None;
        }
        let text = format!(
            "{} {}",
            format::short_date(self.tr.language(), theirs.date_naive()),
            format::time(theirs)
        );
        Some((text, zone))
    }

    /// A calendar date in the visitor's zone and language.
    pub fn date(&self, millis: i64) -> String {
        match local_time(self.zone, millis) {
            Some(at) => format::short_date(self.tr.language(), at.date_naive()),
            None => String::new(),
        }
    }

    /// [`Visitor::last_day`] as a date field takes it: `YYYY-MM-DD`.
    pub fn last_day_iso(&self, end_millis: i64) -> String {
        local_time(self.zone, end_millis.saturating_sub(1))
            .map(|at| at.date_naive().format("%Y-%m-%d").to_string())
            .unwrap_or_default()
    }

    /// Whether the visitor is a patient: enlisted as one, or neither staff nor administrator.
    /// Only patients see their own measurements, profile and reports in the menu, and read
    /// what happens to them in a patient's words.
    pub fn is_patient(&self) -> bool {
        self.user.as_ref().is_some_and(|r| {
            !r.patient_enlistments.is_empty()
                || (r.staff_enlistments.is_empty() && !r.user.is_admin())
        })
    }

    /// The last local day of a period that ends at `end_millis`: the end is the first instant
    /// after it (a prescription until 31 January ends at midnight, 1 February), so the day
    /// shown is the one of the instant before.
    pub fn last_day(&self, end_millis: i64) -> String {
        self.date(end_millis.saturating_sub(1))
    }
}

impl FromRequest for Visitor {
    type Error = WebError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, WebError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        Box::pin(Visitor::extract(req.clone()))
    }
}

/// A logged-in visitor.
#[derive(Clone)]
pub struct Member {
    pub visitor: Visitor,
    pub record: UserRecord,
}

impl Member {
    /// The account.
    pub fn user(&self) -> &user::Model {
        &self.record.user
    }

    /// The user's id.
    pub fn id(&self) -> &Id {
        &self.record.user.id
    }

    /// The member as a viewer for the store's visibility and access rules.
    pub fn viewer(&self) -> Viewer {
        Viewer::of(self.user())
    }
}

impl std::ops::Deref for Member {
    type Target = Visitor;

    fn deref(&self) -> &Visitor {
        &self.visitor
    }
}

impl FromRequest for Member {
    type Error = WebError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, WebError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let visitor = Visitor::extract(req.clone()).await?;
            let record = visitor.user.clone().ok_or(WebError::LoginRequired)?;
            if record.user.password_change_due
                && !super::error::allowed_before_password_change(req.method(), req.path())
            {
                return Err(WebError::PasswordChangeDue { htmx: visitor.htmx });
            }
            Ok(Member { visitor, record })
        })
    }
}

/// Whether the request comes from this site: `Origin` (or, without it, `Referer`) must name
/// this server when present. Browsers send `Origin` with every cross-site form post.
fn same_origin(req: &HttpRequest, base_url: &str) -> bool {
    let info = req.connection_info();
    let here = format!("{}://{}", info.scheme(), info.host());
    let matches = |claimed: &str| {
        let claimed = claimed.trim_end_matches('/');
        claimed.eq_ignore_ascii_case(&here) || claimed.eq_ignore_ascii_case(base_url)
    };
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        return origin.to_str().is_ok_and(matches);
    }
    if let Some(referer) = req.headers().get(header::REFERER) {
        let Ok(referer) = referer.to_str() else {
            return false;
        };
        let origin: String = match url_origin(referer) {
            Some(origin) => origin,
            None => return false,
        };
        return matches(&origin);
    }
    true
}

/// `scheme://host[:port]` of an absolute URL.
fn url_origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let host = rest.split(['/', '?', '#']).next()?;
    Some(format!("{scheme}://{host}"))
}

/// A form posted from a portal page: same origin, carrying the session's CSRF token (form
/// field `csrf` or header `X-CSRF-Token`), then parsed into `T`.
pub struct CsrfForm<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for CsrfForm<T> {
    type Error = WebError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, WebError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let mut payload = payload.take();
        Box::pin(async move {
            let base_url = req
                .app_data::<Data<AppState>>()
                .map(|s| s.settings.base_url.clone())
                .unwrap_or_default();
            if !same_origin(&req, &base_url) {
                return Err(WebError::Csrf);
            }
            let mut body = Vec::new();
            while let Some(chunk) = payload.next().await {
                let chunk = chunk.map_err(|_| WebError::BadRequest("error-bad-form"))?;
                if body.len() + chunk.len() > FORM_LIMIT {
                    return Err(WebError::BadRequest("error-bad-form"));
                }
                body.extend_from_slice(&chunk);
            }
            let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(&body)
                .map_err(|_| WebError::BadRequest("error-bad-form"))?;
            let sent = req
                .headers()
                .get(CSRF_HEADER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
                .or_else(|| {
                    pairs
                        .iter()
                        .find(|(k, _)| k == "csrf")
                        .map(|(_, v)| v.clone())
                });
            // A logged-in session holds its token; an anonymous visitor's is in its cookie.
            let session = req.get_session();
            let expected = if session.get::<Id>(USER_KEY)?.is_some() {
                session.get::<String>(CSRF_KEY)?
            } else {
                req.app_data::<Data<AppState>>()
                    .and_then(|state| anonymous_csrf(&req, &state.settings))
            };
            match (sent, expected) {
                (Some(sent), Some(expected)) if same_secret(&sent, &expected) => {}
                _ => return Err(WebError::Csrf),
            }
            let value = serde_urlencoded::from_bytes(&body)
                .map_err(|_| WebError::BadRequest("error-bad-form"))?;
            Ok(CsrfForm(value))
        })
    }
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    #[test]
    fn accept_language_picks_the_best_supported_language() {
        let pick = |header: &str| {
            accepted_language(
                &TestRequest::default()
                    .insert_header((header::ACCEPT_LANGUAGE, header))
                    .to_http_request(),
            )
        };
        assert_eq!(pick("ar-AE,ar;q=0.9,en;q=0.5"), Language::Ar);
        assert_eq!(pick("pt-BR, de;q=0.8, fr;q=0.9"), Language::Fr);
        assert_eq!(pick("xx, zh-CN"), Language::Zh);
        assert_eq!(pick(""), Language::En);
        assert_eq!(pick("pt"), Language::En);
    }

    #[test]
    fn origins_are_compared_by_scheme_and_host() {
        assert_eq!(
            url_origin("https://tacho.example/portal/x?y").as_deref(),
            Some("https://tacho.example")
        );
        assert!(url_origin("not a url").is_none());
    }
}

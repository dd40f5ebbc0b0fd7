//! What every portal page shares: the layout data (`Chrome`), rendering a template into a
//! response, security headers, and turning `WebError`s into translated pages or toasts.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpResponse};
use askama::Template;

use super::context::{Visitor, accepted_language};
use super::error::{ErrorPage, LoginRedirect, WebError, page_to_return_to};
use crate::domain::person_name::full_name;
use crate::i18n::Translator;

/// Scripts only from this origin (no inline script), no framing, no plug-ins.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// Layout data of every page.
pub struct Chrome {
    pub tr: Translator,
    pub lang: &'static str,
    pub dir: &'static str,
    pub csrf: String,
    pub user_name: Option<String>,
    /// The signed-in account's id, or empty: a form kept in the tab when its session ended is
    /// put back only for the same account.
    pub account: String,
    /// The user must choose its own password first: the menu is not shown, since every page
    /// but the account page would lead back to it.
    pub password_due: bool,
    pub admin: bool,
    pub staff: bool,
    /// Whether the user is a patient: enlisted as one, or neither staff nor administrator.
    /// Only patients see their own measurements, profile and reports in the menu.
    pub patient: bool,
    /// The navigation entry to highlight.
    pub section: &'static str,
    /// The page title's message key.
    pub title_key: &'static str,
    /// What the page is about (a patient's name, a measurement's time), put before the title.
    pub subject: Option<String>,
}

impl Chrome {
    /// The chrome of a page for someone not logged in: no menu, no name.
    pub fn anonymous(tr: Translator, title_key: &'static str) -> Self {
        Chrome {
            lang: tr.language().code(),
            dir: tr.language().direction(),
            tr,
            csrf: String::new(),
            user_name: None,
            account: String::new(),
            password_due: false,
            admin: false,
            staff: false,
            patient: false,
            section: "",
            title_key,
            subject: None,
        }
    }

    /// The chrome of a page in `section` titled by message `title_key`.
    pub fn new(visitor: &Visitor, section: &'static str, title_key: &'static str) -> Self {
        let user = visitor.user.as_ref();
        Chrome {
            tr: visitor.tr.clone(),
            lang: visitor.tr.language().code(),
            dir: visitor.tr.language().direction(),
            csrf: visitor.csrf.clone(),
            user_name: user.map(|r| full_name(&r.user.first_name, &r.user.last_name)),
            account: user.map(|r| r.user.id.to_string()).unwrap_or_default(),
            password_due: user.is_some_and(|r| r.user.password_change_due),
            admin: user.is_some_and(|r| r.user.is_admin()),
            staff: user.is_some_and(|r| !r.staff_enlistments.is_empty()),
            patient: visitor.is_patient(),
            section,
            title_key,
            subject: None,
        }
    }

    /// The same chrome, its title naming `subject` too.
    pub fn about(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    /// The address of the static file `name` (`portal.css`), which names its content.
    pub fn asset(&self, name: &str) -> &'static str {
        super::assets::path(name)
    }

    /// The message `key` in the page's language.
    pub fn t(&self, key: &str) -> String {
        self.tr.text(key)
    }

    /// The message `key` with its `count` (and the plural it picks) in the page's language.
    pub fn t_count(&self, key: &str, count: u64) -> String {
        self.tr
            .text_with_count(key, "count", i64::try_from(count).unwrap_or(i64::MAX))
    }

    /// "Page 2 of 5 (93)" in the page's language.
    pub fn position(&self, pager: &super::view::Pager) -> String {
        let key = if pager.more {
            "pager-position-more"
        } else {
            "pager-position"
        };
        self.tr.text_with(
            key,
            &[
                ("page", pager.page.to_string()),
                ("pages", pager.pages.to_string()),
                ("total", pager.total.to_string()),
            ],
        )
    }

    /// `current` when `section` is this page's, for `aria-current`.
    pub fn current(&self, section: &str) -> &'static str {
        if self.section == section {
            "page"
        } else {
            "false"
        }
    }
}

/// A rendered template as an HTML response.
pub fn html(template: &impl Template) -> Result<HttpResponse, WebError> {
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(template.render()?))
}

/// A redirect after a form post (303, so the browser follows with GET).
pub fn see_other(location: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, location.to_owned()))
        .finish()
}

#[derive(Template)]
#[template(path = "web/error.html")]
struct ErrorTemplate {
    c: Chrome,
    status: u16,
    message: String,
}

#[derive(Template)]
#[template(path = "web/toast.html")]
struct ToastTemplate {
    message: String,
}

/// The way to the login page for a request that needed a session, with the page to come back
/// to: the page asked for, or for htmx (whose request a redirect would answer with the login
/// page inside the page) the page it was sent from, left whole through `HX-Redirect`.
fn back_after_login(res: ServiceResponse<BoxBody>, htmx: bool) -> ServiceResponse<BoxBody> {
    let req = res.request();
    let asked = if htmx {
        req.headers()
            .get("HX-Current-URL")
            .and_then(|v| v.to_str().ok())
            .and_then(|url| url.find("/portal/").map(|at| url[at..].to_owned()))
    } else if req.method() == actix_web::http::Method::GET {
        Some(
            req.uri()
                .path_and_query()
                .map_or(req.path(), |p| p.as_str())
                .to_owned(),
        )
    } else {
        None
    };
    let login = match asked.as_deref().and_then(page_to_return_to) {
        Some(next) => format!(
            "/portal/login?next={}",
            percent_encoding::utf8_percent_encode(next, percent_encoding::NON_ALPHANUMERIC)
        ),
        None => "/portal/login".to_owned(),
    };
    let mut response = if htmx {
        HttpResponse::Ok().finish()
    } else {
        see_other(&login)
    };
    if let Ok(value) = HeaderValue::from_str(&login) {
        response
            .headers_mut()
            .insert(header::HeaderName::from_static("hx-redirect"), value);
    }
    secure(response.headers_mut());
    res.into_response(response)
}

/// The portal's security headers, on every page it answers.
fn secure(headers: &mut actix_web::http::header::HeaderMap) {
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    // Pages show personal data: never keep them in shared or back-button caches.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

/// A translated error page for a person who reached Tacho outside the portal's routes (the
/// recipient of a shared link that is no longer open): the page without a menu, in the
/// language the browser asks for, with the portal's security headers.
pub fn error_page_outside_portal(
    req: &actix_web::HttpRequest,
    status: actix_web::http::StatusCode,
    message_key: &'static str,
) -> HttpResponse {
    let c = Chrome::anonymous(Translator::new(accepted_language(req)), "error-title");
    let message = c.tr.text(message_key);
    let body = ErrorTemplate {
        c,
        status: status.as_u16(),
        message,
    }
    .render()
    .unwrap_or_else(|e| {
        tracing::error!(error = %e, "the error page did not render");
        message_key.to_owned()
    });
    let mut response = HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .body(body);
    secure(response.headers_mut());
    response
}

/// Wraps every portal request: security headers on every answer, and error markers rendered
/// as a translated page (or a toast for htmx, retargeted to the page's toast area).
pub async fn portal_middleware(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let htmx = req.headers().contains_key("HX-Request");
    let res = next.call(req).await?.map_into_boxed_body();
    // The anonymous visitor's CSRF cookie, when the page handed out a new token.
    let new_csrf_cookie = res
        .request()
        .extensions()
        .get::<super::context::NewCsrfCookie>()
        .cloned()
        .zip(
            res.request()
                .app_data::<actix_web::web::Data<crate::routes::AppState>>(),
        )
        .map(|(cookie, state)| cookie.header(&state.settings));
    if res.response().extensions().get::<LoginRedirect>().is_some() {
        return Ok(back_after_login(res, htmx));
    }
    let marker = res.response().extensions().get::<ErrorPage>().copied();
    let mut res = match marker {
        Some(page) => {
            let status = res.status();
            let tr = res
                .request()
                .extensions()
                .get::<Translator>()
                .cloned()
                .unwrap_or_else(|| Translator::new(accepted_language(res.request())));
            let body = if htmx {
                ToastTemplate {
                    message: tr.text(page.message_key),
                }
                .render()
            } else {
                // The whole chrome (menu, name, logout) in the visitor's own language, as on
                // any other page, when the session says who it is; a request that never reached
                // a handler (an unknown address) has not looked yet.
                let visitor = <Visitor as actix_web::FromRequest>::extract(res.request())
                    .await
                    .ok();
                let c = match visitor {
                    Some(visitor) => Chrome::new(&visitor, "", "error-title"),
                    None => Chrome::anonymous(tr, "error-title"),
                };
                let message = c.tr.text(page.message_key);
                ErrorTemplate {
                    c,
                    status: status.as_u16(),
                    message,
                }
                .render()
            }
            .map_err(|e| WebError::Internal(anyhow::anyhow!("template: {e}")))?;
            let mut response = HttpResponse::build(status)
                .content_type("text/html; charset=utf-8")
                .body(body);
            // When to come back is the handler's to say; the page keeps it.
            if let Some(after) = res.headers().get(header::RETRY_AFTER) {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, after.clone());
            }
            if htmx {
                response.headers_mut().insert(
                    header::HeaderName::from_static("hx-retarget"),
                    HeaderValue::from_static("#toast"),
                );
                response.headers_mut().insert(
                    header::HeaderName::from_static("hx-reswap"),
                    HeaderValue::from_static("innerHTML"),
                );
            }
            res.into_response(response)
        }
        None => res,
    };
    let headers = res.headers_mut();
    secure(headers);
    if let Some(cookie) = new_csrf_cookie
        && let Ok(value) = HeaderValue::from_str(&cookie)
    {
        headers.append(header::SET_COOKIE, value);
    }
    headers.insert(
        header::VARY,
        HeaderValue::from_static("HX-Request, Cookie, Accept-Language"),
    );
    Ok(res)
}

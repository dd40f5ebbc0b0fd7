//! The portal: server-rendered pages (askama) for patients, physicians and administrators,
//! with htmx fragments where a page updates in place. Everything lives under `/portal`, behind
//! server-side sessions; static assets are embedded in the binary and served from `/static`.

pub mod account;
pub mod admin;
pub mod admin_notifications;
pub mod auth;
pub mod chrome;
pub mod context;
#[cfg(test)]
mod contrast;
pub mod error;
pub mod measurements;
pub mod notifications;
pub mod password;
pub mod patients;
pub mod profile;
pub mod reports;
pub mod review;
pub mod session;
pub mod trends;
pub mod view;
pub mod worklist;
pub mod zones;

use actix_session::SessionMiddleware;
use actix_web::http::header;
use actix_web::middleware::from_fn;
use actix_web::{HttpResponse, web};

use error::WebError;
use session::PortalSessions;

/// A file embedded in the binary, served with a long cache lifetime (names change with
/// their contents only on upgrade, hence the revalidation after a day).
fn asset(body: &'static [u8], content_type: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header((header::CACHE_CONTROL, "public, max-age=86400"))
        .body(body)
}

/// The portal's routes; `sessions` is the session middleware built for this worker.
pub fn configure(cfg: &mut web::ServiceConfig, sessions: SessionMiddleware<PortalSessions>) {
    cfg.route(
        "/",
        web::get().to(|| async { chrome::see_other("/portal/") }),
    )
    .route(
        "/static/htmx.min.js",
        web::get().to(|| async {
            asset(
                include_bytes!("../../../static/htmx.min.js"),
                "text/javascript; charset=utf-8",
            )
        }),
    )
    .route(
        "/static/portal.js",
        web::get().to(|| async {
            asset(
                include_bytes!("../../../static/portal.js"),
                "text/javascript; charset=utf-8",
            )
        }),
    )
    .route(
        "/static/portal.css",
        web::get().to(|| async {
            asset(
                include_bytes!("../../../static/portal.css"),
                "text/css; charset=utf-8",
            )
        }),
    )
    .route(
        "/portal",
        web::get().to(|| async { chrome::see_other("/portal/") }),
    )
    .service(
        web::scope("/portal")
            // The session middleware is outermost so that it sees (and sets cookies on)
            // the final response, error pages included.
            .wrap(from_fn(chrome::portal_middleware))
            .wrap(sessions)
            .route("/", web::get().to(auth::home))
            .route("/login", web::get().to(auth::login_form))
            .route("/login", web::post().to(auth::login))
            .route("/logout", web::post().to(auth::logout))
            .route("/password/forgot", web::get().to(password::forgot_form))
            .route("/password/forgot", web::post().to(password::forgot))
            .route(
                "/password/reset/{secret}",
                web::get().to(password::reset_form),
            )
            .route("/password/reset/{secret}", web::post().to(password::reset))
            .route("/account", web::get().to(account::show))
            .route("/account/settings", web::post().to(account::save_settings))
            .route(
                "/account/password",
                web::post().to(account::change_password),
            )
            .route("/account/email", web::post().to(account::change_email))
            .route(
                "/account/email/confirm/{secret}",
                web::get().to(account::confirm_email_form),
            )
            .route(
                "/account/email/confirm/{secret}",
                web::post().to(account::confirm_email),
            )
            .route(
                "/account/email/stop/{secret}",
                web::get().to(account::stop_email_form),
            )
            .route(
                "/account/email/stop/{secret}",
                web::post().to(account::stop_email),
            )
            .route(
                "/admin/users/{id}/password-reset",
                web::post().to(admin::reset_password),
            )
            .route(
                "/account/sign-out-everywhere",
                web::post().to(account::sign_out_everywhere),
            )
            .route("/notifications", web::get().to(notifications::inbox))
            .route("/notifications/bell", web::get().to(notifications::bell))
            .route(
                "/notifications/read-all",
                web::post().to(notifications::mark_all_read),
            )
            .route(
                "/notifications/settings",
                web::get().to(notifications::settings),
            )
            .route(
                "/notifications/settings",
                web::post().to(notifications::save_settings),
            )
            .route(
                "/notifications/{id}/read",
                web::post().to(notifications::mark_read),
            )
            .route("/profile", web::get().to(profile::show))
            .route("/profile", web::post().to(profile::save))
            .route("/measurements", web::get().to(measurements::list))
            .route("/measurements/{id}", web::get().to(measurements::detail))
            .route(
                "/measurements/{id}/report",
                web::post().to(measurements::report_pdf),
            )
            .route(
                "/measurements/{id}/links",
                web::post().to(measurements::create_link),
            )
            .route(
                "/measurements/{id}/links/{link}/revoke",
                web::post().to(measurements::revoke_link),
            )
            .route(
                "/measurements/{id}/app-tokens/revoke",
                web::post().to(measurements::revoke_app_tokens),
            )
            .route("/measurements/{id}/review", web::post().to(review::review))
            .route("/trends", web::get().to(trends::own))
            .route("/reports", web::get().to(reports::list))
            .route("/reports/{id}/pdf", web::get().to(reports::pdf))
            .route("/worklist", web::get().to(worklist::show))
            .route("/patients", web::get().to(patients::list))
            .route("/patients/{id}/reports", web::post().to(reports::create))
            .route("/patients/{id}", web::get().to(patients::detail))
            .route("/patients/{id}/trends", web::get().to(trends::of_patient))
            .route("/admin/users", web::get().to(admin::users))
            .route("/admin/users", web::post().to(admin::create_user))
            .route(
                "/admin/users/{id}/activation",
                web::post().to(admin::set_activation),
            )
            .route("/admin/users/{id}/unblock", web::post().to(admin::unblock))
            .route("/admin/users/{id}/admin", web::post().to(admin::set_admin))
            .route("/admin/groups", web::get().to(admin::groups))
            .route("/admin/groups", web::post().to(admin::create_group))
            .route("/admin/enlistments", web::post().to(admin::enlist))
            .route(
                "/admin/enlistments/end",
                web::post().to(admin::end_enlistment),
            )
            .route("/admin/staff/remove", web::post().to(admin::remove_staff))
            .route("/admin/jobs", web::get().to(admin::jobs))
            .route("/admin/audit", web::get().to(admin::audit_trail))
            .route("/admin/audit/export", web::get().to(admin::audit_export))
            .route(
                "/admin/notifications",
                web::get().to(admin_notifications::show),
            )
            .route(
                "/admin/groups/{id}/notifications",
                web::post().to(admin_notifications::save_group),
            )
            .route(
                "/admin/webhooks",
                web::post().to(admin_notifications::create_webhook),
            )
            .route(
                "/admin/webhooks/{id}",
                web::get().to(admin_notifications::webhook),
            )
            .route(
                "/admin/webhooks/{id}/enabled",
                web::post().to(admin_notifications::set_enabled),
            )
            .route(
                "/admin/webhooks/{id}/delete",
                web::post().to(admin_notifications::delete),
            )
            .default_service(web::to(|| async {
                Err::<HttpResponse, _>(WebError::NotFound)
            })),
    );
}

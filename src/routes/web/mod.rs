//! The portal: server-rendered pages (askama) for patients, physicians and administrators,
//! with htmx fragments where a page updates in place. Everything lives under `/portal`, behind
//! server-side sessions; static assets are embedded in the binary and served from `/static`.

pub mod account;
pub mod admin;
pub mod admin_notifications;
pub mod assets;
pub mod auth;
pub mod chrome;
pub mod context;
#[cfg(test)]
mod contrast;
pub mod details;
pub mod error;
pub mod export;
pub mod links;
pub mod measurements;
pub mod notifications;
pub mod password;
pub mod patients;
pub mod profile;
pub mod report_page;
pub mod reports;
pub mod review;
pub mod session;
pub mod trends;
pub mod view;
pub mod worklist;
pub mod zones;

use actix_session::SessionMiddleware;
use actix_web::middleware::from_fn;
use actix_web::{HttpResponse, web};

use error::WebError;
use session::PortalSessions;

/// Declares the portal's routes once: [`ROUTES`] lists them (the authorization matrix test
/// walks every one), and `portal_routes` registers them on the `/portal` scope.
macro_rules! portal_routes {
    ($($method:ident $path:literal => $handler:path;)*) => {
        /// Every route of the portal, as (method, path under `/portal`).
        pub const ROUTES: &[(&str, &str)] = &[$((stringify!($method), $path)),*];

        fn portal_routes(scope: actix_web::Scope) -> actix_web::Scope {
            scope $(.route($path, web::$method().to($handler)))*
        }
    };
}

portal_routes! {
    get "/" => auth::home;
    get "/login" => auth::login_form;
    post "/login" => auth::login;
    post "/logout" => auth::logout;
    get "/password/forgot" => password::forgot_form;
    post "/password/forgot" => password::forgot;
    get "/password/reset/{secret}" => password::reset_form;
    post "/password/reset/{secret}" => password::reset;
    get "/account" => account::show;
    post "/account/settings" => account::save_settings;
    post "/account/password" => account::change_password;
    post "/account/email" => account::change_email;
    get "/account/export" => export::own;
    get "/account/email/confirm/{secret}" => account::confirm_email_form;
    post "/account/email/confirm/{secret}" => account::confirm_email;
    get "/account/email/stop/{secret}" => account::stop_email_form;
    post "/account/email/stop/{secret}" => account::stop_email;
    post "/admin/users/{id}/password-reset" => admin::reset_password;
    post "/account/sign-out-everywhere" => account::sign_out_everywhere;
    post "/account/consents/withdraw" => account::withdraw_sharing;
    get "/notifications" => notifications::inbox;
    get "/notifications/bell" => notifications::bell;
    post "/notifications/read-all" => notifications::mark_all_read;
    get "/notifications/settings" => notifications::settings;
    post "/notifications/settings" => notifications::save_settings;
    post "/notifications/{id}/read" => notifications::mark_read;
    get "/profile" => profile::show;
    post "/profile" => profile::save;
    get "/measurements" => measurements::list;
    get "/measurements/{id}" => measurements::detail;
    post "/measurements/{id}/report" => measurements::report_pdf;
    post "/measurements/{id}/links" => measurements::create_link;
    post "/measurements/{id}/links/{link}/revoke" => measurements::revoke_link;
    post "/measurements/{id}/app-tokens/revoke" => measurements::revoke_app_tokens;
    post "/measurements/{id}/review" => review::review;
    get "/trends" => trends::own;
    get "/reports" => reports::list;
    get "/reports/{id}" => report_page::page;
    get "/reports/{id}/pdf" => reports::pdf;
    post "/reports/{id}/links" => report_page::create_link;
    post "/reports/{id}/links/{link}/revoke" => report_page::revoke_link;
    get "/worklist" => worklist::show;
    get "/patients" => patients::list;
    post "/patients/{id}/reports" => reports::create;
    get "/patients/{id}" => patients::detail;
    get "/patients/{id}/trends" => trends::of_patient;
    get "/admin/users" => admin::users;
    post "/admin/users" => admin::create_user;
    get "/admin/users/{id}" => admin::edit_user_form;
    get "/admin/users/{id}/export" => export::of_user;
    post "/admin/users/{id}" => admin::edit_user;
    post "/admin/users/{id}/activation" => admin::set_activation;
    post "/admin/users/{id}/unblock" => admin::unblock;
    post "/admin/users/{id}/admin" => admin::set_admin;
    get "/admin/users/{id}/erasure" => admin::erasure_page;
    post "/admin/users/{id}/erasure" => admin::request_erasure;
    post "/admin/users/{id}/legal-hold" => admin::set_legal_hold;
    get "/admin/groups" => admin::groups;
    post "/admin/groups" => admin::create_group;
    post "/admin/enlistments" => admin::enlist;
    post "/admin/enlistments/end" => admin::end_enlistment;
    post "/admin/enlistments/extend" => admin::extend_enlistment;
    post "/admin/staff/remove" => admin::remove_staff;
    get "/admin/jobs" => admin::jobs;
    get "/admin/jobs/upcoming" => admin::upcoming;
    post "/admin/jobs/due" => admin::make_due;
    get "/admin/audit" => admin::audit_trail;
    get "/admin/audit/export" => admin::audit_export;
    get "/admin/notifications" => admin_notifications::show;
    post "/admin/groups/{id}/notifications" => admin_notifications::save_group;
    post "/admin/webhooks" => admin_notifications::create_webhook;
    get "/admin/webhooks/{id}" => admin_notifications::webhook;
    post "/admin/webhooks/{id}/enabled" => admin_notifications::set_enabled;
    post "/admin/webhooks/{id}/delete" => admin_notifications::delete;
}

/// The portal's routes; `sessions` is the session middleware built for this worker.
pub fn configure(cfg: &mut web::ServiceConfig, sessions: SessionMiddleware<PortalSessions>) {
    cfg.route(
        "/",
        web::get().to(|| async { chrome::see_other("/portal/") }),
    )
    .route("/static/{name}", web::get().to(assets::serve))
    .route(
        "/portal",
        web::get().to(|| async { chrome::see_other("/portal/") }),
    )
    .service(
        // The session middleware is outermost so that it sees (and sets cookies on) the
        // final response, error pages included.
        portal_routes(web::scope("/portal"))
            .default_service(web::to(|| async {
                Err::<HttpResponse, _>(WebError::NotFound)
            }))
            .wrap(from_fn(chrome::portal_middleware))
            .wrap(sessions),
    );
}

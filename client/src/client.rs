//! The client: one login, fresh tokens, and the operations apps need.

use std::sync::{Arc, Mutex};

use chrono::Utc;
use reqwest::{Method, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::error::{self, Error, codes};
use crate::page::{Page, PageEnvelope};
use crate::tokens::{Grant, Tokens};
use crate::{
    Measurement, MeasurementReport, MeasurementUpdate, PeriodicReport, Profile, ReportStatus,
    StoredProfile, User,
};

const TOKEN_PATH: &str = "/auth/v2/oauth2/tokens";

/// A signed-in connection to a Tacho server.
///
/// Cloning is cheap and clones share the login: a refresh made through one clone is used by
/// all. Access tokens are refreshed shortly before they expire and, once, when the server
/// refuses one as expired (118) or unknown (117); refreshes are serialised, so concurrent calls
/// never spend the same (rotating) refresh token twice.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    base_url: String,
    tokens: Mutex<Tokens>,
    refresh: tokio::sync::Mutex<()>,
    on_refresh: Mutex<Option<TokenListener>>,
}

type TokenListener = Arc<dyn Fn(&Tokens) + Send + Sync>;

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.inner.base_url)
            .field("tokens", &*self.inner.tokens.lock().unwrap())
            .finish()
    }
}

/// Whether an answer needs the body read as an error; `Ok` passes the response on.
type Sent = Result<reqwest::Response, Error>;

impl Client {
    /// Logs in with e-mail and password (the OAuth2 password grant).
    ///
    /// `base_url` is the server's address, e.g. `https://tacho.example` (a trailing `/` is
    /// ignored). A wrong e-mail or password is an [`Error::Api`] with code 106
    /// ([`codes::AUTHENTICATION`]).
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), tacho_client::Error> {
    /// let client = tacho_client::Client::login("http://127.0.0.1:8080", "anna@tacho.test", "tacho-demo").await?;
    /// println!("signed in as {}", client.user_id());
    /// # Ok(()) }
    /// ```
    pub async fn login(base_url: &str, email: &str, password: &str) -> Result<Client, Error> {
        let http = default_http();
        let base_url = base_url.trim_end_matches('/').to_owned();
        let body = json!({"grant_type": "password", "username": email, "password": password});
        let tokens = request_tokens(&http, &base_url, &body).await?;
        Ok(Client::from_parts(http, base_url, tokens))
    }

    /// Resumes a login from tokens persisted earlier (see [`Client::tokens`]).
    ///
    /// ```no_run
    /// # fn load() -> String { String::new() }
    /// # async fn run() -> Result<(), tacho_client::Error> {
    /// let saved: tacho_client::Tokens = serde_json::from_str(&load()).unwrap();
    /// let client = tacho_client::Client::with_tokens("http://127.0.0.1:8080", saved);
    /// let me = client.me().await?;
    /// # Ok(()) }
    /// ```
    pub fn with_tokens(base_url: &str, tokens: Tokens) -> Client {
        Client::from_parts(
            default_http(),
            base_url.trim_end_matches('/').to_owned(),
            tokens,
        )
    }

    /// Uses `http` for every request instead of the default HTTP client (for proxies,
    /// timeouts or extra root certificates).
    pub fn with_http_client(self, http: reqwest::Client) -> Client {
        let tokens = self.tokens();
        Client::from_parts(http, self.inner.base_url.clone(), tokens)
    }

    fn from_parts(http: reqwest::Client, base_url: String, tokens: Tokens) -> Client {
        Client {
            inner: Arc::new(Inner {
                http,
                base_url,
                tokens: Mutex::new(tokens),
                refresh: tokio::sync::Mutex::new(()),
                on_refresh: Mutex::new(None),
            }),
        }
    }

    /// The current tokens. They change when the client refreshes; persist the latest ones to
    /// resume the login later with [`Client::with_tokens`].
    ///
    /// ```no_run
    /// # async fn run(client: tacho_client::Client) {
    /// client.me().await.ok();
    /// let saved = serde_json::to_string(&client.tokens()).unwrap();
    /// # }
    /// ```
    pub fn tokens(&self) -> Tokens {
        self.inner.tokens.lock().unwrap().clone()
    }

    /// Calls `listener` with the new tokens after every refresh, so an app can persist them
    /// the moment the old refresh token stops being valid. Replaces an earlier listener.
    ///
    /// ```no_run
    /// # fn save(_: &str) {}
    /// # fn run(client: tacho_client::Client) {
    /// client.on_tokens_refreshed(|tokens| save(&serde_json::to_string(tokens).unwrap()));
    /// # }
    /// ```
    pub fn on_tokens_refreshed(&self, listener: impl Fn(&Tokens) + Send + Sync + 'static) {
        *self.inner.on_refresh.lock().unwrap() = Some(Arc::new(listener));
    }

    /// The id of the signed-in user.
    pub fn user_id(&self) -> String {
        self.inner.tokens.lock().unwrap().user_id.clone()
    }

    /// The server's address, without a trailing `/`.
    pub fn base_url(&self) -> &str {
        &self.inner.base_url
    }

    /// The signed-in user's record: names, language and time zone (which reports use),
    /// enlistments.
    ///
    /// ```no_run
    /// # async fn run(client: tacho_client::Client) -> Result<(), tacho_client::Error> {
    /// let me = client.me().await?;
    /// println!("{} {} ({}, {})", me.first_name, me.last_name, me.language, me.time_zone);
    /// # Ok(()) }
    /// ```
    pub async fn me(&self) -> Result<User, Error> {
        self.json(Method::GET, "/users/v1/me", None::<&()>).await
    }

    /// The signed-in user's stored profile.
    ///
    /// ```no_run
    /// # async fn run(client: tacho_client::Client) -> Result<(), tacho_client::Error> {
    /// let stored = client.profile().await?;
    /// println!("weight: {:?}", stored.profile.weight);
    /// # Ok(()) }
    /// ```
    pub async fn profile(&self) -> Result<StoredProfile, Error> {
        let path = format!("/profiles/v1/{}", segment(&self.user_id()));
        self.json(Method::GET, &path, None::<&()>).await
    }

    /// Merges a partial profile into the signed-in user's profile and returns how many
    /// profiles changed (1). Apps call it after every login and on the home screen, so the
    /// device information stays current. A value the server rejects is an [`Error::Api`] with
    /// code 15 naming the field.
    ///
    /// ```no_run
    /// use tacho_client::{AppInfo, Profile, ServiceInfo};
    /// # async fn run(client: tacho_client::Client) -> Result<(), tacho_client::Error> {
    /// let update = Profile {
    ///     service_info: Some(ServiceInfo {
    ///         app: Some(AppInfo { version: Some("3.5.0".into()) }),
    ///         ..ServiceInfo::default()
    ///     }),
    ///     ..Profile::default()
    /// };
    /// client.update_profile(&update).await?;
    /// # Ok(()) }
    /// ```
    pub async fn update_profile(&self, partial: &Profile) -> Result<u64, Error> {
        #[derive(serde::Deserialize)]
        struct Affected {
            records_affected: u64,
        }
        let path = format!("/profiles/v1?id={}", rql_value(&self.user_id()));
        let affected: Affected = self.json(Method::PUT, &path, Some(partial)).await?;
        Ok(affected.records_affected)
    }

    /// Stores a measurement: `data` is the payload the camera SDK produced (heart rate,
    /// `measurement_timestamp` in ms, signal, context, …). Answers the stored document with
    /// the server's envelope and status.
    ///
    /// ```no_run
    /// # async fn run(client: tacho_client::Client) -> Result<(), tacho_client::Error> {
    /// let payload = serde_json::json!({"measurement_timestamp": 1795689000000_i64, "heartrate": 72});
    /// let measurement = client.post_measurement(&payload).await?;
    /// println!("{} is {}", measurement.id, measurement.status);
    /// # Ok(()) }
    /// ```
    pub async fn post_measurement<T: Serialize + ?Sized>(
        &self,
        data: &T,
    ) -> Result<Measurement, Error> {
        self.json(Method::POST, "/data/v1/measurements/documents", Some(data))
            .await
    }

    /// One measurement the signed-in user may see.
    ///
    /// ```no_run
    /// # async fn run(client: tacho_client::Client) -> Result<(), tacho_client::Error> {
    /// let measurement = client.get_measurement("6740a1b2c3d4e5f601234567").await?;
    /// println!("updated {}", measurement.update_timestamp);
    /// # Ok(()) }
    /// ```
    pub async fn get_measurement(&self, id: &str) -> Result<Measurement, Error> {
        let path = format!("/data/v1/measurements/documents/{}", segment(id));
        self.json(Method::GET, &path, None::<&()>).await
    }

    /// Changes part of a measurement and returns how many documents changed (1). Patients
    /// change `context` and `tags` or ask for a review; staff write the review.
    ///
    /// ```no_run
    /// use tacho_client::MeasurementUpdate;
    /// # async fn run(client: tacho_client::Client) -> Result<(), tacho_client::Error> {
    /// let update = MeasurementUpdate { tags: Some(vec!["after coffee".into()]), ..Default::default() };
    /// client.update_measurement("6740a1b2c3d4e5f601234567", &update).await?;
    /// # Ok(()) }
    /// ```
    pub async fn update_measurement(
        &self,
        id: &str,
        partial: &MeasurementUpdate,
    ) -> Result<u64, Error> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Affected {
            affected_records: u64,
        }
        let path = format!("/data/v1/measurements/documents/{}", segment(id));
        let affected: Affected = self.json(Method::PUT, &path, Some(partial)).await?;
        Ok(affected.affected_records)
    }

    /// The latest report document of a measurement, if any
    /// (`limit(1)&sort(-id)&eq(data.measurementId,…)`).
    pub async fn latest_measurement_report(
        &self,
        measurement_id: &str,
    ) -> Result<Option<MeasurementReport>, Error> {
        let path = format!(
            "/data/v1/measurement-reports/documents?limit(1)&sort(-id)&eq(data.measurementId,{})",
            rql_value(measurement_id)
        );
        let page: PageEnvelope<MeasurementReport> =
            self.json(Method::GET, &path, None::<&()>).await?;
        Ok(page.data.into_iter().next())
    }

    /// An up-to-date, rendered report of a measurement, made when needed.
    ///
    /// The latest report is reused when it is rendered, not out of date (the measurement's
    /// `updateTimestamp` is not later than the report's `forMeasurementUpdatedTimestamp`), and
    /// in the user's current language and time zone. Otherwise a new report is made in the
    /// user's language; the server renders it synchronously (about 5 s the first time; a PDF
    /// with the same contents is reused).
    ///
    /// ```no_run
    /// # async fn run(client: tacho_client::Client) -> Result<(), tacho_client::Error> {
    /// let report = client.measurement_report("6740a1b2c3d4e5f601234567").await?;
    /// println!("report {} in {:?}", report.id, report.data.language);
    /// # Ok(()) }
    /// ```
    pub async fn measurement_report(
        &self,
        measurement_id: &str,
    ) -> Result<MeasurementReport, Error> {
        let measurement = self.get_measurement(measurement_id).await?;
        let user = self.me().await?;
        let language = user.report_language();
        if let Some(latest) = self.latest_measurement_report(measurement_id).await?
            && is_current(&latest, &measurement, &language, &user.time_zone)
        {
            return Ok(latest);
        }
        let body = json!({"measurementId": measurement_id, "language": language});
        let created: MeasurementReport = self
            .json(
                Method::POST,
                "/data/v1/measurement-reports/documents",
                Some(&body),
            )
            .await?;
        match created.rendering_status() {
            Some(ReportStatus::Rendered) if created.data.read_file_token.is_some() => Ok(created),
            status => Err(Error::UnexpectedResponse {
                status: 200,
                detail: format!("the new report is {status:?}, not rendered with a file"),
            }),
        }
    }

    /// The public URL of the PDF report of a measurement, making the report when none is
    /// up to date (see [`Client::measurement_report`]). The URL needs no authentication: it is
    /// a capability, share it only with whom may read the report.
    ///
    /// ```no_run
    /// # async fn run(client: tacho_client::Client) -> Result<(), tacho_client::Error> {
    /// let url = client.get_measurement_report_url("6740a1b2c3d4e5f601234567").await?;
    /// println!("open {url}");
    /// # Ok(()) }
    /// ```
    pub async fn get_measurement_report_url(&self, measurement_id: &str) -> Result<String, Error> {
        let report = self.measurement_report(measurement_id).await?;
        let token = report
            .data
            .read_file_token
            .ok_or_else(|| Error::UnexpectedResponse {
                status: 200,
                detail: "a rendered report without readFileToken".into(),
            })?;
        Ok(self.file_url(&token))
    }

    /// The public address of a stored file, from its `readFileToken`.
    pub fn file_url(&self, read_file_token: &str) -> String {
        format!(
            "{}/files/v1/{}/file",
            self.inner.base_url,
            segment(read_file_token)
        )
    }

    /// The signed-in user's periodic reports, newest first, one page at a time (the server's
    /// default page size); each report lists its period's measurements in
    /// `data.measurements`.
    ///
    /// ```no_run
    /// # async fn run(client: tacho_client::Client) -> Result<(), tacho_client::Error> {
    /// let mut page = client.get_periodic_reports().await?;
    /// loop {
    ///     for report in &page.items {
    ///         println!("{} {}: {} measurements", report.id, report.trigger, report.data.measurements.len());
    ///     }
    ///     match page.next().await? {
    ///         Some(next) => page = next,
    ///         None => break,
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn get_periodic_reports(&self) -> Result<Page<PeriodicReport>, Error> {
        self.periodic_reports(None).await
    }

    /// Like [`Client::get_periodic_reports`] with `limit` reports per page (the server caps
    /// it at 50).
    pub async fn get_periodic_reports_by(&self, limit: u32) -> Result<Page<PeriodicReport>, Error> {
        self.periodic_reports(Some(limit)).await
    }

    async fn periodic_reports(&self, limit: Option<u32>) -> Result<Page<PeriodicReport>, Error> {
        let query = format!(
            "/reports/v1?sort(-creation_timestamp)&user_id={}",
            rql_value(&self.user_id())
        );
        Page::first(self.clone(), query, limit).await
    }

    /// The PDF of a periodic report, rendered in the signed-in user's language and time zone.
    ///
    /// ```no_run
    /// # async fn run(client: tacho_client::Client) -> Result<(), tacho_client::Error> {
    /// let page = client.get_periodic_reports().await?;
    /// if let Some(latest) = page.items.first() {
    ///     let pdf = client.get_periodic_report_pdf(&latest.id).await?;
    ///     std::fs::write("report.pdf", pdf).unwrap();
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn get_periodic_report_pdf(&self, report_id: &str) -> Result<Vec<u8>, Error> {
        let user = self.me().await?;
        let path = format!(
            "/reports/v1/{}/pdf?language={}&time_zone={}",
            segment(report_id),
            segment(&user.report_language()),
            segment(&user.time_zone)
        );
        let response = self.send(Method::GET, &path, None).await?;
        let status = response.status().as_u16();
        let bytes = response.bytes().await?;
        if !bytes.starts_with(b"%PDF") {
            return Err(Error::UnexpectedResponse {
                status,
                detail: "the answer is not a PDF".into(),
            });
        }
        Ok(bytes.to_vec())
    }

    /// Sends a request and reads a JSON answer.
    pub(crate) async fn json<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<T, Error> {
        let body = match body {
            Some(body) => {
                Some(
                    serde_json::to_vec(body).map_err(|e| Error::UnexpectedResponse {
                        status: 0,
                        detail: format!("the request body does not serialise: {e}"),
                    })?,
                )
            }
            None => None,
        };
        let response = self.send(method, path, body).await?;
        let status = response.status().as_u16();
        let bytes = response.bytes().await?;
        serde_json::from_slice(&bytes).map_err(|e| Error::UnexpectedResponse {
            status,
            detail: format!("the answer does not read as expected: {e}"),
        })
    }

    /// A `GET` with a fresh access token, its answer unread (a document's bytes).
    pub(crate) async fn send_get(&self, path: &str) -> Sent {
        self.send(Method::GET, path, None).await
    }

    /// Sends a request with a fresh access token; refreshes and retries once when the server
    /// refuses the token. Any non-success answer becomes an [`Error`].
    async fn send(&self, method: Method, path: &str, body: Option<Vec<u8>>) -> Sent {
        let token = self.fresh_access_token().await?;
        let response = self.attempt(&method, path, &body, &token).await?;
        if response.status() != StatusCode::UNAUTHORIZED {
            return check(response).await;
        }
        let status = response.status().as_u16();
        let bytes = response.bytes().await?;
        let refused = error::from_response(status, &bytes);
        // The FHIR interface says `login` for an expired or unknown token alike: a refresh
        // tells which.
        let stale = matches!(
            refused.code(),
            Some(codes::ACCESS_TOKEN_EXPIRED | codes::ACCESS_TOKEN_UNKNOWN)
        ) || matches!(&refused, Error::Fhir(outcome) if outcome.code() == Some("login"));
        if !stale {
            return Err(refused);
        }
        self.refresh_unless_replaced(&token).await?;
        let token = self.inner.tokens.lock().unwrap().access_token.clone();
        check(self.attempt(&method, path, &body, &token).await?).await
    }

    async fn attempt(
        &self,
        method: &Method,
        path: &str,
        body: &Option<Vec<u8>>,
        token: &str,
    ) -> Result<reqwest::Response, Error> {
        let url = format!("{}{}", self.inner.base_url, path);
        let mut request = self
            .inner
            .http
            .request(method.clone(), url)
            .bearer_auth(token);
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.clone());
        }
        Ok(request.send().await?)
    }

    /// The access token to send, refreshed first when it expires within the margin.
    async fn fresh_access_token(&self) -> Result<String, Error> {
        let current = self.tokens();
        if current.expires_soon(Utc::now()) {
            self.refresh_unless_replaced(&current.access_token).await?;
        }
        Ok(self.inner.tokens.lock().unwrap().access_token.clone())
    }

    /// Spends the refresh token, unless another call already replaced `stale` meanwhile.
    async fn refresh_unless_replaced(&self, stale: &str) -> Result<(), Error> {
        let _one_at_a_time = self.inner.refresh.lock().await;
        let current = self.tokens();
        if current.access_token != stale {
            return Ok(());
        }
        let body = json!({"grant_type": "refresh_token", "refresh_token": current.refresh_token});
        let fresh = request_tokens(&self.inner.http, &self.inner.base_url, &body).await?;
        *self.inner.tokens.lock().unwrap() = fresh.clone();
        let listener = self.inner.on_refresh.lock().unwrap().clone();
        if let Some(listener) = listener {
            listener(&fresh);
        }
        Ok(())
    }
}

/// Whether the latest report can be served as it is.
fn is_current(
    report: &MeasurementReport,
    measurement: &Measurement,
    language: &str,
    time_zone: &str,
) -> bool {
    let rendered = matches!(report.rendering_status(), Some(ReportStatus::Rendered))
        && report.data.read_file_token.is_some();
    let up_to_date = report
        .data
        .for_measurement_updated_timestamp
        .is_some_and(|made_for| measurement.update_timestamp.timestamp_millis() <= made_for);
    let same_language = report
        .data
        .language
        .as_deref()
        .is_some_and(|l| l.eq_ignore_ascii_case(language));
    let same_zone = report.data.time_zone.as_deref() == Some(time_zone);
    rendered && up_to_date && same_language && same_zone
}

fn default_http() -> reqwest::Client {
    reqwest::Client::builder()
        .user_agent(concat!("tacho-client/", env!("CARGO_PKG_VERSION")))
        // Tacho closes idle connections after 5 s; reusing one it is closing fails the request
        // (IncompleteMessage), so idle connections are dropped before that.
        .pool_idle_timeout(std::time::Duration::from_secs(3))
        .build()
        .expect("the default HTTP client builds")
}

async fn request_tokens(
    http: &reqwest::Client,
    base_url: &str,
    body: &serde_json::Value,
) -> Result<Tokens, Error> {
    let sent_at = Utc::now();
    let response = http
        .post(format!("{base_url}{TOKEN_PATH}"))
        .json(body)
        .send()
        .await?;
    let response = check(response).await?;
    let status = response.status().as_u16();
    let bytes = response.bytes().await?;
    let grant: Grant = serde_json::from_slice(&bytes).map_err(|e| Error::UnexpectedResponse {
        status,
        detail: format!("the token answer does not read as expected: {e}"),
    })?;
    Ok(grant.into_tokens(sent_at))
}

/// Passes a success on; reads any other answer as an error.
async fn check(response: reqwest::Response) -> Sent {
    if response.status().is_success() {
        return Ok(response);
    }
    let status = response.status().as_u16();
    let bytes = response.bytes().await?;
    Err(error::from_response(status, &bytes))
}

/// Percent-encodes everything but RFC 3986's unreserved characters, for a path segment or a
/// query value.
pub(crate) fn segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// An RQL value: encoded twice, as Tacho's RQL decodes values once more after the query string
/// itself is decoded (the platform's clients double-encode).
pub(crate) fn rql_value(text: &str) -> String {
    segment(&segment(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_encoded_for_paths_and_rql() {
        assert_eq!(
            segment("6740a1b2c3d4e5f601234567"),
            "6740a1b2c3d4e5f601234567"
        );
        assert_eq!(segment("Europe/Brussels"), "Europe%2FBrussels");
        assert_eq!(segment("a b&c"), "a%20b%26c");
        assert_eq!(rql_value("a,b"), "a%252Cb");
        assert_eq!(rql_value("plain"), "plain");
    }
}

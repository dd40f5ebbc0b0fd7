//! `spawn_app()` and the small vocabulary the tests speak: users, logins, requests.

use std::sync::{Arc, OnceLock};

use chrono::Utc;
use reqwest::{Method, StatusCode};
use sea_orm::{ConnectionTrait, Database};
use serde_json::{Value, json};
use tacho::auth::password::PasswordHasher;
use tacho::config::Settings;
use tacho::domain::clock::ManualClock;
use tacho::routes::AppState;
use tacho::scheduler::{RunSummary, Scheduler, SchedulerOptions};
use tacho::startup::{Application, BuildOptions};
use tacho::store::NewUser;

/// The password of every user the tests create.
pub const PASSWORD: &str = "correct horse battery";

/// The clinical note [`TestApp::review`] writes: for the care team, never on the patient's pages
/// or the PDF.
pub const CLINICAL_NOTE: &str = "Clinical: ask about caffeine";

/// A running server with its own database.
pub struct TestApp {
    pub address: String,
    pub client: reqwest::Client,
    pub state: actix_web::web::Data<AppState>,
    /// The parts that write (the request handlers reach them only through `actions`), for
    /// arranging what no door can make and for reading what the handlers cannot.
    pub operator: tacho::startup::Operator,
    /// The writable store (the operator's).
    pub store: tacho::store::Store,
    pub clock: Arc<ManualClock>,
    pub settings: Settings,
    /// `http://127.0.0.1:<port>` of the metrics listener, when the settings ask for one.
    pub metrics_address: Option<String>,
    handle: actix_web::dev::ServerHandle,
    _dir: tempfile::TempDir,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        // Sends the stop command at once; the workers wind down in the background.
        drop(self.handle.stop(false));
    }
}

/// A user created for a test, signed in through the client SDK.
#[derive(Debug, Clone)]
pub struct TestUser {
    pub id: String,
    pub email: String,
    /// The access token of `client`'s login, for the tests that speak raw HTTP.
    pub token: String,
    pub client: tacho_client::Client,
}

/// Test database URL: a fresh PostgreSQL database when `TEST_DATABASE_URL` is set, else a
/// fresh SQLite file in `dir`.
pub async fn database_url(dir: &std::path::Path) -> String {
    match test_database_server() {
        Some(admin_url) => fresh_postgres_database(&admin_url).await,
        None => sqlite_url(&dir.join("tacho.db")),
    }
}

/// The PostgreSQL server each test's database is made on: `TEST_DATABASE_URL`, when set.
fn test_database_server() -> Option<String> {
    std::env::var("TEST_DATABASE_URL")
        .ok()
        .filter(|v| !v.is_empty())
}

/// A new test database's name, `tacho_test_<random>` (`./scripts/test` drops them all).
fn test_database_name() -> String {
    format!("tacho_test_{}", uuid::Uuid::new_v4().simple())
}

/// The URL of the SQLite file `file`, created when missing.
fn sqlite_url(file: &std::path::Path) -> String {
    format!("sqlite://{}?mode=rwc", file.display())
}

/// A new, empty database (`tacho_test_<random>`, dropped by `./scripts/test`) on the
/// PostgreSQL server of `admin_url`, as a URL.
pub async fn fresh_postgres_database(admin_url: &str) -> String {
    let name = test_database_name();
    create_postgres_database(admin_url, &format!("\"{name}\"")).await;
    database_named(admin_url, &name)
}

/// Like [`database_url`], with the schema already up to date: a copy of a template database
/// that [`Store::migrate_url`](tacho::store::Store::migrate_url) migrated once for this test
/// binary. Migrating every test's database anew took over a second per test on PostgreSQL;
/// the server still runs its migrations on start, and finds nothing left to do.
pub async fn migrated_database_url(dir: &std::path::Path) -> String {
    match test_database_server() {
        Some(admin_url) => {
            let template = postgres_template(&admin_url).await;
            let name = test_database_name();
            create_postgres_database(&admin_url, &format!("\"{name}\" TEMPLATE \"{template}\""))
                .await;
            database_named(&admin_url, &name)
        }
        None => {
            let file = dir.join("tacho.db");
            std::fs::copy(sqlite_template().await, &file).expect("copy the template database");
            sqlite_url(&file)
        }
    }
}

/// What tells this test binary's template databases from those of another build: its path,
/// length and modification time (a changed migration is a new binary).
fn template_key() -> String {
    use std::hash::{Hash, Hasher};
    let exe = std::env::current_exe().expect("the test binary's path");
    let metadata = std::fs::metadata(&exe).expect("the test binary's metadata");
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (exe, metadata.len(), metadata.modified().ok()).hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// The name of the migrated template database on the PostgreSQL server of `admin_url`, made
/// once: migrated under a name of its own, then renamed, so that a process running beside
/// this one (nextest runs a process per test) uses it only once it is whole. `./scripts/test`
/// drops it with the other `tacho_test_` databases.
async fn postgres_template(admin_url: &str) -> String {
    static TEMPLATE: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();
    TEMPLATE
        .get_or_init(|| async {
            let name = format!("tacho_test_template_{}", template_key());
            let admin = Database::connect(admin_url)
                .await
                .expect("connect to the PostgreSQL server");
            if !database_exists(&admin, &name).await {
                let building = format!("tacho_test_building_{}", uuid::Uuid::new_v4().simple());
                create_postgres_database(admin_url, &format!("\"{building}\"")).await;
                tacho::store::Store::migrate_url(&database_named(admin_url, &building))
                    .await
                    .expect("migrate the template database");
                let rename = format!("ALTER DATABASE \"{building}\" RENAME TO \"{name}\"");
                let renamed = retry_while_in_use(&admin, &rename).await;
                if renamed.is_err() {
                    // Another process renamed its own first.
                    assert!(database_exists(&admin, &name).await, "{renamed:?}");
                    retry_while_in_use(&admin, &format!("DROP DATABASE \"{building}\""))
                        .await
                        .expect("drop the spare template");
                }
            }
            admin.close().await.ok();
            name
        })
        .await
        .clone()
}

/// Whether the server `admin` is connected to has a database `name`.
async fn database_exists(admin: &sea_orm::DatabaseConnection, name: &str) -> bool {
    let query = sea_orm::Statement::from_sql_and_values(
        sea_orm::DbBackend::Postgres,
        "SELECT 1 FROM pg_database WHERE datname = $1",
        [name.into()],
    );
    admin
        .query_one_raw(query)
        .await
        .expect("read pg_database")
        .is_some()
}

/// Runs `sql` on `admin`, again while PostgreSQL answers that the database it names is in use:
/// a connection just closed by its client may linger on the server for a moment.
async fn retry_while_in_use(
    admin: &sea_orm::DatabaseConnection,
    sql: &str,
) -> Result<sea_orm::ExecResult, sea_orm::DbErr> {
    let mut tries = 0;
    loop {
        match admin.execute_unprepared(sql).await {
            Err(e) if tries < 100 && e.to_string().contains("being accessed by other users") => {
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            done => return done,
        }
    }
}

/// Creates the database `what` says (`"name"`, and any options) on the server of `admin_url`.
async fn create_postgres_database(admin_url: &str, what: &str) {
    let admin = Database::connect(admin_url)
        .await
        .expect("connect to the PostgreSQL server");
    retry_while_in_use(&admin, &format!("CREATE DATABASE {what}"))
        .await
        .expect("create test database");
    admin.close().await.ok();
}

/// The URL of the database `name` on the server of `admin_url`.
fn database_named(admin_url: &str, name: &str) -> String {
    let (base, query) = match admin_url.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (admin_url, String::new()),
    };
    let base = base.rsplit_once('/').map(|(b, _)| b).unwrap_or(base);
    format!("{base}/{name}{query}")
}

/// The migrated template SQLite file, made once (in cargo's `target/tmp`, shared by the
/// processes of this test binary): migrated under a name of its own, then written whole by
/// `VACUUM INTO` and renamed into place.
async fn sqlite_template() -> std::path::PathBuf {
    static TEMPLATE: tokio::sync::OnceCell<std::path::PathBuf> = tokio::sync::OnceCell::const_new();
    TEMPLATE
        .get_or_init(|| async {
            let folder = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
            std::fs::create_dir_all(&folder).expect("cargo's folder for test data");
            let template = folder.join(format!("tacho-test-template-{}.db", template_key()));
            if !template.exists() {
                let building = tempfile::tempdir_in(&folder).expect("temporary directory");
                let migrated = building.path().join("migrated.db");
                let url = sqlite_url(&migrated);
                tacho::store::Store::migrate_url(&url)
                    .await
                    .expect("migrate the template database");
                let whole = building.path().join("whole.db");
                let db = Database::connect(&url).await.expect("open the template");
                db.execute_unprepared(&format!("VACUUM INTO '{}'", whole.display()))
                    .await
                    .expect("write the template whole");
                db.close().await.ok();
                std::fs::rename(&whole, &template).expect("put the template in place");
            }
            template
        })
        .await
        .clone()
}

/// The PostgreSQL server the tests that need one in every pass use: `TEST_DATABASE_URL` on the
/// PostgreSQL pass, `TEST_POSTGRES_URL` on the SQLite pass (`./scripts/test` sets both from
/// the same server). `None` only where [`without`] lets a machine without one pass them over.
pub fn postgres_server() -> Option<String> {
    ["TEST_DATABASE_URL", "TEST_POSTGRES_URL"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
        .or_else(|| {
            without(
                "POSTGRES",
                "this test needs a PostgreSQL server (TEST_POSTGRES_URL or TEST_DATABASE_URL)",
            );
            None
        })
}

/// A helper this machine lacks (`name`: `MOTO`, `TMPFS`, `POSTGRES`): the test fails saying
/// `why`, unless `TACHO_TEST_WITHOUT_<name>=1` says to pass over the tests that need it (then
/// this returns and the caller returns too). `./scripts/test` provides every helper and sets
/// none of these variables.
pub fn without(name: &str, why: &str) {
    let variable = format!("TACHO_TEST_WITHOUT_{name}");
    if std::env::var(&variable).is_ok_and(|v| v == "1") {
        eprintln!("{why}: not run ({variable}=1)");
    } else {
        panic!("{why} (set {variable}=1 to pass over the tests that need it)");
    }
}

/// A process a test started, in a process group of its own, ended with everything it started
/// (a browser's renderers, a server's workers) when dropped, also when the test fails or
/// panics, so that no test run leaves a process behind.
pub struct Spawned {
    child: std::process::Child,
}

impl Spawned {
    /// Starts `command` in a new process group.
    pub fn start(command: &mut std::process::Command) -> std::io::Result<Spawned> {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
        Ok(Spawned {
            child: command.spawn()?,
        })
    }

    /// Ends the whole group now and waits for the process.
    pub fn stop(&mut self) {
        if let Ok(group) = i32::try_from(self.child.id()) {
            // SAFETY: kill(2) only sends a signal; a negative pid names the process group.
            unsafe {
                libc::kill(-group, libc::SIGKILL);
            }
        }
        let _ = self.child.wait();
    }
}

impl std::ops::Deref for Spawned {
    type Target = std::process::Child;

    fn deref(&self) -> &Self::Target {
        &self.child
    }
}

impl std::ops::DerefMut for Spawned {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.child
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        self.stop();
    }
}

fn init_logs() {
    static INIT: OnceLock<()> = OnceLock::new();
    INIT.get_or_init(|| {
        if let Ok(filter) = std::env::var("TEST_LOG") {
            tacho::telemetry::init(tacho::config::LogFormat::Pretty, &filter);
        }
    });
}

/// Starts Tacho on a free port with a fresh database and a manual clock set to now.
pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

/// Like [`spawn_app`], letting the test adjust the settings first.
pub async fn spawn_app_with(adjust: impl FnOnce(&mut Settings)) -> TestApp {
    spawn_app_migrating(adjust, true).await
}

/// Like [`spawn_app_with`], for a database whose schema someone else keeps (`tacho serve
/// --no-migrate`).
pub async fn spawn_unmigrated_app_with(adjust: impl FnOnce(&mut Settings)) -> TestApp {
    spawn_app_migrating(adjust, false).await
}

async fn spawn_app_migrating(adjust: impl FnOnce(&mut Settings), migrate: bool) -> TestApp {
    init_logs();
    let dir = tempfile::tempdir().expect("temporary directory");
    let url = if migrate {
        migrated_database_url(dir.path()).await
    } else {
        database_url(dir.path()).await
    };
    let data_dir = dir.path().to_owned();
    let mut settings = Settings::from_lookup(|key| match key {
        "TACHO_DATABASE_URL" => Some(url.clone()),
        "TACHO_DATA_DIR" => Some(data_dir.display().to_string()),
        "TACHO_ADDR" => Some("127.0.0.1:0".into()),
        "TACHO_WORKERS" => Some("1".into()),
        // Tests log in far more often than people do; one test checks the throttle itself.
        "TACHO_LOGIN_RATE" => Some("100000".into()),
        "TACHO_REGISTRATION_RATE" => Some("100000".into()),
        // Tests run the scheduler themselves, on their own clock; some turn the tick on.
        "TACHO_SCHEDULER_TICK" => Some("0".into()),
        _ => None,
    })
    .expect("test settings");
    adjust(&mut settings);
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let app = Application::build(
        settings.clone(),
        BuildOptions {
            migrate,
            clock: clock.clone(),
        },
    )
    .await
    .expect("application builds");
    let address = format!("http://127.0.0.1:{}", app.port());
    let (state, operator) = (app.state(), app.operator());
    let handle = app.handle();
    let metrics_address = app
        .metrics_port()
        .map(|port| format!("http://127.0.0.1:{port}"));
    tokio::spawn(app.run_until_stopped());
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        // Below the server's 5 s keep-alive: a connection the server is closing is never reused
        // (that race answers IncompleteMessage when this client idles while the SDK works).
        .pool_idle_timeout(std::time::Duration::from_secs(3))
        .build()
        .unwrap();
    TestApp {
        address,
        client,
        state,
        store: operator.store.clone(),
        operator,
        clock,
        settings,
        metrics_address,
        handle,
        _dir: dir,
    }
}

/// One Argon2 hash of [`PASSWORD`], computed once per process: test users are many.
async fn password_hash() -> String {
    static HASH: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();
    HASH.get_or_init(|| async {
        PasswordHasher::default()
            .hash(PASSWORD.to_owned())
            .await
            .unwrap()
    })
    .await
    .clone()
}

/// A response read as status and JSON (`Value::Null` for an empty or non-JSON body).
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Reply {
    /// Asserts the error envelope with `status` and `code`.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: i64) {
        assert_eq!(self.status.as_u16(), status, "status of {:?}", self.body);
        assert_eq!(self.body["code"], code, "code of {:?}", self.body);
        assert!(
            self.body["name"].is_string() && self.body["message"].is_string(),
            "envelope {:?}",
            self.body
        );
    }

    #[track_caller]
    pub fn assert_ok(&self) -> &Value {
        assert_eq!(self.status, StatusCode::OK, "{:?}", self.body);
        &self.body
    }
}

impl TestApp {
    /// Writes to the store directly, as the operator's command line does: one transaction,
    /// recorded as the operator's work. For arranging what no door can make (a back-dated row).
    pub async fn operator_writes<T>(
        &self,
        work: impl AsyncFnOnce(&tacho::store::Tx) -> tacho::store::StoreResult<T>,
    ) -> T {
        self.store
            .write(tacho::store::Unaudited::Operator, work)
            .await
            .expect("operator's write")
    }

    /// The job queue's own work, as the scheduler does it.
    pub async fn queue_writes<T>(
        &self,
        work: impl AsyncFnOnce(&tacho::store::Tx) -> tacho::store::StoreResult<T>,
    ) -> T {
        self.store
            .write(tacho::store::Unaudited::Workers, work)
            .await
            .expect("queue's write")
    }

    /// A second server on the same database and clock, as a second instance of a deployment.
    pub async fn second_instance(&self) -> TestApp {
        self.second_instance_with(|_| {}).await
    }

    /// Like [`TestApp::second_instance`], letting the test adjust its settings first.
    pub async fn second_instance_with(&self, adjust: impl FnOnce(&mut Settings)) -> TestApp {
        let dir = tempfile::tempdir().expect("temporary directory");
        let options = BuildOptions {
            migrate: false,
            clock: self.clock.clone(),
        };
        let mut settings = self.settings.clone();
        adjust(&mut settings);
        let app = Application::build(settings.clone(), options)
            .await
            .expect("second instance builds");
        let address = format!("http://127.0.0.1:{}", app.port());
        let (state, operator, handle) = (app.state(), app.operator(), app.handle());
        let metrics_address = app
            .metrics_port()
            .map(|port| format!("http://127.0.0.1:{port}"));
        tokio::spawn(app.run_until_stopped());
        TestApp {
            address,
            client: self.client.clone(),
            state,
            store: operator.store.clone(),
            operator,
            clock: self.clock.clone(),
            settings,
            metrics_address,
            handle,
            _dir: dir,
        }
    }

    /// A URL on the server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    /// Sends a request with an optional bearer token and JSON body.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> Reply {
        let mut request = self.client.request(method, self.url(path));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        read(request.send().await.expect("request sent")).await
    }

    pub async fn get(&self, path: &str, token: &str) -> Reply {
        self.request(Method::GET, path, Some(token), None).await
    }

    pub async fn put(&self, path: &str, token: &str, body: Value) -> Reply {
        self.request(Method::PUT, path, Some(token), Some(body))
            .await
    }

    pub async fn post(&self, path: &str, token: &str, body: Value) -> Reply {
        self.request(Method::POST, path, Some(token), Some(body))
            .await
    }

    pub async fn delete(&self, path: &str, token: &str, body: Option<Value>) -> Reply {
        self.request(Method::DELETE, path, Some(token), body).await
    }

    /// Posts a raw body with a content type.
    pub async fn post_raw(
        &self,
        path: &str,
        token: Option<&str>,
        content_type: &str,
        body: impl Into<reqwest::Body>,
    ) -> Reply {
        let mut request = self
            .client
            .post(self.url(path))
            .header("Content-Type", content_type)
            .body(body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        read(request.send().await.expect("request sent")).await
    }

    /// Asks the token endpoint for a password grant.
    pub async fn password_grant(&self, email: &str, password: &str) -> Reply {
        let body = json!({"grant_type": "password", "username": email, "password": password});
        self.request(Method::POST, "/auth/v2/oauth2/tokens", None, Some(body))
            .await
    }

    /// A token of the demo account `email` (seeded by `tacho::demo::seed`).
    pub async fn demo_token(&self, email: &str) -> String {
        let grant = self.password_grant(email, tacho::demo::DEMO_PASSWORD).await;
        grant.assert_ok()["access_token"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Logs in through the client SDK.
    pub async fn sign_in(&self, email: &str) -> tacho_client::Client {
        tacho_client::Client::login(&self.address, email, PASSWORD)
            .await
            .expect("login")
    }

    /// Logs in and returns the access token.
    pub async fn login(&self, email: &str) -> String {
        self.sign_in(email).await.tokens().access_token
    }

    /// Creates a user directly in the store (registration itself is tested separately) and
    /// logs it in.
    pub async fn user(&self, name: &str) -> TestUser {
        self.user_with(name, false).await
    }

    /// Creates an administrator and logs it in.
    pub async fn admin(&self, name: &str) -> TestUser {
        self.user_with(name, true).await
    }

    async fn user_with(&self, name: &str, admin: bool) -> TestUser {
        let email = format!("{name}@tacho.test");
        let new = NewUser {
            email: email.clone(),
            password_hash: password_hash().await,
            first_name: name.to_owned(),
            last_name: "Tester".into(),
            phone_number: None,
            language: "EN".into(),
            time_zone: "Europe/Brussels".into(),
            roles: if admin {
                vec!["admin".into()]
            } else {
                Vec::new()
            },
            password_change_due: false,
        };
        let user = self
            .operator_writes(async |tx| tx.create_user(new).await)
            .await;
        let client = self.sign_in(&email).await;
        assert_eq!(client.user_id(), user.id.to_string());
        TestUser {
            id: user.id.to_string(),
            email,
            token: client.tokens().access_token,
            client,
        }
    }

    /// Creates a group (as `admin`) and returns its id.
    pub async fn group(&self, admin: &TestUser, name: &str) -> String {
        let reply = self
            .post("/groups/v1", &admin.token, json!({"name": name}))
            .await;
        reply.assert_ok()["id"].as_str().unwrap().to_owned()
    }

    /// Enlists `patient` in `group` for 30 days (as `admin`).
    pub async fn enlist_patient(&self, admin: &TestUser, patient: &TestUser, group: &str) {
        let expiry = self.clock_millis() + 30 * 24 * 3600 * 1000;
        let path = format!("/users/v1/{}/patient_enlistments", patient.id);
        self.post(
            &path,
            &admin.token,
            json!({"group_id": group, "expiry_timestamp": expiry}),
        )
        .await
        .assert_ok();
    }

    /// Makes `staff` a physician of `group` (as `admin`).
    pub async fn enlist_staff(&self, admin: &TestUser, staff: &TestUser, group: &str) {
        let path = format!("/users/v1/{}/staff_enlistments", staff.id);
        self.post(&path, &admin.token, json!({"group_id": group}))
            .await
            .assert_ok();
    }

    /// The injected clock, in epoch ms.
    pub fn clock_millis(&self) -> i64 {
        use tacho::domain::clock::Clock;
        self.clock.now_millis()
    }
}

/// Reads a response.
pub async fn read(response: reqwest::Response) -> Reply {
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.bytes().await.unwrap_or_default();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Reply {
        status,
        headers,
        body,
    }
}

/// Two groups, a physician in each, two patients in group A and one in group B, an admin:
/// the cast of the authorisation matrix.
pub struct World {
    pub admin: TestUser,
    pub group_a: String,
    pub group_b: String,
    pub staff_a: TestUser,
    pub staff_b: TestUser,
    pub patient: TestUser,
    pub other_patient: TestUser,
    pub patient_b: TestUser,
}

impl World {
    pub async fn new(app: &TestApp) -> World {
        let admin = app.admin("admin").await;
        let group_a = app.group(&admin, "Group A").await;
        let group_b = app.group(&admin, "Group B").await;
        let staff_a = app.user("staff_a").await;
        let staff_b = app.user("staff_b").await;
        let patient = app.user("patient").await;
        let other_patient = app.user("other_patient").await;
        let patient_b = app.user("patient_b").await;
        app.enlist_staff(&admin, &staff_a, &group_a).await;
        app.enlist_staff(&admin, &staff_b, &group_b).await;
        app.enlist_patient(&admin, &patient, &group_a).await;
        app.enlist_patient(&admin, &other_patient, &group_a).await;
        app.enlist_patient(&admin, &patient_b, &group_b).await;
        World {
            admin,
            group_a,
            group_b,
            staff_a,
            staff_b,
            patient,
            other_patient,
            patient_b,
        }
    }
}

/// A minute of beat-to-beat intervals (ms) at `bpm`, regular but for the few milliseconds of
/// variation a resting heart has.
pub fn regular_rr(bpm: f64) -> Vec<f64> {
    let mean = 60_000.0 / bpm;
    let count = (60_000.0 / mean).round() as usize;
    (0..count)
        .map(|i| (mean * (1.0 + [0.0, 0.007, -0.005, 0.004, -0.006][i % 5]) * 10.0).round() / 10.0)
        .collect()
}

/// A minute of irregularly irregular intervals around `bpm`, as in atrial fibrillation: each
/// drawn uniformly within ±30 % of the mean, from a generator seeded with `seed`.
pub fn irregular_rr(bpm: f64, seed: u64) -> Vec<f64> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mean = 60_000.0 / bpm;
    let count = (60_000.0 / mean).round() as usize;
    (0..count)
        .map(|_| (mean * rng.random_range(0.7..1.3) * 10.0).round() / 10.0)
        .collect()
}

/// Whether two JSON values are equal, numbers up to their last bits: serde_json's default
/// number parsing may land one unit in the last place off the printed value, so a number that
/// went through the database and the wire once more than another may differ there.
pub fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => {
                x == y || (x - y).abs() <= 4.0 * f64::EPSILON * x.abs().max(y.abs())
            }
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// A measurement payload from `tests/fixtures/`.
pub fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect("fixture exists"))
        .expect("fixture is JSON")
}

fn poppler(tool: &str, args: &[&str], pdf: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.pdf");
    std::fs::write(&path, pdf).unwrap();
    let output = std::process::Command::new(tool)
        .args(args)
        .arg(&path)
        .args(if tool == "pdftotext" {
            &["-"][..]
        } else {
            &[][..]
        })
        .output()
        .unwrap_or_else(|e| panic!("{tool} (poppler-utils) must be installed: {e}"));
    assert!(
        output.status.success(),
        "{tool} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The text layer of a PDF, as `pdftotext` extracts it.
pub fn pdf_text(pdf: &[u8]) -> String {
    poppler("pdftotext", &[], pdf)
}

/// A word of a PDF's text layer with its box, in points from the page's top left.
#[derive(Debug, Clone)]
pub struct PdfWord {
    pub page: usize,
    pub text: String,
    pub x: (f64, f64),
    pub y: (f64, f64),
}

/// Every word of a PDF with its box, as `pdftotext -bbox` gives them.
pub fn pdf_words(pdf: &[u8]) -> Vec<PdfWord> {
    let html = poppler("pdftotext", &["-bbox"], pdf);
    let mut words = Vec::new();
    for (page, body) in html.split("<page ").skip(1).enumerate() {
        for element in body.split("<word ").skip(1) {
            let attribute = |name: &str| -> f64 {
                let start = element.find(&format!("{name}=\"")).expect(name) + name.len() + 2;
                let end = start + element[start..].find('"').unwrap();
                element[start..end].parse().unwrap()
            };
            let text = element
                .split_once('>')
                .and_then(|(_, rest)| rest.split_once("</word>"))
                .map(|(text, _)| text.to_owned())
                .unwrap_or_default();
            words.push(PdfWord {
                page,
                text,
                x: (attribute("xMin"), attribute("xMax")),
                y: (attribute("yMin"), attribute("yMax")),
            });
        }
    }
    words
}

/// Asserts that no two words on one line of a PDF overlap: text that runs into its
/// neighbour, like a header wider than its column. Words are on one line when their boxes'
/// bottoms (the font's descent under a shared baseline) lie within a point; boxes may touch,
/// but more than half a point of overlap across is a collision. (Boxes span the font's whole
/// ascent and descent, so words on lines of different sizes may overlap without touching.)
#[track_caller]
pub fn assert_no_overlapping_words(pdf: &[u8], what: &str) {
    const SLACK: f64 = 0.5;
    let words = pdf_words(pdf);
    assert!(!words.is_empty(), "{what}: no text layer");
    for (i, a) in words.iter().enumerate() {
        for b in &words[i + 1..] {
            let one_line = a.page == b.page && (a.y.1 - b.y.1).abs() <= 1.0;
            let across = a.x.1.min(b.x.1) - a.x.0.max(b.x.0);
            assert!(
                !one_line || across <= SLACK,
                "{what}: `{}` and `{}` overlap on page {} by {across:.1} pt",
                a.text,
                b.text,
                a.page + 1
            );
        }
    }
}

/// Every file under `dir`, recursively (temporary ones included); none for a missing folder.
pub fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|entry| {
            let path = entry.path();
            if path.is_dir() {
                files_under(&path)
            } else {
                vec![path]
            }
        })
        .collect()
}

/// Keeps a file a test made (a PDF, a screenshot) under `target/test-artifacts/`, for people
/// to look at after the run.
pub fn save_artifact(name: &str, bytes: &[u8]) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(dir.join(name), bytes);
    }
}

/// The number of pages of a PDF, as `pdfinfo` reports it.
pub fn pdf_pages(pdf: &[u8]) -> usize {
    poppler("pdfinfo", &[], pdf)
        .lines()
        .find_map(|line| line.strip_prefix("Pages:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("pdfinfo prints the page count")
}

/// The font table of a PDF, as `pdffonts` prints it.
pub fn pdf_fonts(pdf: &[u8]) -> String {
    poppler("pdffonts", &[], pdf)
}

impl TestApp {
    /// A scheduler of this server's job queue, on the test's clock, as `tacho serve` runs it.
    pub fn scheduler(&self) -> Scheduler {
        Scheduler::new(
            self.store.clone(),
            self.operator.notifier.clone(),
            SchedulerOptions::default(),
        )
    }

    /// Works the job queue (reports and notifications) until nothing is left to claim now.
    pub async fn work_queue(&self) -> RunSummary {
        self.scheduler()
            .work(|_| {})
            .await
            .expect("the queue is worked")
    }

    /// `admin` asks for the erasure of `patient`, a user made by [`TestApp::user`] (so named
    /// `<name> Tester`, which the request confirms), and the queue is worked until it is done.
    pub async fn erase(&self, admin: &TestUser, patient: &TestUser) {
        let name = patient.email.split('@').next().unwrap_or_default();
        let asked = self
            .post(
                &format!("/users/v1/{}/erasure", patient.id),
                &admin.token,
                json!({"confirmation": format!("{name} Tester")}),
            )
            .await;
        assert_eq!(asked.status, 202, "{}", asked.body);
        self.work_queue().await;
    }

    /// Sets `user`'s language (an upper-case code, as on the wire).
    pub async fn set_language(&self, user: &TestUser, code: &str) {
        self.put(
            &format!("/users/v1/{}", user.id),
            &user.token,
            json!({"language": code}),
        )
        .await
        .assert_ok();
    }

    /// Posts a measurement payload as `user`.
    pub async fn measure(&self, user: &TestUser, payload: Value) -> tacho_client::Measurement {
        user.client
            .post_measurement(&payload)
            .await
            .expect("measurement stored")
    }

    /// Posts a measurement taken at `at` (epoch ms) whose beat-to-beat intervals really have
    /// the rhythm `kind`, and returns its id once the server's analysis agreed:
    /// - `normal`: a regular series at `heartrate` (50–100 bpm): sinus rhythm, `normal`;
    /// - `irregular`: an irregularly irregular series around `heartrate` (random, seeded by
    ///   `at`): possible atrial fibrillation, `urgent`;
    /// - `bradycardia` / `tachycardia`: a regular series at `heartrate` when it is below 50 or
    ///   above 100 bpm, else at 44 or 125 bpm: `warning` with that label.
    ///
    /// The phone's `heartrate` is sent as the series' rate.
    pub async fn measure_at(
        &self,
        user: &TestUser,
        at: i64,
        heartrate: f64,
        kind: &str,
        symptoms: &[&str],
    ) -> String {
        let (rate, intervals, indicator, label) = match kind {
            "normal" => {
                assert!((50.0..=100.0).contains(&heartrate), "{heartrate} bpm");
                (heartrate, regular_rr(heartrate), "normal", "sinus_rhythm")
            }
            // Seeded by the rate, not the time: the times follow the wall clock, and a
            // series drawn anew in every run would make a screening miss a lottery.
            "irregular" => (
                heartrate,
                irregular_rr(heartrate, heartrate.to_bits()),
                "urgent",
                "atrial_fibrillation",
            ),
            "bradycardia" => {
                let rate = if heartrate < 50.0 { heartrate } else { 44.0 };
                (rate, regular_rr(rate), "warning", "bradycardia")
            }
            "tachycardia" => {
                let rate = if heartrate > 100.0 { heartrate } else { 125.0 };
                (rate, regular_rr(rate), "warning", "tachycardia")
            }
            other => panic!("no test rhythm `{other}`"),
        };
        let payload = json!({
            "measurement_timestamp": at,
            "heartrate": rate,
            "rr_intervals": intervals,
            "context": {"symptoms": symptoms, "activity": "resting"},
        });
        let measurement = self.measure(user, payload).await;
        assert_eq!(
            measurement.data["indicator"], indicator,
            "a {kind} series at {rate} bpm: {}",
            measurement.data["analysis"]
        );
        let labels = &measurement.data["analysis"]["rhythm"]["labels"];
        assert!(
            labels.as_array().unwrap().contains(&json!(label)),
            "a {kind} series at {rate} bpm: {labels}"
        );
        measurement.id
    }

    /// A second later, `staff` reviews measurement `id` (conclusion `sinus_rhythm`, the
    /// clinical note [`CLINICAL_NOTE`] and the note to the patient "Sinus rhythm, no pauses"),
    /// which puts its latest report out of date (interface rule 3.1).
    pub async fn review(&self, staff: &TestUser, id: &str) {
        self.clock.advance(chrono::Duration::seconds(1));
        let review = tacho_client::MeasurementUpdate {
            diagnosis: Some(CLINICAL_NOTE.into()),
            label: Some("sinus_rhythm".into()),
            patient_note: Some("Sinus rhythm, no pauses".into()),
            ..Default::default()
        };
        staff
            .client
            .update_measurement(id, &review)
            .await
            .expect("review stored");
    }

    /// Uploads the fixture `name` with the bearer `token` over raw HTTP (a token fresher than
    /// the one the user's client holds) and returns the measurement's id.
    pub async fn upload_with(&self, token: &str, name: &str) -> String {
        self.post("/data/v1/measurements/documents", token, fixture(name))
            .await
            .assert_ok()["id"]
            .as_str()
            .expect("an id")
            .to_owned()
    }

    /// Posts the fixture `name` as `user`'s measurement and returns its id.
    pub async fn measurement_id(&self, user: &TestUser, name: &str) -> String {
        self.measure(user, fixture(name)).await.id
    }

    /// Asks for a report of a measurement.
    pub async fn report(
        &self,
        user: &TestUser,
        measurement_id: &str,
        language: Option<&str>,
    ) -> Reply {
        let mut body = json!({"measurementId": measurement_id});
        if let Some(language) = language {
            body["language"] = json!(language);
        }
        self.post("/data/v1/measurement-reports/documents", &user.token, body)
            .await
    }

    /// Downloads a file by its token, without authentication.
    pub async fn download(
        &self,
        token: &str,
    ) -> (reqwest::StatusCode, reqwest::header::HeaderMap, Vec<u8>) {
        let response = self
            .client
            .get(self.url(&format!("/files/v1/{token}/file")))
            .send()
            .await
            .expect("download");
        let status = response.status();
        let headers = response.headers().clone();
        (
            status,
            headers,
            response.bytes().await.unwrap_or_default().to_vec(),
        )
    }

    /// A report's PDF: asks for the report and downloads it.
    pub async fn report_pdf(
        &self,
        user: &TestUser,
        measurement_id: &str,
        language: Option<&str>,
    ) -> (Value, Vec<u8>) {
        let reply = self.report(user, measurement_id, language).await;
        let document = reply.assert_ok().clone();
        let token = document["data"]["readFileToken"]
            .as_str()
            .expect("token")
            .to_owned();
        let (status, _, pdf) = self.download(&token).await;
        assert_eq!(status, 200);
        (document, pdf)
    }
}

/// The text layer of a PDF with its layout kept (`pdftotext -layout`).
pub fn pdf_layout_text(pdf: &[u8]) -> String {
    poppler("pdftotext", &["-layout"], pdf)
}

/// Asserts that the server refused a call with `status` and `code`.
#[track_caller]
pub fn assert_refused<T: std::fmt::Debug>(
    result: Result<T, tacho_client::Error>,
    status: u16,
    code: i64,
) {
    match result {
        Err(tacho_client::Error::Api(refused)) => {
            assert_eq!((refused.status, refused.code), (status, code), "{refused}");
            assert!(!refused.name.is_empty() && !refused.message.is_empty());
        }
        other => panic!("expected HTTP {status} code {code}, got {other:?}"),
    }
}

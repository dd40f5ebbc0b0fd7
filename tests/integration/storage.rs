//! `TACHO_FILE_STORAGE=s3` against a real S3-compatible server on loopback (moto), two
//! instances sharing one bucket, `tacho files migrate --to s3`, and `tacho backup`.
//!
//! moto comes from PyPI: `scripts/test` installs it into a venv under `target/` and names its
//! `moto_server` in `TACHO_MOTO_SERVER`; without one the S3 tests say so and pass.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::Duration;
use tacho::config::ExposeSecret;

use reqwest::Method;
use tacho::config::{FileStorageKind, S3Options, Settings};

use crate::helpers::{Spawned, TestApp, World, files_under, spawn_app, spawn_app_with};

/// A moto server on a loopback port, stopped when dropped.
pub struct Moto {
    child: Spawned,
    port: u16,
    http: reqwest::Client,
}

impl Moto {
    /// `TACHO_MOTO_SERVER`, else the venv `scripts/test` makes.
    fn program() -> Option<PathBuf> {
        if let Some(program) = std::env::var_os("TACHO_MOTO_SERVER") {
            return Some(PathBuf::from(program));
        }
        let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/s3-env/bin/moto_server");
        venv.exists().then_some(venv)
    }

    /// A fresh server; where moto is not installed the test fails, unless
    /// `TACHO_TEST_WITHOUT_MOTO=1` passes it over (`None`).
    pub async fn start() -> Option<Moto> {
        let Some(program) = Self::program() else {
            crate::helpers::without(
                "MOTO",
                "moto_server is not installed (scripts/test installs it in target/s3-env)",
            );
            return None;
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Some(Self::start_on(program, port).await)
    }

    async fn start_on(program: PathBuf, port: u16) -> Moto {
        let child = Spawned::start(
            Command::new(&program)
                .args(["-H", "127.0.0.1", "-p", &port.to_string()])
                .stdout(Stdio::null())
                .stderr(Stdio::null()),
        )
        .unwrap_or_else(|err| panic!("{} does not start: {err}", program.display()));
        let moto = Moto {
            child,
            port,
            http: reqwest::Client::new(),
        };
        for _ in 0..300 {
            if moto.http.get(moto.url("/moto-api/")).send().await.is_ok() {
                return moto;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("moto_server did not answer on port {port} within 15 s");
    }

    /// The same server started again on the same port, empty (moto keeps nothing on disk).
    async fn restart(mut self) -> Moto {
        let program = Self::program().unwrap();
        self.child.stop();
        Self::start_on(program, self.port).await
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub async fn create_bucket(&self, bucket: &str) {
        let created = self.http.put(self.url(&format!("/{bucket}"))).send().await;
        assert!(created.unwrap().status().is_success(), "bucket created");
    }

    /// The keys in `bucket`, read with a plain ListObjectsV2 rather than through Tacho.
    pub async fn keys(&self, bucket: &str) -> Vec<String> {
        let listing = self
            .http
            .get(self.url(&format!("/{bucket}?list-type=2")))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        listing
            .split("<Key>")
            .skip(1)
            .filter_map(|rest| rest.split_once("</Key>").map(|(key, _)| key.to_owned()))
            .collect()
    }

    /// The `AWS_*` variables that point at `bucket` on this server.
    fn variables(&self, bucket: &str) -> Vec<(String, String)> {
        [
            ("AWS_ENDPOINT", self.url("")),
            ("AWS_BUCKET", bucket.to_owned()),
            ("AWS_ACCESS_KEY_ID", "tacho-test".to_owned()),
            ("AWS_SECRET_ACCESS_KEY", "tacho-test-secret".to_owned()),
            ("AWS_REGION", "us-east-1".to_owned()),
            ("AWS_ALLOW_HTTP", "true".to_owned()),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect()
    }

    /// Settings that keep files in `bucket` (and sessions in Redis, when the tests have one).
    pub fn configure(&self, settings: &mut Settings, bucket: &str) {
        settings.file_storage = FileStorageKind::S3;
        settings.s3 = S3Options(self.variables(bucket));
        if let Ok(redis) = std::env::var("TEST_REDIS_URL") {
            settings.redis_url = Some(redis.into());
        }
    }
}

/// The token of `patient`'s report of `measurement` in `language`.
async fn report_token(app: &TestApp, world: &World, measurement: &str, language: &str) -> String {
    app.report(&world.patient, measurement, Some(language))
        .await
        .assert_ok()["data"]["readFileToken"]
        .as_str()
        .expect("a token")
        .to_owned()
}

#[tokio::test]
async fn two_instances_serve_each_others_pdfs_from_one_bucket() {
    let Some(moto) = Moto::start().await else {
        return;
    };
    moto.create_bucket("tacho-shared").await;
    let app = spawn_app_with(|s| moto.configure(s, "tacho-shared")).await;
    let other_dir = tempfile::tempdir().unwrap();
    let other = app
        .second_instance_with(|s| s.data_dir = other_dir.path().to_owned())
        .await;
    let world = World::new(&app).await;
    let first = app.measurement_id(&world.patient, "sinus_72").await;
    let second = other.measurement_id(&world.patient, "sinus_72").await;

    // Each instance renders one PDF; the other serves it from the bucket.
    let from_app = report_token(&app, &world, &first, "en").await;
    let from_other = report_token(&other, &world, &second, "nl").await;
    for (token, renderer, reader) in [(&from_app, &app, &other), (&from_other, &other, &app)] {
        let (status, _, served) = reader.download(token).await;
        assert_eq!(status, 200);
        assert!(served.starts_with(b"%PDF"));
        let (_, _, rendered) = renderer.download(token).await;
        assert_eq!(served, rendered, "the same bytes from both instances");
    }
    let keys = moto.keys("tacho-shared").await;
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(keys.iter().all(|key| key.starts_with("files/")));
    for instance in [&app, &other] {
        let local = files_under(&instance.settings.data_dir.join("files"));
        assert!(local.is_empty(), "nothing on the local disk: {local:?}");
    }
    // The second instance asks for the first one's report: the same file, not a new render.
    let again = report_token(&other, &world, &first, "en").await;
    assert_eq!(
        again.split_once('-').map(|(id, _)| id),
        from_app.split_once('-').map(|(id, _)| id)
    );
    assert_eq!(moto.keys("tacho-shared").await.len(), 2);
}

#[tokio::test]
async fn readiness_follows_the_bucket() {
    let Some(moto) = Moto::start().await else {
        return;
    };
    moto.create_bucket("tacho-ready").await;
    let app = spawn_app_with(|s| moto.configure(s, "tacho-ready")).await;
    let ready = app.request(Method::GET, "/health/ready", None, None).await;
    assert_eq!(ready.assert_ok()["storage"], "ok");

    let mut moto = moto;
    moto.child.stop();
    let down = app.request(Method::GET, "/health/ready", None, None).await;
    down.assert_error(503, 503);
    assert_eq!(down.body["storage"], "unavailable");
    assert_eq!(down.body["database"], "ok");
    assert_eq!(down.headers["retry-after"], "5");
    assert!(
        !down.body.to_string().contains("tacho-test-secret"),
        "no secret in the answer"
    );

    let moto = moto.restart().await;
    moto.create_bucket("tacho-ready").await;
    let back = app.request(Method::GET, "/health/ready", None, None).await;
    assert_eq!(back.assert_ok()["storage"], "ok");
}

/// Runs the `tacho` binary on `app`'s database and data folder with extra variables.
fn tacho(app: &TestApp, args: &[&str], variables: &[(String, String)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tacho"));
    command
        .args(args)
        .env(
            "TACHO_DATABASE_URL",
            app.settings.database_url.expose_secret(),
        )
        .env("TACHO_DATA_DIR", &app.settings.data_dir)
        .env("TACHO_FILE_STORAGE", "local")
        .env("TACHO_LOG", "warn");
    for (name, value) in variables {
        command.env(name, value);
    }
    command.output().expect("tacho runs")
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
async fn files_migrate_moves_local_files_to_s3_and_resumes() {
    let Some(moto) = Moto::start().await else {
        return;
    };
    moto.create_bucket("tacho-migrated").await;
    let app = spawn_app().await;
    let world = World::new(&app).await;
    let measurement = app.measurement_id(&world.patient, "sinus_72").await;
    let mut tokens = Vec::new();
    for language in ["en", "de", "ar"] {
        tokens.push(report_token(&app, &world, &measurement, language).await);
    }
    let variables = moto.variables("tacho-migrated");

    let first = stdout(&tacho(
        &app,
        &["files", "migrate", "--to", "s3"],
        &variables,
    ));
    assert!(
        first.contains("3 copied, 0 already there, 0 missing, 0 failed"),
        "{first}"
    );
    assert!(first.contains("from local to s3"), "{first}");

    // What an interrupted run leaves is some files copied and some not, as after this new
    // render: the next run copies only the missing one.
    assert_eq!(moto.keys("tacho-migrated").await.len(), 3);
    tokens.push(report_token(&app, &world, &measurement, "zh").await);
    let resumed = stdout(&tacho(
        &app,
        &["files", "migrate", "--to", "s3"],
        &variables,
    ));
    assert!(resumed.contains("1 copied, 3 already there"), "{resumed}");
    assert_eq!(moto.keys("tacho-migrated").await.len(), 4);

    // An instance on the bucket alone (another data folder) serves every migrated PDF,
    // byte for byte.
    let other_dir = tempfile::tempdir().unwrap();
    let other = app
        .second_instance_with(|s| {
            moto.configure(s, "tacho-migrated");
            s.data_dir = other_dir.path().to_owned();
        })
        .await;
    for token in &tokens {
        let (_, _, local) = app.download(token).await;
        let (status, _, migrated) = other.download(token).await;
        assert_eq!(status, 200);
        assert_eq!(migrated, local);
    }

    let same = tacho(&app, &["files", "migrate", "--to", "local"], &variables);
    assert!(!same.status.success());
    assert!(String::from_utf8_lossy(&same.stderr).contains("already local"));
}

#[tokio::test]
async fn a_backup_taken_while_serving_restores_every_report() {
    let app = spawn_app().await;
    let target = tempfile::tempdir().unwrap();
    let backup_dir = target.path().join("backup");
    if !app
        .settings
        .database_url
        .expose_secret()
        .starts_with("sqlite:")
    {
        // PostgreSQL has its own tools; the command says so rather than copy half a deployment.
        let refused = tacho(&app, &["backup", "--to", backup_dir.to_str().unwrap()], &[]);
        assert!(!refused.status.success());
        assert!(String::from_utf8_lossy(&refused.stderr).contains("pg_dump"));
        return;
    }
    let world = World::new(&app).await;
    let measurement = app.measurement_id(&world.patient, "sinus_72").await;
    let mut pdfs = Vec::new();
    for language in ["en", "zh", "fr"] {
        let token = report_token(&app, &world, &measurement, language).await;
        let (_, _, pdf) = app.download(&token).await;
        pdfs.push((token, pdf));
    }
    let me_before = app.get("/users/v1/me", &world.patient.token).await;

    // Taken while the server keeps writing: a measurement goes in during the copy.
    let writer = {
        let app_url = app.url("/data/v1/measurements/documents");
        let client = app.client.clone();
        let token = world.patient.token.clone();
        tokio::spawn(async move {
            client
                .post(app_url)
                .bearer_auth(token)
                .json(&crate::helpers::fixture("sinus_72"))
                .send()
                .await
                .map(|r| r.status())
        })
    };
    let printed = stdout(&tacho(
        &app,
        &["backup", "--to", backup_dir.to_str().unwrap()],
        &[],
    ));
    assert_eq!(writer.await.unwrap().unwrap(), 200);
    assert!(printed.contains("3 files"), "{printed}");
    let leftovers: Vec<_> = files_under(&backup_dir)
        .into_iter()
        .filter(|path| path.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // It holds health data and the server's secrets: only its owner may read it.
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode();
        assert_eq!(mode(&backup_dir) & 0o777, 0o700, "the backup folder");
        assert_eq!(
            mode(&backup_dir.join("tacho.db")) & 0o777,
            0o600,
            "the database"
        );
        assert_eq!(
            mode(&backup_dir.join("files")) & 0o777,
            0o700,
            "the files folder"
        );
        let files = files_under(&backup_dir);
        assert!(files.len() >= 4, "{files:?}");
        for file in files {
            assert_eq!(mode(&file) & 0o777, 0o600, "{}", file.display());
        }
    }

    // A second backup into the same folder is refused rather than mixed in.
    let again = tacho(&app, &["backup", "--to", backup_dir.to_str().unwrap()], &[]);
    assert!(!again.status.success());

    // Restored: a server on the copy alone serves every report and the same account.
    let restored = spawn_app_with(|s| {
        s.data_dir = backup_dir.clone();
        s.database_url =
            format!("sqlite://{}?mode=rw", backup_dir.join("tacho.db").display()).into();
    })
    .await;
    for (token, pdf) in &pdfs {
        let (status, _, copy) = restored.download(token).await;
        assert_eq!(status, 200);
        assert_eq!(&copy, pdf, "the same PDF");
    }
    let me_after = restored.get("/users/v1/me", &world.patient.token).await;
    for field in ["id", "email", "firstName", "lastName"] {
        assert_eq!(
            me_after.assert_ok()[field],
            me_before.assert_ok()[field],
            "{field}"
        );
    }
    let reports = restored
        .get(
            "/data/v1/measurement-reports/documents",
            &world.patient.token,
        )
        .await;
    assert_eq!(reports.assert_ok()["data"].as_array().unwrap().len(), 3);
}

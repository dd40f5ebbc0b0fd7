//! Configuration from `TACHO_*` environment variables, each with a default that runs locally.
//!
//! Each variable is declared once, in [`Environment`]: its name (clap's `env`), its default and
//! its parser. clap does the reading and the checking, and names the variable when a value is
//! refused; [`Settings`] is what the rest of the service sees, with the defaults that depend on
//! other settings filled in.

use std::ffi::OsString;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{CommandFactory, FromArgMatches, Parser, ValueEnum};
pub use secrecy::ExposeSecret;
use secrecy::SecretString;

pub use crate::telemetry::LogFormat;

/// How long cached token and user lookups may be served unless `TACHO_CACHE_TTL_MS` says
/// otherwise (see `store::cache`).
pub const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(2);

/// Where file contents are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FileStorageKind {
    /// `TACHO_DATA_DIR/files`.
    Local,
    /// The `file_blobs` table, shared by every instance on the database.
    Database,
    /// An S3-compatible object store, configured by the standard `AWS_*` variables (see
    /// [`S3_VARIABLES`]), shared by every instance that names the same bucket.
    S3,
}

impl FileStorageKind {
    /// The name `TACHO_FILE_STORAGE` gives it.
    pub fn name(self) -> &'static str {
        match self {
            FileStorageKind::Local => "local",
            FileStorageKind::Database => "database",
            FileStorageKind::S3 => "s3",
        }
    }
}

/// The `AWS_*` variables read for [`FileStorageKind::S3`], as the AWS tools and the
/// `object_store` crate name them: the bucket, the endpoint of an S3-compatible server, the
/// credentials and the region. Unset ones keep `object_store`'s defaults (credentials from the
/// instance's role, say).
pub const S3_VARIABLES: &[&str] = &[
    "AWS_BUCKET",
    "AWS_BUCKET_NAME",
    "AWS_ENDPOINT",
    "AWS_ENDPOINT_URL",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ALLOW_HTTP",
    "AWS_VIRTUAL_HOSTED_STYLE_REQUEST",
    "AWS_SERVER_SIDE_ENCRYPTION",
    "AWS_SSE_KMS_KEY_ID",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
];

/// Everything the service is configured with.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `TACHO_DATABASE_URL`: `sqlite://…` or `postgres://…`; default an SQLite file in the data
    /// dir. Secret (it may carry a password): `Debug` shows `[REDACTED]`.
    pub database_url: SecretString,
    /// `TACHO_DATA_DIR`: where the SQLite database and files live; default `./data`.
    pub data_dir: PathBuf,
    /// `TACHO_ADDR`: the addresses to listen on, comma-separated `host:port` entries (see
    /// [`ListenAddr`]); default `127.0.0.1:8080`.
    pub addr: String,
    /// `TACHO_BASE_URL`: the public address, used in links; default `http://` + the address.
    pub base_url: String,
    /// `TACHO_ACCESS_TOKEN_TTL`: access-token lifetime in seconds; default 3600.
    pub access_token_ttl: Duration,
    /// `TACHO_REFRESH_TOKEN_TTL`: refresh-token lifetime in seconds; default 30 days.
    pub refresh_token_ttl: Duration,
    /// `TACHO_LOG_FORMAT`: `pretty` or `json`; default `pretty`.
    pub log_format: LogFormat,
    /// `TACHO_LOG`: a tracing filter such as `info` or `tacho=debug`; default `info`.
    pub log_filter: String,
    /// `TACHO_MAX_BODY_BYTES`: the largest JSON body accepted by account endpoints; default 64 KiB.
    pub max_body_bytes: usize,
    /// `TACHO_WORKERS`: HTTP worker threads; default one per core.
    pub workers: usize,
    /// `TACHO_MAX_MEASUREMENT_BYTES`: the largest measurement upload; default 10 MiB, what a
    /// recording at every bound of [`crate::domain::recording_limits`] takes.
    pub max_measurement_bytes: usize,
    /// `TACHO_FILE_STORAGE`: where PDFs are kept, `local` (under the data dir), `database` or
    /// `s3`.
    pub file_storage: FileStorageKind,
    /// The [`S3_VARIABLES`] that are set, as (name, value): the object store of
    /// `TACHO_FILE_STORAGE=s3` (and the target of `tacho files migrate --to s3`).
    pub s3: S3Options,
    /// `TACHO_LOGIN_RATE`: token requests allowed per client address and minute; default 30.
    pub login_rate_per_minute: u32,
    /// `TACHO_REGISTRATION_RATE`: registrations allowed per client network (/24, /48) and
    /// hour; default 10.
    pub registration_rate_per_hour: u32,
    /// `TACHO_CACHE_TTL_MS`: how long token and user lookups may be served from memory; 0 turns
    /// the cache off; default 2000.
    pub cache_ttl: Duration,
    /// `TACHO_FILE_CACHE_BYTES`: memory for hot stored files (PDFs) served by
    /// `/files/v1/<token>/file`; 0 turns it off; default 64 MiB.
    pub file_cache_bytes: u64,
    /// `TACHO_REDIS_URL`: keep portal sessions in Redis (shared by every instance) instead of
    /// the database; default unset (the database).
    pub redis_url: Option<SecretString>,
    /// `TACHO_SESSION_TTL`: how long a portal session lasts after login, in seconds; default 12 hours.
    pub session_ttl: Duration,
    /// `TACHO_SESSION_IDLE`: a portal session ends after this many seconds without a request;
    /// default 30 minutes.
    pub session_idle: Duration,
    /// `TACHO_LOGIN_LIFETIME`: the longest an API login (a token family) lasts, however often
    /// its refresh token is rotated, in seconds; default 90 days.
    pub login_lifetime: Duration,
    /// `TACHO_SCHEDULER_TICK`: seconds between scheduler ticks in `serve` (periodic reports);
    /// `0` turns the scheduler off in this process; default 60.
    pub scheduler_tick: Option<Duration>,
    /// `TACHO_JOB_LEASE`: seconds a worker holds a claimed job before another may take it;
    /// default 300.
    pub job_lease: Duration,
    /// `TACHO_RETENTION_DAYS`: measurements, reports and files older than this many days,
    /// and accounts deactivated longer, are erased by a daily job; unset (the default) keeps
    /// everything.
    pub retention_days: Option<u32>,
    /// `TACHO_RENDER_DEADLINE`: seconds (fractions allowed, e.g. `0.5`) a PDF render may run
    /// before it is abandoned and the caller answered 503; default 10.
    pub render_deadline: Duration,
    /// `TACHO_SMTP_URL`: the SMTP relay for notification e-mail (`smtp://host:port`,
    /// `smtp://host:port?tls=required`, `smtps://user:password@host`); unset turns e-mail off.
    pub smtp_url: Option<SecretString>,
    /// `TACHO_MAIL_FROM`: the sender of notification e-mail; default `Tacho <noreply@localhost>`.
    pub mail_from: String,
    /// `TACHO_WEBHOOK_ALLOW_LOOPBACK`: `1` admits `http://` webhook addresses on this machine
    /// (tests, local receivers); default `0`.
    pub webhook_allow_loopback: bool,
    /// `TACHO_WEBHOOK_ALLOW_PRIVATE`: `1` admits webhook addresses in private networks
    /// (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7); default `0`, refused.
    pub webhook_allow_private: bool,
    /// `TACHO_METRICS_ADDR`: where `GET /metrics` answers in the Prometheus text format
    /// (`127.0.0.1:9464`); unset (the default) serves no metrics. An address of its own, so
    /// that the public listener never serves them.
    pub metrics_addr: Option<String>,
}

/// The [`S3_VARIABLES`] that are set, as (name, value). Its `Debug` names the variables only:
/// the values include the secret key.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct S3Options(pub Vec<(String, String)>);

impl std::fmt::Debug for S3Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(name, _)| name))
            .finish()
    }
}

/// One entry of `TACHO_ADDR`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenAddr {
    /// The entry as written, e.g. `localhost:8080`.
    pub text: String,
    /// The sockets to bind for it. `localhost` names both loopback addresses, 127.0.0.1 and
    /// ::1, because clients resolve it to either (Node, for one, may pick ::1).
    pub sockets: Vec<SocketAddr>,
    /// Whether the entry stands for more than one socket and each may be skipped when the
    /// machine lacks that address family (an IPv4-only host has no ::1).
    pub best_effort: bool,
}

impl ListenAddr {
    /// Parses a comma-separated list of `host:port` entries (`[::1]:8080` for IPv6 literals).
    pub fn parse_list(text: &str) -> anyhow::Result<Vec<ListenAddr>> {
        let entries: Vec<ListenAddr> = text
            .split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(ListenAddr::parse)
            .collect::<anyhow::Result<_>>()?;
        if entries.is_empty() {
            bail!("TACHO_ADDR names no address");
        }
        Ok(entries)
    }

    fn parse(entry: &str) -> anyhow::Result<ListenAddr> {
        let (host, port) = entry
            .rsplit_once(':')
            .with_context(|| format!("TACHO_ADDR entry `{entry}` must be host:port"))?;
        let port: u16 = port
            .parse()
            .with_context(|| format!("TACHO_ADDR entry `{entry}` has no valid port"))?;
        let (sockets, best_effort) = if host.eq_ignore_ascii_case("localhost") {
            let v4 = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port);
            let v6 = SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), port);
            (vec![v4, v6], true)
        } else {
            let resolved: Vec<SocketAddr> = entry
                .to_socket_addrs()
                .with_context(|| format!("TACHO_ADDR entry `{entry}` does not resolve"))?
                .collect();
            let first = *resolved
                .first()
                .with_context(|| format!("TACHO_ADDR entry `{entry}` does not resolve"))?;
            (vec![first], false)
        };
        Ok(ListenAddr {
            text: entry.to_owned(),
            sockets,
            best_effort,
        })
    }
}

impl Settings {
    /// The sockets `TACHO_ADDR` names, in order.
    pub fn listen_addrs(&self) -> anyhow::Result<Vec<ListenAddr>> {
        ListenAddr::parse_list(&self.addr)
    }

    /// Reads the process environment.
    pub fn from_env() -> anyhow::Result<Self> {
        Self::from_lookup(|key| std::env::var(key).ok())
    }

    /// Reads settings through `lookup` (a variable's value by its name), so tests need not
    /// touch the process environment. A variable set to blanks counts as unset.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> anyhow::Result<Self> {
        // Each declared variable that has a value becomes `--name=value`; clap then parses,
        // checks and fills in the defaults as it would from the environment itself.
        let command = Environment::command();
        let mut args: Vec<OsString> = Vec::new();
        let mut names = Vec::new();
        for arg in command.get_arguments() {
            let (Some(env), Some(long)) = (arg.get_env(), arg.get_long()) else {
                continue;
            };
            let env = env.to_string_lossy().into_owned();
            if let Some(value) = lookup(&env).filter(|v| !v.trim().is_empty()) {
                args.push(format!("--{long}={}", value.trim()).into());
            }
            names.push((format!("--{long}"), env));
        }
        let matches = command
            .mut_args(|arg| arg.env(None))
            .try_get_matches_from(args)
            .map_err(|err| refused(&err, &names))?;
        let env = Environment::from_arg_matches(&matches).map_err(|err| refused(&err, &names))?;
        let mut settings = env.settings()?;
        settings.s3 = S3Options(
            S3_VARIABLES
                .iter()
                .filter_map(|name| {
                    let value = lookup(name).filter(|v| !v.trim().is_empty())?;
                    Some((name.to_string(), value.trim().to_owned()))
                })
                .collect(),
        );
        Ok(settings)
    }
}

/// A value clap refused, told by the variable's name rather than the flag clap read it as.
fn refused(err: &clap::Error, names: &[(String, String)]) -> anyhow::Error {
    use clap::error::{ContextKind, ContextValue};
    let text = |kind| match err.get(kind) {
        Some(ContextValue::String(s)) => s.clone(),
        _ => String::new(),
    };
    let arg = text(ContextKind::InvalidArg);
    let variable = names
        .iter()
        .find(|(flag, _)| arg.starts_with(flag.as_str()))
        .map(|(_, env)| env.as_str())
        .unwrap_or("a TACHO_ variable");
    let reason = match (
        std::error::Error::source(err),
        err.get(ContextKind::ValidValue),
    ) {
        (Some(cause), _) => cause.to_string(),
        (None, Some(ContextValue::Strings(valid))) => format!("must be {}", valid.join(" or ")),
        (None, _) => err.kind().to_string(),
    };
    anyhow::anyhow!(
        "{variable} = `{}` is refused: {reason}",
        text(ContextKind::InvalidValue)
    )
}

/// Every `TACHO_*` variable: its name, default and parser.
#[derive(Debug, Parser)]
#[command(name = "tacho", no_binary_name = true, disable_help_flag = true)]
struct Environment {
    #[arg(long, env = "TACHO_DATABASE_URL")]
    database_url: Option<String>,
    #[arg(long, env = "TACHO_DATA_DIR", default_value = "./data")]
    data_dir: PathBuf,
    #[arg(long, env = "TACHO_ADDR", default_value = "127.0.0.1:8080")]
    addr: String,
    #[arg(long, env = "TACHO_BASE_URL")]
    base_url: Option<String>,
    #[arg(long, env = "TACHO_ACCESS_TOKEN_TTL", default_value = "3600", value_parser = seconds)]
    access_token_ttl: Duration,
    #[arg(long, env = "TACHO_REFRESH_TOKEN_TTL", default_value = "2592000", value_parser = seconds)]
    refresh_token_ttl: Duration,
    #[arg(
        long,
        env = "TACHO_LOG_FORMAT",
        default_value = "pretty",
        ignore_case = true
    )]
    log_format: LogFormat,
    #[arg(long, env = "TACHO_LOG", default_value = "info")]
    log: String,
    #[arg(long, env = "TACHO_MAX_BODY_BYTES", default_value_t = 64 * 1024)]
    max_body_bytes: usize,
    #[arg(long, env = "TACHO_WORKERS", value_parser = clap::value_parser!(u16).range(1..))]
    workers: Option<u16>,
    #[arg(long, env = "TACHO_MAX_MEASUREMENT_BYTES",
        default_value_t = crate::domain::recording_limits::MAX_MEASUREMENT_BYTES)]
    max_measurement_bytes: usize,
    #[arg(
        long,
        env = "TACHO_FILE_STORAGE",
        default_value = "local",
        ignore_case = true
    )]
    file_storage: FileStorageKind,
    #[arg(long, env = "TACHO_LOGIN_RATE", default_value = "30",
        value_parser = clap::value_parser!(u32).range(1..))]
    login_rate: u32,
    #[arg(long, env = "TACHO_REGISTRATION_RATE", default_value = "10",
        value_parser = clap::value_parser!(u32).range(1..))]
    registration_rate: u32,
    #[arg(long, env = "TACHO_CACHE_TTL_MS",
        default_value_t = DEFAULT_CACHE_TTL.as_millis() as u64)]
    cache_ttl_ms: u64,
    #[arg(long, env = "TACHO_FILE_CACHE_BYTES", default_value_t = 64 * 1024 * 1024)]
    file_cache_bytes: u64,
    #[arg(long, env = "TACHO_REDIS_URL")]
    redis_url: Option<String>,
    #[arg(long, env = "TACHO_SESSION_TTL", default_value = "43200", value_parser = seconds)]
    session_ttl: Duration,
    #[arg(long, env = "TACHO_SESSION_IDLE", default_value = "1800", value_parser = seconds)]
    session_idle: Duration,
    #[arg(long, env = "TACHO_LOGIN_LIFETIME", default_value = "7776000", value_parser = seconds)]
    login_lifetime: Duration,
    /// `0` turns the scheduler off in this process.
    #[arg(long, env = "TACHO_SCHEDULER_TICK", default_value_t = 60)]
    scheduler_tick: u64,
    #[arg(long, env = "TACHO_JOB_LEASE", default_value = "300", value_parser = seconds)]
    job_lease: Duration,
    #[arg(long, env = "TACHO_RETENTION_DAYS",
        value_parser = clap::value_parser!(u32).range(1..))]
    retention_days: Option<u32>,
    #[arg(long, env = "TACHO_RENDER_DEADLINE", default_value = "10", value_parser = deadline)]
    render_deadline: Duration,
    #[arg(long, env = "TACHO_SMTP_URL")]
    smtp_url: Option<String>,
    #[arg(
        long,
        env = "TACHO_MAIL_FROM",
        default_value = "Tacho <noreply@localhost>"
    )]
    mail_from: String,
    // `Set`: a `bool` is otherwise a flag that takes no value, and `=1` would be refused.
    #[arg(long, env = "TACHO_WEBHOOK_ALLOW_LOOPBACK", default_value = "0",
        action = clap::ArgAction::Set, value_parser = switch)]
    webhook_allow_loopback: bool,
    #[arg(long, env = "TACHO_WEBHOOK_ALLOW_PRIVATE", default_value = "0",
        action = clap::ArgAction::Set, value_parser = switch)]
    webhook_allow_private: bool,
    #[arg(long, env = "TACHO_METRICS_ADDR")]
    metrics_addr: Option<String>,
}

/// `1` or `0` (also `true`/`false`).
fn switch(text: &str) -> Result<bool, String> {
    match text.to_ascii_lowercase().as_str() {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err("must be 1 or 0".into()),
    }
}

/// A whole number of seconds, at least one.
fn seconds(text: &str) -> Result<Duration, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("must be at least 1 second".into()),
        Ok(secs) => Ok(Duration::from_secs(secs)),
        Err(_) => Err("must be a number of seconds".into()),
    }
}

/// Seconds, fractions allowed, above zero and at most a day.
fn deadline(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|secs| secs.is_finite() && *secs > 0.0 && *secs <= 86_400.0)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| "must be a positive number of seconds (at most a day)".into())
}

impl Environment {
    /// The settings, with the defaults that depend on other values filled in.
    fn settings(self) -> anyhow::Result<Settings> {
        let listen = ListenAddr::parse_list(&self.addr)?;
        let database_url = self.database_url.unwrap_or_else(|| {
            format!(
                "sqlite://{}?mode=rwc",
                self.data_dir.join("tacho.db").display()
            )
        });
        let base_url = self
            .base_url
            .unwrap_or_else(|| format!("http://{}", listen[0].text))
            .trim_end_matches('/')
            .to_owned();
        let workers = match self.workers {
            Some(n) => usize::from(n),
            None => std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2),
        };
        Ok(Settings {
            database_url: database_url.into(),
            data_dir: self.data_dir,
            addr: self.addr,
            base_url,
            access_token_ttl: self.access_token_ttl,
            refresh_token_ttl: self.refresh_token_ttl,
            log_format: self.log_format,
            log_filter: self.log,
            max_body_bytes: self.max_body_bytes,
            workers,
            max_measurement_bytes: self.max_measurement_bytes,
            file_storage: self.file_storage,
            s3: S3Options::default(),
            login_rate_per_minute: self.login_rate,
            registration_rate_per_hour: self.registration_rate,
            cache_ttl: Duration::from_millis(self.cache_ttl_ms),
            file_cache_bytes: self.file_cache_bytes,
            redis_url: self.redis_url.map(SecretString::from),
            session_ttl: self.session_ttl,
            session_idle: self.session_idle,
            login_lifetime: self.login_lifetime,
            scheduler_tick: (self.scheduler_tick > 0)
                .then(|| Duration::from_secs(self.scheduler_tick)),
            job_lease: self.job_lease,
            retention_days: self.retention_days,
            render_deadline: self.render_deadline,
            smtp_url: self
                .smtp_url
                .filter(|url| !url.trim().is_empty())
                .map(SecretString::from),
            mail_from: self.mail_from,
            webhook_allow_loopback: self.webhook_allow_loopback,
            webhook_allow_private: self.webhook_allow_private,
            metrics_addr: self.metrics_addr.filter(|addr| !addr.trim().is_empty()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_run_locally() {
        let s = Settings::from_lookup(|_| None).unwrap();
        assert_eq!(s.addr, "127.0.0.1:8080");
        assert_eq!(s.base_url, "http://127.0.0.1:8080");
        assert_eq!(
            s.database_url.expose_secret(),
            "sqlite://./data/tacho.db?mode=rwc"
        );
        assert_eq!(s.access_token_ttl, Duration::from_secs(3600));
        assert_eq!(s.log_format, LogFormat::Pretty);
        assert_eq!(s.scheduler_tick, Some(Duration::from_secs(60)));
        assert_eq!(s.job_lease, Duration::from_secs(300));
        assert_eq!(s.render_deadline, Duration::from_secs(10));
        assert_eq!(s.max_measurement_bytes, 10 * 1024 * 1024);
        assert!(s.smtp_url.is_none());
        assert!(!s.webhook_allow_loopback);
        assert!(!s.webhook_allow_private);
    }

    #[test]
    fn s3_variables_are_read_and_their_values_never_printed() {
        let s = Settings::from_lookup(|k| match k {
            "TACHO_FILE_STORAGE" => Some("S3".into()),
            "AWS_BUCKET" => Some("tacho-files".into()),
            "AWS_SECRET_ACCESS_KEY" => Some("wJalrXUtnFEMI".into()),
            "AWS_REGION" => Some(" ".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(s.file_storage, FileStorageKind::S3);
        assert_eq!(
            s.s3.0,
            vec![
                ("AWS_BUCKET".to_owned(), "tacho-files".to_owned()),
                (
                    "AWS_SECRET_ACCESS_KEY".to_owned(),
                    "wJalrXUtnFEMI".to_owned()
                ),
            ]
        );
        let printed = format!("{s:?}");
        assert!(printed.contains("AWS_SECRET_ACCESS_KEY"));
        assert!(!printed.contains("wJalrXUtnFEMI") && !printed.contains("tacho-files"));
    }

    #[test]
    fn secrets_are_redacted_in_debug() {
        let s = Settings::from_lookup(|k| match k {
            "TACHO_DATABASE_URL" => Some("postgres://tacho:db-secret-1@db/tacho".into()),
            "TACHO_REDIS_URL" => Some("redis://:redis-secret-2@cache:6379".into()),
            "TACHO_SMTP_URL" => Some("smtps://mail:smtp-secret-3@relay.example".into()),
            "AWS_SECRET_ACCESS_KEY" => Some("s3-secret-4".into()),
            _ => None,
        })
        .unwrap();
        let printed = format!("{s:?}");
        for secret in [
            "db-secret-1",
            "redis-secret-2",
            "smtp-secret-3",
            "s3-secret-4",
        ] {
            assert!(!printed.contains(secret), "{secret} in {printed}");
        }
        assert_eq!(
            s.database_url.expose_secret(),
            "postgres://tacho:db-secret-1@db/tacho"
        );
    }

    #[test]
    fn notification_settings_are_read() {
        let s = Settings::from_lookup(|k| match k {
            "TACHO_SMTP_URL" => Some("smtp://127.0.0.1:2525".into()),
            "TACHO_MAIL_FROM" => Some("Clinic <tacho@clinic.example>".into()),
            "TACHO_WEBHOOK_ALLOW_LOOPBACK" => Some("1".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(
            s.smtp_url.as_ref().map(|u| u.expose_secret()),
            Some("smtp://127.0.0.1:2525")
        );
        assert_eq!(s.mail_from, "Clinic <tacho@clinic.example>");
        assert!(s.webhook_allow_loopback);
        let off = |v: &str| {
            Settings::from_lookup(|k| (k == "TACHO_WEBHOOK_ALLOW_LOOPBACK").then(|| v.into()))
        };
        assert!(!off("0").unwrap().webhook_allow_loopback);
        assert!(off("yes please").is_err());
        let blank = Settings::from_lookup(|k| (k == "TACHO_SMTP_URL").then(|| " ".into()));
        assert!(
            blank.unwrap().smtp_url.is_none(),
            "a blank URL turns e-mail off"
        );
    }

    #[test]
    fn listen_addresses_are_a_list_and_localhost_is_both_loopbacks() {
        let s = Settings::from_lookup(|k| (k == "TACHO_ADDR").then(|| "localhost:8080".into()))
            .unwrap();
        assert_eq!(s.base_url, "http://localhost:8080");
        let listen = s.listen_addrs().unwrap();
        assert_eq!(
            listen[0].sockets,
            vec![
                "127.0.0.1:8080".parse::<SocketAddr>().unwrap(),
                "[::1]:8080".parse().unwrap()
            ]
        );
        let list = ListenAddr::parse_list("127.0.0.1:0, [::1]:9000").unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[1].sockets, vec!["[::1]:9000".parse().unwrap()]);
        assert!(!list[1].best_effort);
        for bad in ["", "localhost", "127.0.0.1:http", "localhost:70000"] {
            assert!(ListenAddr::parse_list(bad).is_err(), "{bad}");
        }
        assert!(Settings::from_lookup(|k| (k == "TACHO_ADDR").then(|| "nowhere".into())).is_err());
    }

    #[test]
    fn values_are_read_and_checked() {
        let s = Settings::from_lookup(|k| match k {
            "TACHO_DATA_DIR" => Some("/srv/tacho".into()),
            "TACHO_ACCESS_TOKEN_TTL" => Some("60".into()),
            "TACHO_LOG_FORMAT" => Some("JSON".into()),
            "TACHO_BASE_URL" => Some("https://tacho.example/".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(
            s.database_url.expose_secret(),
            "sqlite:///srv/tacho/tacho.db?mode=rwc"
        );
        assert_eq!(s.access_token_ttl, Duration::from_secs(60));
        assert_eq!(s.log_format, LogFormat::Json);
        assert_eq!(s.base_url, "https://tacho.example");
        assert!(
            Settings::from_lookup(|k| (k == "TACHO_ACCESS_TOKEN_TTL").then(|| "soon".into()))
                .is_err()
        );
        assert!(
            Settings::from_lookup(|k| (k == "TACHO_LOG_FORMAT").then(|| "xml".into())).is_err()
        );
        let off = Settings::from_lookup(|k| (k == "TACHO_SCHEDULER_TICK").then(|| "0".into()));
        assert_eq!(off.unwrap().scheduler_tick, None);
        assert!(
            Settings::from_lookup(|k| (k == "TACHO_SCHEDULER_TICK").then(|| "-1".into())).is_err()
        );
        let quick =
            Settings::from_lookup(|k| (k == "TACHO_RENDER_DEADLINE").then(|| "0.25".into()));
        assert_eq!(quick.unwrap().render_deadline, Duration::from_millis(250));
        for bad in ["0", "-1", "soon", "NaN"] {
            let lookup = |k: &str| (k == "TACHO_RENDER_DEADLINE").then(|| bad.to_owned());
            assert!(Settings::from_lookup(lookup).is_err(), "{bad}");
        }
        // A refusal names the variable and the value, and says what is wrong.
        let refused = Settings::from_lookup(|k| (k == "TACHO_JOB_LEASE").then(|| "soon".into()))
            .unwrap_err()
            .to_string();
        assert_eq!(
            refused,
            "TACHO_JOB_LEASE = `soon` is refused: must be a number of seconds"
        );
        let refused = Settings::from_lookup(|k| (k == "TACHO_WORKERS").then(|| "0".into()))
            .unwrap_err()
            .to_string();
        assert!(
            refused.starts_with("TACHO_WORKERS = `0` is refused"),
            "{refused}"
        );
        let refused = Settings::from_lookup(|k| (k == "TACHO_LOG_FORMAT").then(|| "xml".into()))
            .unwrap_err()
            .to_string();
        assert_eq!(
            refused,
            "TACHO_LOG_FORMAT = `xml` is refused: must be pretty or json"
        );
        // Blanks are unset; every default is clap's.
        let blank = Settings::from_lookup(|_| Some("  ".into())).unwrap();
        assert_eq!(blank.session_idle, Duration::from_secs(1800));
        assert_eq!(blank.login_lifetime, Duration::from_secs(90 * 24 * 3600));
        assert_eq!(blank.file_storage, FileStorageKind::Local);
    }
}

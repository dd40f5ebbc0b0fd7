//! Configuration from `TACHO_*` environment variables, each with a default that runs locally.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable, coloured on a terminal.
    Pretty,
    /// One JSON object per line, for log collectors.
    Json,
}

/// Where file contents are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileStorageKind {
    /// `TACHO_DATA_DIR/files`.
    Local,
    /// The `file_blobs` table, shared by every instance on the database.
    Database,
}

/// Everything the service is configured with.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `TACHO_DATABASE_URL`: `sqlite://…` or `postgres://…`; default an SQLite file in the data dir.
    pub database_url: String,
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
    /// `TACHO_FILE_STORAGE`: where PDFs are kept, `local` (under the data dir) or `database`.
    pub file_storage: FileStorageKind,
    /// `TACHO_LOGIN_RATE`: token requests allowed per client address and minute; default 30.
    pub login_rate_per_minute: u32,
    /// `TACHO_CACHE_TTL_MS`: how long token and user lookups may be served from memory; 0 turns
    /// the cache off; default 2000.
    pub cache_ttl: Duration,
    /// `TACHO_FILE_CACHE_BYTES`: memory for hot stored files (PDFs) served by
    /// `/files/v1/<token>/file`; 0 turns it off; default 64 MiB.
    pub file_cache_bytes: u64,
    /// `TACHO_REDIS_URL`: keep portal sessions in Redis (shared by every instance) instead of
    /// the database; default unset (the database).
    pub redis_url: Option<String>,
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
    /// `TACHO_RENDER_DEADLINE`: seconds (fractions allowed, e.g. `0.5`) a PDF render may run
    /// before it is abandoned and the caller answered 503; default 10.
    pub render_deadline: Duration,
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

    /// Reads settings through `lookup`, so tests need not touch the process environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> anyhow::Result<Self> {
        let get = |key: &str| lookup(key).filter(|v| !v.trim().is_empty());
        let seconds = |key: &str, default: u64| -> anyhow::Result<Duration> {
            match get(key) {
                Some(v) => {
                    let secs: u64 = v
                        .trim()
                        .parse()
                        .with_context(|| format!("{key} must be a number of seconds"))?;
                    if secs == 0 {
                        bail!("{key} must be at least 1 second");
                    }
                    Ok(Duration::from_secs(secs))
                }
                None => Ok(Duration::from_secs(default)),
            }
        };
        let data_dir = PathBuf::from(get("TACHO_DATA_DIR").unwrap_or_else(|| "./data".into()));
        let database_url = get("TACHO_DATABASE_URL").unwrap_or_else(|| {
            format!("sqlite://{}?mode=rwc", data_dir.join("tacho.db").display())
        });
        let addr = get("TACHO_ADDR").unwrap_or_else(|| "127.0.0.1:8080".into());
        let listen = ListenAddr::parse_list(&addr)?;
        let base_url = get("TACHO_BASE_URL")
            .unwrap_or_else(|| format!("http://{}", listen[0].text))
            .trim_end_matches('/')
            .to_owned();
        let log_format = match get("TACHO_LOG_FORMAT")
            .as_deref()
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("pretty") => LogFormat::Pretty,
            Some("json") => LogFormat::Json,
            Some(other) => bail!("TACHO_LOG_FORMAT must be `pretty` or `json`, not `{other}`"),
        };
        let max_body_bytes = match get("TACHO_MAX_BODY_BYTES") {
            Some(v) => v
                .trim()
                .parse()
                .context("TACHO_MAX_BODY_BYTES must be a number of bytes")?,
            None => 64 * 1024,
        };
        let workers = match get("TACHO_WORKERS") {
            Some(v) => v
                .trim()
                .parse()
                .ok()
                .filter(|n| *n > 0)
                .context("TACHO_WORKERS must be a positive number")?,
            None => std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2),
        };
        let login_rate_per_minute = match get("TACHO_LOGIN_RATE") {
            Some(v) => v
                .trim()
                .parse()
                .ok()
                .filter(|n| *n > 0)
                .context("TACHO_LOGIN_RATE must be a positive number")?,
            None => 30,
        };
        let cache_ttl = match get("TACHO_CACHE_TTL_MS") {
            Some(v) => Duration::from_millis(
                v.trim()
                    .parse()
                    .context("TACHO_CACHE_TTL_MS must be a number of milliseconds")?,
            ),
            None => crate::store::DEFAULT_CACHE_TTL,
        };
        let file_cache_bytes = match get("TACHO_FILE_CACHE_BYTES") {
            Some(v) => v
                .trim()
                .parse()
                .context("TACHO_FILE_CACHE_BYTES must be a number of bytes")?,
            None => 64 * 1024 * 1024,
        };
        let max_measurement_bytes = match get("TACHO_MAX_MEASUREMENT_BYTES") {
            Some(v) => v
                .trim()
                .parse()
                .context("TACHO_MAX_MEASUREMENT_BYTES must be a number of bytes")?,
            None => crate::domain::recording_limits::MAX_MEASUREMENT_BYTES,
        };
        let file_storage = match get("TACHO_FILE_STORAGE")
            .as_deref()
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("local") => FileStorageKind::Local,
            Some("database") => FileStorageKind::Database,
            Some(other) => bail!("TACHO_FILE_STORAGE must be `local` or `database`, not `{other}`"),
        };
        let scheduler_tick = match get("TACHO_SCHEDULER_TICK") {
            Some(v) => {
                let secs: u64 = v
                    .trim()
                    .parse()
                    .context("TACHO_SCHEDULER_TICK must be a number of seconds")?;
                (secs > 0).then(|| Duration::from_secs(secs))
            }
            None => Some(Duration::from_secs(60)),
        };
        let render_deadline = match get("TACHO_RENDER_DEADLINE") {
            Some(v) => v
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|secs| secs.is_finite() && *secs > 0.0 && *secs <= 86_400.0)
                .map(Duration::from_secs_f64)
                .context("TACHO_RENDER_DEADLINE must be a positive number of seconds")?,
            None => Duration::from_secs(10),
        };
        Ok(Settings {
            render_deadline,
            scheduler_tick,
            job_lease: seconds("TACHO_JOB_LEASE", 300)?,
            max_measurement_bytes,
            file_storage,
            cache_ttl,
            file_cache_bytes,
            login_rate_per_minute,
            workers,
            database_url,
            data_dir,
            addr,
            base_url,
            access_token_ttl: seconds("TACHO_ACCESS_TOKEN_TTL", 3600)?,
            refresh_token_ttl: seconds("TACHO_REFRESH_TOKEN_TTL", 30 * 24 * 3600)?,
            log_format,
            log_filter: get("TACHO_LOG").unwrap_or_else(|| "info".into()),
            max_body_bytes,
            redis_url: get("TACHO_REDIS_URL").map(|v| v.trim().to_owned()),
            session_ttl: seconds("TACHO_SESSION_TTL", 12 * 3600)?,
            session_idle: seconds("TACHO_SESSION_IDLE", 30 * 60)?,
            login_lifetime: seconds("TACHO_LOGIN_LIFETIME", 90 * 24 * 3600)?,
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
        assert_eq!(s.database_url, "sqlite://./data/tacho.db?mode=rwc");
        assert_eq!(s.access_token_ttl, Duration::from_secs(3600));
        assert_eq!(s.log_format, LogFormat::Pretty);
        assert_eq!(s.scheduler_tick, Some(Duration::from_secs(60)));
        assert_eq!(s.job_lease, Duration::from_secs(300));
        assert_eq!(s.render_deadline, Duration::from_secs(10));
        assert_eq!(s.max_measurement_bytes, 10 * 1024 * 1024);
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
        assert_eq!(s.database_url, "sqlite:///srv/tacho/tacho.db?mode=rwc");
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
    }
}

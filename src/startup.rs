//! Building and running the application: connect, migrate, bind, serve.

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::dev::Server;
use actix_web::middleware::{DefaultHeaders, from_fn};
use actix_web::{App, HttpServer, web};
use anyhow::Context;

use crate::actions::Actions;
use crate::auth::Authenticator;
use crate::auth::password::PasswordHasher;
use crate::auth::throttle::LoginThrottle;
use crate::config::ExposeSecret;
use crate::config::{ListenAddr, Settings};
use crate::domain::clock::{Clock, SystemClock};
use crate::file_cache::FileCache;
use crate::notify::Notifier;
use crate::pdf::Engine;
use crate::reports::Reports;
use crate::routes;
use crate::routes::AppState;
use crate::routes::api::extract::BodyLimit;
use crate::routes::web::session::{self, PortalSessions};
use crate::scheduler::{Scheduler, SchedulerOptions};

use crate::store::{Store, Unaudited};

/// How long a stopping server lets running requests finish.
const SHUTDOWN_REQUESTS: std::time::Duration = std::time::Duration::from_secs(20);

/// How long a stopping server lets the scheduler finish the jobs it claimed before it returns
/// their leases; with [`SHUTDOWN_REQUESTS`], inside the 30 s a supervisor usually waits after
/// SIGTERM.
const SHUTDOWN_JOBS: std::time::Duration = std::time::Duration::from_secs(8);

/// How to build the application beyond its settings.
pub struct BuildOptions {
    /// Run migrations before serving.
    pub migrate: bool,
    /// The clock; tests inject a manual one.
    pub clock: Arc<dyn Clock>,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            migrate: true,
            clock: Arc::new(SystemClock),
        }
    }
}

/// A bound, ready-to-run server.
pub struct Application {
    port: u16,
    server: Server,
    state: web::Data<AppState>,
    /// The parts that write, which the handlers reach only through `actions`: for the
    /// operator's tools (the demo seed) and the tests.
    operator: Operator,
    /// The periodic-report scheduler and its tick, unless turned off.
    scheduler: Option<(Scheduler, std::time::Duration)>,
    /// The metrics listener and its port, when `TACHO_METRICS_ADDR` is set.
    metrics: Option<(Server, u16)>,
}

impl Application {
    /// Connects to the database, migrates it (unless told not to) and binds the listener.
    /// An address with port 0 binds a free port, which tests use.
    pub async fn build(settings: Settings, options: BuildOptions) -> anyhow::Result<Self> {
        if options.migrate {
            Store::migrate_url(settings.database_url.expose_secret())
                .await
                .context("database migration failed")?;
        }
        let store = Store::connect(settings.database_url.expose_secret(), options.clock)
            .await
            .context("cannot connect to the database")?
            .with_cache_ttl(settings.cache_ttl);
        let listeners = bind(&settings.listen_addrs()?)
            .with_context(|| format!("cannot listen on {}", settings.addr))?;
        let port = listeners[0].local_addr()?.port();
        let metrics = match &settings.metrics_addr {
            Some(addr) => {
                let listener = TcpListener::bind(addr.as_str())
                    .with_context(|| format!("cannot listen for metrics on {addr}"))?;
                let port = listener.local_addr()?.port();
                Some((
                    crate::telemetry::metrics::serve(
                        listener,
                        Arc::new(QueueSampler(store.clone())),
                    )?,
                    port,
                ))
            }
            None => None,
        };
        let auth = Authenticator::new(
            store.clone(),
            PasswordHasher::default(),
            settings.access_token_ttl,
            settings.refresh_token_ttl,
        )
        .with_login_lifetime(settings.login_lifetime);
        let login_throttle = LoginThrottle::new(settings.login_rate_per_minute);
        let registration_throttle = LoginThrottle::per_hour(settings.registration_rate_per_hour);
        let storage = crate::storage::from_settings(&settings, &store)?;
        if settings.file_storage == crate::config::FileStorageKind::Local {
            // What a process killed mid-write left (temporary files, never read as files). Done
            // before serving, at the cost of one listing of the folder, so that the folder is
            // clean when the server first answers.
            let local = crate::storage::LocalStorage::new(settings.data_dir.join("files"));
            match local.sweep_abandoned().await {
                Ok(0) => {}
                Ok(removed) => tracing::info!(removed, "removed the files of unfinished writes"),
                Err(err) => tracing::warn!(error = %err, "cannot sweep the file folder"),
            }
        }
        let notifier = Notifier::from_settings(store.clone(), &settings, storage.clone()).await?;
        let reports = Arc::new(
            Reports::new(store.clone(), storage.clone(), shared_engine())
                .with_deadline(settings.render_deadline),
        );
        let sessions = PortalSessions::connect(&settings, &store).await?;
        let cookie_key = session::cookie_key(&store).await?;
        let file_tokens = crate::auth::file_token::FileTokens::new(
            &store.shared_key("file-token-key", 32).await?,
        );
        let scheduler = settings.scheduler_tick.map(|tick| {
            let options = SchedulerOptions {
                lease: settings.job_lease,
                retention_days: settings.retention_days,
                ..SchedulerOptions::default()
            };
            (
                Scheduler::new(store.clone(), notifier.clone(), options),
                tick,
            )
        });
        let files = FileCache::new(settings.file_cache_bytes, settings.cache_ttl);
        let actions = Actions::new(
            store.clone(),
            auth.clone(),
            login_throttle,
            reports.clone(),
            Arc::new(sessions.clone()),
            notifier.clone(),
        );
        let state = web::Data::new(AppState {
            actions,
            files,
            store: store.read_only(),
            storage,
            file_tokens,
            registration_throttle,
            settings: Arc::new(settings),
            sessions,
            cookie_key,
        });
        let server = serve(listeners, state.clone())?;
        Ok(Application {
            port,
            server,
            state,
            operator: Operator {
                store,
                auth,
                reports,
                notifier,
            },
            scheduler,
            metrics,
        })
    }

    /// The port the server listens on (the first address's, which a port-0 address shares
    /// with the addresses after it).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The port of the metrics listener, when there is one.
    pub fn metrics_port(&self) -> Option<u16> {
        self.metrics.as_ref().map(|(_, port)| *port)
    }

    /// The shared state of the request handlers.
    pub fn state(&self) -> web::Data<AppState> {
        self.state.clone()
    }

    /// The parts that write, for the operator's tools and the tests.
    pub fn operator(&self) -> Operator {
        self.operator.clone()
    }

    /// A handle to stop the server.
    pub fn handle(&self) -> actix_web::dev::ServerHandle {
        self.server.handle()
    }

    /// Serves (and ticks the scheduler) until the process is asked to stop.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let ticking = self.scheduler.map(|(scheduler, every)| {
            let (stop, worker) = (scheduler.stop_token(), scheduler.worker().to_owned());
            (tokio::spawn(scheduler.run_forever(every)), stop, worker)
        });
        let metrics = self.metrics.map(|(server, _)| {
            let handle = server.handle();
            (tokio::spawn(server), handle)
        });
        // On SIGTERM or SIGINT the server stops accepting and lets running requests (renders
        // included) finish, for up to `SHUTDOWN_REQUESTS`.
        let served = self.server.await;
        if let Some((mut task, stop, worker)) = ticking {
            stop.cancel();
            if tokio::time::timeout(SHUTDOWN_JOBS, &mut task)
                .await
                .is_err()
            {
                task.abort();
                let released = self
                    .operator
                    .store
                    .write(Unaudited::Workers, async |tx| {
                        tx.release_jobs(&worker).await
                    })
                    .await;
                match released {
                    Ok(released) => tracing::warn!(
                        released,
                        "stopped with jobs still running; their leases were returned"
                    ),
                    Err(err) => {
                        tracing::warn!(error = %err, "could not return the leases of running jobs; they run again when the leases end")
                    }
                }
            }
        }
        if let Some((_, handle)) = metrics {
            handle.stop(false).await;
        }
        tracing::info!("stopped");
        served
    }
}

/// The parts of an application that write, which its request handlers reach only through
/// `actions`: the store, the authenticator, the report maker and the notifier.
#[derive(Clone)]
pub struct Operator {
    pub store: Store,
    pub auth: Authenticator,
    pub reports: Arc<Reports>,
    pub notifier: Notifier,
}

/// The PDF engine, built once per process (fonts parsed once) and shared by every application.
pub fn shared_engine() -> Arc<Engine> {
    static ENGINE: std::sync::OnceLock<Arc<Engine>> = std::sync::OnceLock::new();
    ENGINE.get_or_init(|| Arc::new(Engine::new())).clone()
}

/// Binds every socket of `addrs`. Port 0 takes a free port on the first socket and the same
/// port on the others, so `localhost:0` answers on one port on both loopback addresses; when
/// another program holds that port on a later address, it starts over with a new port.
fn bind(addrs: &[ListenAddr]) -> std::io::Result<Vec<TcpListener>> {
    const ATTEMPTS: usize = 8;
    let mut last_error = None;
    for _ in 0..ATTEMPTS {
        match bind_once(addrs) {
            Ok(listeners) => return Ok(listeners),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => last_error = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last_error.expect("at least one attempt"))
}

fn bind_once(addrs: &[ListenAddr]) -> std::io::Result<Vec<TcpListener>> {
    let mut listeners: Vec<TcpListener> = Vec::new();
    let mut chosen_port = None;
    for entry in addrs {
        for socket in &entry.sockets {
            let mut socket = *socket;
            if socket.port() == 0
                && let Some(port) = chosen_port
            {
                socket.set_port(port);
            }
            match TcpListener::bind(socket) {
                Ok(listener) => {
                    chosen_port.get_or_insert(listener.local_addr()?.port());
                    listeners.push(listener);
                }
                // An IPv4-only machine has no ::1: `localhost` then means 127.0.0.1 alone.
                Err(e)
                    if entry.best_effort
                        && matches!(
                            e.kind(),
                            std::io::ErrorKind::AddrNotAvailable | std::io::ErrorKind::Unsupported
                        ) =>
                {
                    tracing::warn!(%socket, error = %e, "skipping an address of {}", entry.text);
                }
                Err(e) => return Err(e),
            }
        }
    }
    if listeners.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AddrNotAvailable,
            "no address could be bound",
        ));
    }
    Ok(listeners)
}

fn serve(listeners: Vec<TcpListener>, state: web::Data<AppState>) -> anyhow::Result<Server> {
    let body_limit = BodyLimit(state.settings.max_body_bytes);
    let measurement_limit = BodyLimit(state.settings.max_measurement_bytes);
    let workers = state.settings.workers;
    let server = HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .app_data(body_limit)
            .wrap(from_fn(routes::trailing_slash))
            .wrap(routes::error_envelopes())
            .wrap(from_fn(routes::security_headers))
            .wrap(DefaultHeaders::new().add(("X-Content-Type-Options", "nosniff")))
            .wrap(from_fn(routes::request_log::log_requests))
            .configure(|cfg| {
                let sessions = session::middleware(
                    state.sessions.clone(),
                    state.cookie_key.clone(),
                    &state.settings,
                );
                routes::configure(cfg, measurement_limit, sessions)
            })
    })
    .workers(workers)
    // Without it, Nagle's algorithm holds the last segment of a response larger than a few
    // segments (a page of 50 measurements, a PDF) until the client acknowledges the ones
    // before, which a client delays by up to 40 ms on a kept-alive connection: a 5 ms answer
    // took 45 (docs/performance.md). nginx sets the same option on kept-alive connections.
    .tcp_nodelay(true)
    .shutdown_timeout(SHUTDOWN_REQUESTS.as_secs());
    let server = listeners
        .into_iter()
        .try_fold(server, |server, listener| server.listen(listener))?
        .run();
    Ok(server)
}

/// What the metrics listener samples at each scrape: the store's pool and job queue, every
/// kind of job included (an empty kind at zero, so that its gauges go back to zero).
struct QueueSampler(Store);

#[async_trait::async_trait]
impl crate::telemetry::metrics::Sampler for QueueSampler {
    fn pool(&self) -> crate::telemetry::metrics::PoolSample {
        let pool = self.0.pool_status();
        crate::telemetry::metrics::PoolSample {
            in_use: pool.in_use,
            idle: pool.idle,
            max: pool.max,
            waiting: pool.waiting,
        }
    }

    async fn queues(&self) -> Result<Vec<crate::telemetry::metrics::QueueSample>, String> {
        use crate::telemetry::metrics::QueueSample;
        let mut kinds: Vec<QueueSample> = self
            .0
            .queue_status()
            .await
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|k| QueueSample {
                kind: k.kind.as_str().to_owned(),
                waiting: k.waiting,
                running: k.running,
                failed: k.failed,
                oldest_waiting_secs: k.oldest_waiting_secs,
            })
            .collect();
        for known in crate::store::entities::job::JobKind::ALL {
            if !kinds.iter().any(|k| k.kind == known.as_str()) {
                kinds.push(QueueSample {
                    kind: known.as_str().to_owned(),
                    ..QueueSample::default()
                });
            }
        }
        Ok(kinds)
    }
}

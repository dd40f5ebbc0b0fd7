//! Logging and metrics. Logging: tracing to stdout, pretty or JSON. Request logging lives in
//! `routes::request_log`; it records route patterns, never paths or query strings, so tokens,
//! file capabilities and e-mail addresses in URLs stay out of the logs. Metrics: [`metrics`].

//!
//! The module is a leaf: it imports nothing of the rest of the crate. What it reports of the
//! service's state at a scrape (the job queue, the pool) is handed to it as a
//! [`metrics::Sampler`] by `startup`.

use tracing_subscriber::EnvFilter;

pub mod metrics;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable, coloured on a terminal.
    Pretty,
    /// One JSON object per line, for log collectors.
    Json,
}

/// Installs the global subscriber. Calling it again (as tests do) is harmless.
pub fn init(format: LogFormat, filter: &str) {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(true);
    let _ = match format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .try_init(),
        LogFormat::Pretty => builder.try_init(),
    };
}

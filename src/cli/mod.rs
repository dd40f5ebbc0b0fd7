//! The command line: `serve`, `migrate`, `user add`, `reports run-due`, `reports create`,
//! `measurements reanalyse`, `files migrate`, `backup`, `retention`, `analyse`.

mod analyse;
mod clinic;
mod files;
mod measurements;
mod progress;
mod reports;
mod retention;

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};

use crate::auth::password::PasswordHasher;
use crate::config::ExposeSecret;
use crate::config::Settings;
use crate::domain::account::{Email, Language, NewPassword, PersonName, TimeZone};
use crate::domain::clock::SystemClock;
use crate::startup::{Application, BuildOptions};
use crate::store::Store;
use crate::{demo, telemetry};

/// Tacho: heart-rhythm measurements, reports and profiles. Configured by `TACHO_*` variables
/// (see the README).
#[derive(Debug, Parser)]
#[command(name = "tacho", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the HTTP server (migrates the database first).
    Serve {
        /// Seed a demo world (admin, groups, physicians, patients) and print its logins.
        #[arg(long)]
        demo: bool,
        /// Do not run database migrations before serving.
        #[arg(long)]
        no_migrate: bool,
    },
    /// Bring the database schema up to date, then exit.
    Migrate,
    /// Print the OpenAPI document of the wire API.
    Openapi,
    /// Manage accounts.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Periodic reports.
    Reports {
        #[command(subcommand)]
        command: ReportsCommand,
    },
    /// Stored measurements.
    Measurements {
        #[command(subcommand)]
        command: MeasurementsCommand,
    },
    /// Stored files (PDFs).
    Files {
        #[command(subcommand)]
        command: FilesCommand,
    },
    /// Write a consistent copy of the embedded SQLite database and its local files into a new
    /// folder, while `tacho serve` may run; `TACHO_DATA_DIR=<folder> tacho serve` restores it.
    Backup {
        /// The folder to write (new or empty).
        #[arg(long)]
        to: std::path::PathBuf,
    },
    /// Build a clinic-size demo world for load tests, with a progress bar: groups with two
    /// physicians each, patients with prescriptions and analysed measurements over 90 days,
    /// reviews, reports and their notifications; also the accounts of `serve --demo`. Running
    /// it again adds only what is missing.
    Demo {
        /// Patients in all (patient0@clinic.test, …).
        #[arg(long, default_value_t = 500)]
        patients: usize,
        /// Measurements per patient.
        #[arg(long, default_value_t = 10)]
        measurements: usize,
        /// Patients per group.
        #[arg(long, default_value_t = 1000)]
        patients_per_group: usize,
    },
    /// Erase what is older than the retention period (`TACHO_RETENTION_DAYS`, or `--days`):
    /// measurements, periodic reports and files stored before it, and accounts deactivated
    /// before it, except those of patients under a legal hold; with a progress bar. `tacho
    /// serve` does the same once a day when the variable is set.
    Retention {
        /// List what would be erased, and erase nothing.
        #[arg(long)]
        dry_run: bool,
        /// The period in days, instead of `TACHO_RETENTION_DAYS`.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        days: Option<u32>,
        /// With `--dry-run`: count from this instant (RFC 3339 or epoch ms) instead of now,
        /// to see what a run on that day would erase.
        #[arg(long, requires = "dry_run")]
        at: Option<String>,
    },
    /// Analyse a recording and print, as JSON, the `indicator`, `mostSevereLabel`, `af` and
    /// `analysis` an upload of it would get. Needs no database. Exit code 2 when the file
    /// cannot be read.
    Analyse(AnalyseArgs),
}

#[derive(Debug, Subcommand)]
enum MeasurementsCommand {
    /// Run the current analysis over stored measurements again, with a progress bar; rewrites
    /// (and bumps `updateTimestamp` of) only those whose result changed.
    Reanalyse {
        /// Only measurements taken on or after this day (YYYY-MM-DD, UTC) or epoch ms.
        #[arg(long)]
        since: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
enum FilesCommand {
    /// Copy every file from `TACHO_FILE_STORAGE` to another storage, with a progress bar;
    /// run it again after an interruption (or after switching) to copy only what is missing.
    Migrate {
        /// The storage to copy to: local, database or s3 (configured by the `AWS_*` variables).
        #[arg(long, ignore_case = true)]
        to: crate::config::FileStorageKind,
    },
}

#[derive(Debug, Args)]
struct AnalyseArgs {
    /// A measurement JSON (its `data` object, or a document with `data`), a CSV of
    /// `time_ms,value` rows, or a CSV of values with --rate; `-` reads stdin.
    file: String,
    /// Sampling rate in Hz of a CSV without times.
    #[arg(long)]
    rate: Option<f64>,
}

#[derive(Debug, Subcommand)]
enum ReportsCommand {
    /// Make every periodic report that is due (weekly, monthly, end of prescription), with a
    /// progress bar; safe to run beside `tacho serve` and other runs.
    RunDue,
    /// Make a manual report of one patient now.
    Create(CreateReport),
}

#[derive(Debug, Args)]
struct CreateReport {
    /// The patient: user id or e-mail address.
    #[arg(long)]
    user: String,
    /// First day (YYYY-MM-DD, in the patient's time zone) or an RFC 3339 instant; default
    /// seven days before the end.
    #[arg(long)]
    from: Option<String>,
    /// Last day, included (YYYY-MM-DD, in the patient's time zone), or an RFC 3339 instant
    /// (excluded); default now.
    #[arg(long)]
    to: Option<String>,
    /// The group the report is made for (its id): the report lists only the measurements
    /// shared with that group, and its staff see it. Without it, the report lists every
    /// measurement of the period and is kept for the patient and administrators.
    #[arg(long)]
    group: Option<String>,
}

#[derive(Debug, Subcommand)]
enum UserCommand {
    /// Create an account.
    Add(AddUser),
}

#[derive(Debug, Args)]
struct AddUser {
    #[arg(long)]
    email: String,
    #[arg(long)]
    password: String,
    #[arg(long)]
    first_name: String,
    #[arg(long)]
    last_name: String,
    /// Make the account an administrator.
    #[arg(long)]
    admin: bool,
    /// Language code (de, en, es, fr, it, nl, ar, zh), any case.
    #[arg(long, default_value = "EN")]
    language: String,
    /// IANA time zone.
    #[arg(long, default_value = "Europe/Brussels")]
    time_zone: String,
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // Pure computation on a file: no settings, database or runtime, and its own exit codes.
    if let Command::Analyse(args) = &cli.command {
        return analyse::run(&args.file, args.rate);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let settings = Settings::from_env()?;
    telemetry::init(settings.log_format, &settings.log_filter);
    match cli.command {
        Command::Serve { demo, no_migrate } => serve(settings, demo, !no_migrate).await,
        Command::Migrate => {
            Store::migrate_url(settings.database_url.expose_secret())
                .await
                .context("migration failed")?;
            println!("database is up to date");
            Ok(())
        }
        Command::User {
            command: UserCommand::Add(args),
        } => add_user(settings, args).await,
        Command::Reports {
            command: ReportsCommand::RunDue,
        } => reports::run_due(settings).await,
        Command::Reports {
            command: ReportsCommand::Create(args),
        } => {
            reports::create(
                settings,
                &args.user,
                args.group.as_deref(),
                args.from.as_deref(),
                args.to.as_deref(),
            )
            .await
        }
        Command::Openapi => {
            println!("{}", crate::routes::api::openapi::document());
            Ok(())
        }
        Command::Measurements {
            command: MeasurementsCommand::Reanalyse { since },
        } => measurements::reanalyse(settings, since.as_deref()).await,
        Command::Files {
            command: FilesCommand::Migrate { to },
        } => files::migrate(settings, to).await,
        Command::Backup { to } => files::backup(settings, &to).await,
        Command::Demo {
            patients,
            measurements,
            patients_per_group,
        } => {
            let size = crate::demo::clinic::Size {
                patients,
                measurements,
                patients_per_group,
            };
            clinic::build(settings, size).await
        }
        Command::Retention { dry_run, days, at } => {
            retention::run(settings, days, dry_run, at.as_deref()).await
        }
        // Answered by `main` before a runtime or settings exist.
        Command::Analyse(_) => Ok(()),
    }
}

async fn serve(settings: Settings, demo: bool, migrate: bool) -> anyhow::Result<()> {
    let base_url = settings.base_url.clone();
    let app = Application::build(
        settings,
        BuildOptions {
            migrate,
            ..BuildOptions::default()
        },
    )
    .await?;
    if demo {
        let operator = app.operator();
        let logins = demo::seed(&operator.store, operator.auth.hasher()).await?;
        println!("{}", demo::describe(&logins, &base_url));
    }
    tracing::info!(port = app.port(), metrics_port = ?app.metrics_port(), base_url, "tacho is listening");
    app.run_until_stopped().await?;
    Ok(())
}

async fn add_user(settings: Settings, args: AddUser) -> anyhow::Result<()> {
    let email = Email::parse(&args.email)?;
    let password = NewPassword::parse(&args.password)?;
    let first_name = PersonName::parse("first_name", &args.first_name)?;
    let last_name = PersonName::parse("last_name", &args.last_name)?;
    let language = Language::parse_field(&args.language)?;
    let time_zone = TimeZone::parse_field(&args.time_zone)?;
    Store::migrate_url(settings.database_url.expose_secret()).await?;
    let store =
        Store::connect(settings.database_url.expose_secret(), Arc::new(SystemClock)).await?;
    let new = crate::actions::NewAccount {
        email: email.clone(),
        password,
        first_name,
        last_name,
        phone_number: None,
        language,
        time_zone,
        roles: if args.admin {
            vec![crate::domain::account::Role::Admin]
        } else {
            Vec::new()
        },
    };
    let user = crate::actions::operator::add_user(&store, &PasswordHasher::default(), new)
        .await
        .map_err(|e| match e {
            crate::actions::ActionError::Store(crate::store::StoreError::EmailUsed) => {
                anyhow::anyhow!("{} is already registered", email.as_str())
            }
            other => other.into(),
        })?;
    println!(
        "created user {} <{}>{}",
        user.id,
        user.email,
        if args.admin { " (admin)" } else { "" }
    );
    Ok(())
}

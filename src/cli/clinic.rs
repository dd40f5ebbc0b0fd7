//! `tacho demo`: a clinic-size demo world, for load tests and for trying Tacho at scale.

use std::time::Instant;

use super::progress::Progress;
use super::reports::open_store;
use crate::auth::password::PasswordHasher;
use crate::config::Settings;
use crate::demo::{self, clinic};
use crate::notify::Notifier;

/// The most measurements one build makes (a clinic of 100,000 patients with 100 each).
const MOST_MEASUREMENTS: usize = 10_000_000;

/// Seeds the demo accounts of `serve --demo`, then builds the clinic of `size`, showing
/// progress; prints what it made.
pub async fn build(settings: Settings, size: clinic::Size) -> anyhow::Result<()> {
    if size.patients.saturating_mul(size.measurements) > MOST_MEASUREMENTS {
        anyhow::bail!(
            "--patients × --measurements is {}; at most {MOST_MEASUREMENTS} in one build",
            size.patients.saturating_mul(size.measurements)
        );
    }
    if size.patients_per_group == 0 {
        anyhow::bail!("--patients-per-group must be at least 1");
    }
    let store = open_store(&settings).await?;
    let storage = crate::storage::from_settings(&settings, &store)?;
    let notifier = Notifier::from_settings(store.clone(), &settings, storage).await?;
    let hasher = PasswordHasher::default();
    let logins = demo::seed(&store, &hasher).await?;
    let started = Instant::now();
    let mut progress = Progress::new(
        "demo",
        "patients",
        "patients to build",
        size.patients as u64,
    );
    let built = clinic::build(&store, &hasher, &notifier, size, |done, b| {
        let counts = format!("{} measurements, {} reviews", b.measurements, b.reviews);
        progress.update(done as u64, &counts)
    })
    .await?;
    progress.finish();
    println!(
        "{} groups, {} physicians and {} patients added with {} measurements, {} reviews and {} \
         reports; {} events notified; in {:.1} s",
        built.groups,
        built.physicians,
        built.patients,
        built.measurements,
        built.reviews,
        built.reports,
        built.events,
        started.elapsed().as_secs_f64()
    );
    println!(
        "{}  physicians: dr<group>.<1|2>@clinic.test, patients: patient<n>@clinic.test",
        demo::describe(&logins, &settings.base_url)
    );
    Ok(())
}

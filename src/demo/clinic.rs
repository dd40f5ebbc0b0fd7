//! A clinic-size demo world for load tests (`tacho demo --patients N --measurements M`):
//! groups of patients, each with two physicians; every patient with a running prescription,
//! a profile and `M` one-minute interval series over the last 90 days, analysed as uploads
//! are; a share of them reviewed by a physician of the group, manual reports for some
//! patients, and the notifications all of it causes. Building it again adds only the patients
//! that are missing. Seeded, so two builds of the same size hold the same rhythms.

use chrono::Duration;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

use super::DEMO_PASSWORD;
use crate::actions::operator;
use crate::auth::password::PasswordHasher;
use crate::domain::account::StaffRole;
use crate::domain::id::Id;
use crate::domain::measurement::{NewMeasurement, Review};
use crate::notify::Notifier;
use crate::store::{NewGroup, NewUser, Service, Store, Unaudited, Viewer};

/// The size of the clinic to build.
#[derive(Debug, Clone, Copy)]
pub struct Size {
    pub patients: usize,
    /// Measurements per patient.
    pub measurements: usize,
    /// Patients per group; each group has two physicians.
    pub patients_per_group: usize,
}

/// What a build made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Built {
    pub groups: usize,
    pub physicians: usize,
    /// Patients created by this build (those already there are left alone).
    pub patients: usize,
    pub measurements: usize,
    pub reviews: usize,
    pub reports: usize,
    /// Events fanned out into notifications.
    pub events: usize,
}

/// The share of analysed measurements a physician reviews.
const REVIEWED: f64 = 0.3;
/// Every how many patients one gets a manual report of the last 30 days.
const REPORT_EVERY: usize = 10;
/// The recordings span the last this many days.
const SPAN_DAYS: i64 = 90;

const CITIES: [(&str, &str, &str, &str); 8] = [
    ("Ghent", "BE", "NL", "Europe/Brussels"),
    ("Lyon", "FR", "FR", "Europe/Paris"),
    ("Munich", "DE", "DE", "Europe/Berlin"),
    ("Madrid", "ES", "ES", "Europe/Madrid"),
    ("Milan", "IT", "IT", "Europe/Rome"),
    ("Dubai", "AE", "AR", "Asia/Dubai"),
    ("Shanghai", "CN", "ZH", "Asia/Shanghai"),
    ("Leeds", "GB", "EN", "Europe/London"),
];
const FIRST_NAMES: [&str; 12] = [
    "Anna", "Bram", "Chloé", "Daan", "Elif", "Femke", "Gust", "Hanna", "Ines", "Jonas", "Karim",
    "Lotte",
];
const LAST_NAMES: [&str; 12] = [
    "Peeters", "Janssens", "Maes", "Dubois", "Martin", "Bernard", "Müller", "García", "Rossi",
    "Haddad", "Chen", "Smith",
];

/// The rhythm a demo recording is drawn with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rhythm {
    Sinus,
    AtrialFibrillation,
    PrematureBeats,
    /// Too few intervals for a result.
    TooShort,
}

impl Rhythm {
    /// Mostly sinus rhythm, as in a screening population.
    fn draw(rng: &mut StdRng) -> Rhythm {
        match rng.random_range(0..100) {
            0..80 => Rhythm::Sinus,
            80..88 => Rhythm::AtrialFibrillation,
            88..95 => Rhythm::PrematureBeats,
            _ => Rhythm::TooShort,
        }
    }

    /// The physician's conclusion on reviewing it.
    fn conclusion(self) -> &'static str {
        match self {
            Rhythm::Sinus | Rhythm::TooShort => "sinus_rhythm",
            Rhythm::AtrialFibrillation => "atrial_fibrillation",
            Rhythm::PrematureBeats => "extrasystoles_frequent",
        }
    }
}

/// One standard normal draw (Box–Muller).
fn gauss(rng: &mut StdRng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A minute of whole-millisecond intervals with `rhythm`: sinus with breathing (5 % at
/// 0.25 Hz) and 1.5 % noise; fibrillation as independent log-normal intervals (CV 0.25);
/// sinus with five premature beats, each with its compensatory pause.
fn intervals(rhythm: Rhythm, rng: &mut StdRng) -> Vec<f64> {
    let mean: f64 = 60_000.0 / rng.random_range(55.0..100.0);
    let mut rr: Vec<f64> = Vec::new();
    let mut t = 0.0;
    while t < 60_000.0 {
        let v = match rhythm {
            Rhythm::AtrialFibrillation => {
                let sigma = (1.0f64 + 0.25 * 0.25).ln().sqrt();
                (mean.ln() - sigma * sigma / 2.0 + sigma * gauss(rng))
                    .exp()
                    .max(300.0)
            }
            _ => {
                let breathing = 0.05 * (std::f64::consts::TAU * 0.25 * t / 1000.0).sin();
                mean * (1.0 + breathing + 0.015 * gauss(rng))
            }
        };
        t += v;
        rr.push(v.round());
    }
    if rhythm == Rhythm::PrematureBeats {
        for k in 1..=5 {
            let i = k * rr.len() / 6;
            let pair = rr[i] + rr[i + 1];
            rr[i] = (0.65 * rr[i]).round();
            rr[i + 1] = pair - rr[i];
        }
    }
    if rhythm == Rhythm::TooShort {
        rr.truncate(8);
    }
    rr
}

/// The `data` of an upload: the intervals with the phone's envelope.
fn payload(rr: &[f64], at: i64, rhythm: Rhythm) -> serde_json::Value {
    let heartrate = (60_000.0 * rr.len() as f64 / rr.iter().sum::<f64>()).round();
    let symptoms: &[&str] = match rhythm {
        Rhythm::AtrialFibrillation => &["palpitations"],
        _ => &[],
    };
    json!({
        "measurement_timestamp": at,
        "heartrate": heartrate,
        "rr_intervals": rr,
        "context": {"symptoms": symptoms, "activity": "resting", "symptomSeverity": if symptoms.is_empty() { 0 } else { 2 }},
        "device": {"os": "17.2", "model": "iPhone 13", "type": "ios", "manufacturer": "Apple"},
        "app": {"version": "3.4.1", "build": "341"},
    })
}

fn patient_email(i: usize) -> String {
    format!("patient{i}@clinic.test")
}

/// Builds the clinic (see the module's documentation); `progress(done, made)` is called after
/// every patient, `done` counting those already there.
pub async fn build(
    store: &Store,
    hasher: &PasswordHasher,
    notifier: &Notifier,
    size: Size,
    mut progress: impl FnMut(usize, &Built),
) -> anyhow::Result<Built> {
    let mut built = Built::default();
    let password_hash = hasher.hash(DEMO_PASSWORD.to_owned()).await?;
    let per_group = size.patients_per_group.max(1);
    let group_count = size.patients.div_ceil(per_group);
    let mut groups = Vec::with_capacity(group_count);
    for g in 0..group_count {
        let (city, _, language, zone) = CITIES[g % CITIES.len()];
        let name = format!("Clinic {} {city}", g + 1);
        let group = match store.group_by_name(&name).await? {
            Some(group) => group,
            None => {
                built.groups += 1;
                store
                    .write(Unaudited::Operator, async |tx| {
                        tx.create_group(NewGroup {
                            name: name.clone(),
                            description: Some(format!("Demo clinic in {city}")),
                        })
                        .await
                    })
                    .await?
            }
        };
        let mut physicians = Vec::new();
        for p in 0..2 {
            let email = format!("dr{}.{}@clinic.test", g + 1, p + 1);
            let physician = match store.user_by_email(&Service::Operator, &email).await? {
                Some(user) => user,
                None => {
                    built.physicians += 1;
                    let tx = store.begin().await?;
                    let user = tx
                        .create_user(NewUser {
                            email,
                            password_hash: password_hash.clone(),
                            first_name: FIRST_NAMES[(g + p) % FIRST_NAMES.len()].into(),
                            last_name: format!(
                                "Dr. {}",
                                LAST_NAMES[(g * 2 + p) % LAST_NAMES.len()]
                            ),
                            phone_number: None,
                            language: language.into(),
                            time_zone: zone.into(),
                            roles: Vec::new(),
                            password_change_due: false,
                        })
                        .await?;
                    tx.enlist_staff(&user.id, &group.id, vec![StaffRole::physician()])
                        .await?;
                    tx.commit_unaudited(Unaudited::Operator).await?;
                    user
                }
            };
            physicians.push(Viewer {
                user_id: physician.id,
                admin: false,
            });
        }
        groups.push((group, physicians));
    }

    let now = store.clock().now();
    let prescription_end = (now + Duration::days(30)).timestamp_millis();
    let today = now.date_naive();
    // Profiles are written as an administrator would.
    let admin = Viewer {
        user_id: Id::generate(),
        admin: true,
    };
    for i in 0..size.patients {
        let email = patient_email(i);
        if store
            .user_by_email(&Service::Operator, &email)
            .await?
            .is_some()
        {
            progress(i + 1, &built);
            continue;
        }
        let mut rng = StdRng::seed_from_u64(i as u64);
        let (group, physicians) = &groups[i / per_group];
        let (city, country, language, zone) = CITIES[(i / per_group) % CITIES.len()];
        // The patient, prescription, profile and recordings in one transaction, as the demo
        // seed does; the analysis runs as on an upload.
        let tx = store.begin().await?;
        let user = tx
            .create_user(NewUser {
                email,
                password_hash: password_hash.clone(),
                first_name: FIRST_NAMES[i % FIRST_NAMES.len()].into(),
                last_name: LAST_NAMES[(i / FIRST_NAMES.len()) % LAST_NAMES.len()].into(),
                phone_number: None,
                language: language.into(),
                time_zone: zone.into(),
                roles: Vec::new(),
                password_change_due: false,
            })
            .await?;
        tx.enlist_patient(&user.id, &group.id, prescription_end)
            .await?;
        let profile = json!({
            "country": country,
            "city": city,
            "birthday": format!("{}-{:02}-{:02}", rng.random_range(1935..2000), rng.random_range(1..=12), rng.random_range(1..=28)),
            "gender": rng.random_range(1..=2),
        });
        let patch = crate::domain::profile::ProfilePatch::parse(profile, today)
            .map_err(|e| anyhow::anyhow!("demo profile: {e}"))?;
        super::update_one_profile(&tx, &admin, &user.id, &patch).await?;
        let mut to_review = Vec::new();
        for _ in 0..size.measurements {
            let rhythm = Rhythm::draw(&mut rng);
            let at = now - Duration::minutes(rng.random_range(10..SPAN_DAYS * 24 * 60));
            let data = payload(&intervals(rhythm, &mut rng), at.timestamp_millis(), rhythm);
            let new = NewMeasurement::parse(data)
                .map_err(|e| anyhow::anyhow!("demo measurement: {e}"))?;
            let record = tx.create_measurement(&user.id, new).await?;
            built.measurements += 1;
            if record.measurement.status.has_results() && rng.random_bool(REVIEWED) {
                to_review.push((record.measurement.id, rhythm));
            }
        }
        tx.commit_unaudited(Unaudited::Operator).await?;
        built.patients += 1;

        // Reviews go through the actions' rules and audit, as a physician's would.
        let reviewer = &physicians[i % physicians.len()];
        for (id, rhythm) in to_review {
            let review = Review::parse(
                Some(rhythm.conclusion()),
                None,
                Some("Reviewed by your care team."),
            )
            .map_err(|e| anyhow::anyhow!("demo review: {e}"))?;
            operator::review_measurement(store, reviewer, &id, review).await?;
            built.reviews += 1;
        }
        if i % REPORT_EVERY == 0 {
            let end = now.timestamp_millis();
            let start = (now - Duration::days(30)).timestamp_millis();
            operator::create_report(store, &user.id, Some(group.id), start, end).await?;
            built.reports += 1;
        }
        progress(i + 1, &built);
    }
    // The notifications of the new results, reviews and reports.
    loop {
        let fanned = notifier.fan_out_waiting(500).await?;
        if fanned == 0 {
            break;
        }
        built.events += fanned;
    }
    Ok(built)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{Context, Recording, analyse};

    #[test]
    fn each_rhythm_is_read_as_drawn() {
        let mut rng = StdRng::seed_from_u64(1);
        let (mut af_called_af, mut premature_called_af) = (0, 0);
        for _ in 0..50 {
            let read = |rhythm, rng: &mut StdRng| {
                analyse(
                    &Recording::RrIntervals(intervals(rhythm, rng)),
                    Context::default(),
                )
            };
            let sinus = read(Rhythm::Sinus, &mut rng);
            assert_eq!(
                sinus.verdict().key.as_str(),
                "regular",
                "{:?}",
                sinus.rhythm
            );
            let af = read(Rhythm::AtrialFibrillation, &mut rng);
            assert_ne!(af.verdict().key.as_str(), "regular", "{:?}", af.rhythm);
            af_called_af += usize::from(af.verdict().af);
            // Five premature beats in a minute are flagged, as irregular or (their pauses
            // widening the histogram) as possible AF.
            let premature = read(Rhythm::PrematureBeats, &mut rng);
            assert_ne!(premature.verdict().key.as_str(), "regular");
            assert_eq!(premature.rhythm.features.ectopic_beats, 5);
            premature_called_af += usize::from(premature.verdict().af);
            assert!(read(Rhythm::TooShort, &mut rng).failed());
        }
        println!(
            "AF called AF: {af_called_af} of 50; premature beats called AF: {premature_called_af} of 50"
        );
        assert!(af_called_af >= 45, "{af_called_af}");
    }
}

//! The demo world of `tacho serve --demo`: an administrator, two groups with a physician each,
//! and four patients with profiles, running prescriptions (with their consents to processing
//! and sharing) and a few measurements each (the test fixtures). Seeding twice changes
//! nothing.

use chrono::Duration;
use sea_orm::sea_query::{Alias, Condition, Expr, ExprTrait};
use serde_json::json;

use crate::auth::password::PasswordHasher;
use crate::domain::account::StaffRole;
use crate::domain::consent::{GROUP_SHARING_VERSION, HEALTH_DATA_VERSION};
use crate::domain::id::Id;
use crate::domain::measurement::NewMeasurement;
use crate::domain::profile::ProfilePatch;
use crate::store::NewConsent;
use crate::store::entities::consent::{ConsentDoor, ConsentKind};
use crate::store::{NewGroup, NewUser, Service, Store, StoreResult, Tx, Unaudited, Viewer};

pub mod clinic;

/// The password of every demo account.
pub const DEMO_PASSWORD: &str = "tacho-demo";

/// A demo account to print.
#[derive(Debug, Clone)]
pub struct DemoLogin {
    pub role: &'static str,
    pub email: &'static str,
    pub name: String,
}

struct Person {
    role: &'static str,
    email: &'static str,
    first: &'static str,
    last: &'static str,
    language: &'static str,
    zone: &'static str,
    group: Option<usize>,
    profile: serde_json::Value,
}

const GROUPS: [(&str, &str); 2] = [
    (
        "Cardiology Ghent",
        "Rhythm clinic of the Ghent demo hospital",
    ),
    ("Heart Centre Lyon", "Ambulatory monitoring team, Lyon"),
];

fn people() -> Vec<Person> {
    vec![
        Person {
            role: "admin",
            email: "admin@tacho.test",
            first: "Ada",
            last: "Admin",
            language: "EN",
            zone: "Europe/Brussels",
            group: None,
            profile: json!({}),
        },
        Person {
            role: "physician",
            email: "dr.peeters@tacho.test",
            first: "Jan",
            last: "Peeters",
            language: "NL",
            zone: "Europe/Brussels",
            group: Some(0),
            profile: json!({}),
        },
        Person {
            role: "physician",
            email: "dr.martin@tacho.test",
            first: "Claire",
            last: "Martin",
            language: "FR",
            zone: "Europe/Paris",
            group: Some(1),
            profile: json!({}),
        },
        Person {
            role: "patient",
            email: "anna@tacho.test",
            first: "Anna",
            last: "Janssens",
            language: "NL",
            zone: "Europe/Brussels",
            group: Some(0),
            profile: json!({"country": "BE", "city": "Gent", "birthday": "1958-03-14", "gender": 2, "weight": 68, "length": 165,
                "comorbidities": ["HYPERTENSION"], "smoker": false, "activity": "MODERATELY_ACTIVE", "physician": "Dr. Jan Peeters",
                "service_info": {"app": {"version": "3.4.1"}, "device": {"os": "17.2", "model": "iPhone 13", "type": "ios", "manufacturer": "Apple"}}}),
        },
        Person {
            role: "patient",
            email: "wei@tacho.test",
            first: "伟",
            last: "陈",
            language: "ZH",
            zone: "Asia/Shanghai",
            group: Some(0),
            profile: json!({"country": "CN", "city": "上海", "birthday": "1971-09-02", "gender": 1, "weight": 74, "length": 172,
                "comorbidities": ["DIABETES"], "smoker": true, "activity": "SLIGHTLY_ACTIVE", "physician": "Dr. Jan Peeters",
                "service_info": {"device": {"os": "14", "model": "Pixel 8", "type": "android", "manufacturer": "Google"}}}),
        },
        Person {
            role: "patient",
            email: "luc@tacho.test",
            first: "Luc",
            last: "Dubois",
            language: "FR",
            zone: "Europe/Paris",
            group: Some(1),
            profile: json!({"country": "FR", "city": "Lyon", "birthday": "1949-11-30", "gender": 1, "weight": 81, "length": 178,
                "comorbidities": ["HEART_FAILURE", "HYPERTENSION"], "smoker": false, "activity": "NOT_ACTIVE", "physician": "Dr. Claire Martin",
                "impediments": ["TREMOR"]}),
        },
        Person {
            role: "patient",
            email: "layla@tacho.test",
            first: "ليلى",
            last: "حداد",
            language: "AR",
            zone: "Asia/Dubai",
            group: Some(1),
            profile: json!({"country": "AE", "city": "Dubai", "birthday": "1985-06-21", "gender": 2, "weight": 59, "length": 160,
                "smoker": false, "activity": "ACTIVE", "physician": "Dr. Claire Martin"}),
        },
    ]
}

/// Seeds the demo world; existing accounts and groups (by e-mail and name) are left alone.
pub async fn seed(store: &Store, hasher: &PasswordHasher) -> anyhow::Result<Vec<DemoLogin>> {
    let mut group_ids = Vec::new();
    for (name, description) in GROUPS {
        let group = match store.group_by_name(name).await? {
            Some(group) => group,
            None => {
                store
                    .write(Unaudited::Operator, async |tx| {
                        tx.create_group(NewGroup {
                            name: name.into(),
                            description: Some(description.into()),
                        })
                        .await
                    })
                    .await?
            }
        };
        group_ids.push(group.id);
    }
    let admin = Viewer {
        user_id: Id::generate(),
        admin: true,
    };
    let today = store.clock().now().date_naive();
    let prescription_end = (store.clock().now() + Duration::days(30)).timestamp_millis();
    let password_hash = hasher.hash(DEMO_PASSWORD.to_owned()).await?;
    let mut logins = Vec::new();
    for person in people() {
        if store
            .user_by_email(&Service::Operator, person.email)
            .await?
            .is_none()
        {
            // Each person, with prescription, profile and measurements, in one transaction.
            let tx = store.begin().await?;
            let user = tx
                .create_user(NewUser {
                    email: person.email.into(),
                    password_hash: password_hash.clone(),
                    first_name: person.first.into(),
                    last_name: person.last.into(),
                    phone_number: None,
                    language: person.language.into(),
                    time_zone: person.zone.into(),
                    roles: if person.role == "admin" {
                        vec!["admin".into()]
                    } else {
                        Vec::new()
                    },
                    password_change_due: false,
                })
                .await?;
            match (person.role, person.group) {
                ("physician", Some(g)) => {
                    tx.enlist_staff(&user.id, &group_ids[g], vec![StaffRole::physician()])
                        .await?
                }
                ("patient", Some(g)) => {
                    tx.enlist_patient(&user.id, &group_ids[g], prescription_end)
                        .await?;
                    // The demo patients consented as the apps' patients do: to the processing
                    // of their health data, and to sharing with their care team.
                    let consent = |kind, group_id| NewConsent {
                        user_id: user.id,
                        kind,
                        group_id,
                        text_version: match kind {
                            ConsentKind::HealthData => HEALTH_DATA_VERSION,
                            ConsentKind::GroupSharing => GROUP_SHARING_VERSION,
                        }
                        .to_owned(),
                        door: ConsentDoor::Operator,
                        given: true,
                        actor_id: user.id,
                    };
                    tx.record_consent(consent(ConsentKind::HealthData, None))
                        .await?;
                    tx.record_consent(consent(ConsentKind::GroupSharing, Some(group_ids[g])))
                        .await?;
                }
                _ => {}
            }
            let patch = ProfilePatch::parse(person.profile, today)
                .map_err(|e| anyhow::anyhow!("demo profile: {e}"))?;
            update_one_profile(&tx, &admin, &user.id, &patch).await?;
            if person.role == "patient" {
                seed_measurements(&tx, &user.id, logins.len()).await?;
            }
            tx.commit_unaudited(Unaudited::Operator).await?;
        }
        logins.push(DemoLogin {
            role: person.role,
            email: person.email,
            name: format!("{} {}", person.first, person.last),
        });
    }
    Ok(logins)
}

/// Payloads of the demo measurements: the camera recordings of the test fixtures (sinus
/// rhythm at 72 bpm, an irregular rhythm like atrial fibrillation, a slow rhythm at 48 bpm).
/// Tacho's analysis gives each its result, as for any upload.
const MEASUREMENTS: [&str; 3] = [
    include_str!("../../tests/fixtures/sinus_72.json"),
    include_str!("../../tests/fixtures/irregular_af.json"),
    include_str!("../../tests/fixtures/bradycardia_48.json"),
];

/// Four measurements over the last days for a new demo patient (the `n`th person, so that
/// patients differ), with sinus rhythm most often.
async fn seed_measurements(store: &Tx, user_id: &Id, n: usize) -> anyhow::Result<()> {
    let now = store.clock().now();
    for (k, which) in [0, 1, 0, 2].into_iter().enumerate() {
        let payload = MEASUREMENTS[(which + n) % MEASUREMENTS.len()];
        let mut data: serde_json::Value = serde_json::from_str(payload)?;
        let at = now - Duration::hours(7 + 29 * k as i64 + 3 * n as i64);
        data["measurement_timestamp"] = json!(at.timestamp_millis());
        let new =
            NewMeasurement::parse(data).map_err(|e| anyhow::anyhow!("demo measurement: {e}"))?;
        store.create_measurement(user_id, new).await?;
    }
    Ok(())
}

async fn update_one_profile(
    store: &Tx,
    admin: &Viewer,
    id: &Id,
    patch: &ProfilePatch,
) -> StoreResult<u64> {
    let condition =
        Condition::all().add(Expr::col((Alias::new("profiles"), Alias::new("id"))).eq(*id));
    Ok(store.update_profiles(admin, condition, patch).await?.len() as u64)
}

/// The logins as a table for the terminal.
pub fn describe(logins: &[DemoLogin], base_url: &str) -> String {
    let mut out =
        format!("Demo accounts (password for all: {DEMO_PASSWORD}), serving {base_url}\n");
    for login in logins {
        out.push_str(&format!(
            "  {:<10} {:<24} {}\n",
            login.role, login.email, login.name
        ));
    }
    out
}

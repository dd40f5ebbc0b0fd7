//! The time-zone choice: IANA zones grouped by region, each named by its city with its offset
//! now, without the `Etc/` zones (whose `GMT+5` means five hours *behind*) and the old
//! country aliases (`US/Eastern`), which name the same clocks as a city does.

use chrono::{DateTime, Offset, TimeZone as _, Utc};
use chrono_tz::Tz;

use crate::i18n::Translator;

/// The regions of the IANA database, in the order shown.
const REGIONS: [&str; 10] = [
    "Europe",
    "America",
    "Africa",
    "Asia",
    "Australia",
    "Pacific",
    "Atlantic",
    "Indian",
    "Antarctica",
    "Arctic",
];

/// One zone of the list.
pub struct ZoneChoice {
    /// The IANA name, the value sent.
    pub name: &'static str,
    /// The city (and sub-region), then the offset now: `Buenos Aires, Argentina (UTC−03:00)`.
    pub label: String,
    pub selected: bool,
}

/// A region and its zones, sorted by their label.
pub struct ZoneGroup {
    pub label: String,
    pub zones: Vec<ZoneChoice>,
}

/// `UTC+01:00`, `UTC−03:30`, `UTC` for zero.
fn offset_text(zone: Tz, now: DateTime<Utc>) -> String {
    let seconds = zone
        .offset_from_utc_datetime(&now.naive_utc())
        .fix()
        .local_minus_utc();
    if seconds == 0 {
        return "UTC".to_owned();
    }
    let sign = if seconds < 0 { '−' } else { '+' };
    let minutes = seconds.abs() / 60;
    format!("UTC{sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

/// `Argentina/Buenos_Aires` → `Buenos Aires, Argentina`.
fn city_of(rest: &str) -> String {
    let mut parts: Vec<String> = rest.split('/').map(|p| p.replace('_', " ")).collect();
    parts.reverse();
    parts.join(", ")
}

/// Every shown zone, grouped by region in the reader's language; `current` is selected, and
/// kept in a group of its own if it is not one of them (an `Etc/` zone set by an app).
pub fn zone_groups(tr: &Translator, now: DateTime<Utc>, current: &str) -> Vec<ZoneGroup> {
    let mut groups: Vec<ZoneGroup> = REGIONS
        .iter()
        .map(|region| ZoneGroup {
            label: tr.text(&format!("tz-region-{}", region.to_ascii_lowercase())),
            zones: Vec::new(),
        })
        .collect();
    let mut found_current = false;
    for zone in chrono_tz::TZ_VARIANTS {
        let name = zone.name();
        let Some((region, rest)) = name.split_once('/') else {
            continue;
        };
        let Some(index) = REGIONS.iter().position(|r| *r == region) else {
            continue;
        };
        let selected = name == current;
        found_current |= selected;
        groups[index].zones.push(ZoneChoice {
            name,
            label: format!("{} ({})", city_of(rest), offset_text(zone, now)),
            selected,
        });
    }
    for group in &mut groups {
        group.zones.sort_by(|a, b| a.label.cmp(&b.label));
    }
    let utc = ZoneGroup {
        label: "UTC".to_owned(),
        zones: vec![ZoneChoice {
            name: "UTC",
            label: "UTC".to_owned(),
            selected: current == "UTC",
        }],
    };
    found_current |= current == "UTC";
    groups.push(utc);
    if !found_current && let Ok(zone) = current.parse::<Tz>() {
        groups.push(ZoneGroup {
            label: tr.text("tz-region-other"),
            zones: vec![ZoneChoice {
                name: zone.name(),
                label: format!("{} ({})", zone.name(), offset_text(zone, now)),
                selected: true,
            }],
        });
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::account::Language;

    #[test]
    fn zones_are_grouped_named_by_city_and_carry_their_offset_now() {
        let tr = Translator::new(Language::En);
        let winter = "2026-01-15T12:00:00Z".parse::<DateTime<Utc>>().unwrap();
        let groups = zone_groups(&tr, winter, "Europe/Brussels");
        let europe = &groups[0];
        let brussels = europe
            .zones
            .iter()
            .find(|z| z.name == "Europe/Brussels")
            .unwrap();
        assert_eq!(brussels.label, "Brussels (UTC+01:00)");
        assert!(brussels.selected);
        let all: Vec<&ZoneChoice> = groups.iter().flat_map(|g| &g.zones).collect();
        assert!(
            all.iter()
                .all(|z| !z.name.starts_with("Etc/") && !z.name.starts_with("US/"))
        );
        let buenos_aires = all
            .iter()
            .find(|z| z.name == "America/Argentina/Buenos_Aires")
            .unwrap();
        assert_eq!(buenos_aires.label, "Buenos Aires, Argentina (UTC−03:00)");
        let summer = "2026-07-15T12:00:00Z".parse::<DateTime<Utc>>().unwrap();
        let july = zone_groups(&tr, summer, "UTC");
        let kolkata = july
            .iter()
            .flat_map(|g| &g.zones)
            .find(|z| z.name == "Asia/Kolkata")
            .unwrap();
        assert_eq!(kolkata.label, "Kolkata (UTC+05:30)");
        assert!(
            july.iter()
                .flat_map(|g| &g.zones)
                .any(|z| z.name == "UTC" && z.selected)
        );
        // A zone set by an app outside the list stays selected rather than be lost on save.
        let odd = zone_groups(&tr, winter, "Etc/GMT+5");
        let kept = odd.last().unwrap();
        assert_eq!(kept.zones[0].name, "Etc/GMT+5");
        assert!(kept.zones[0].selected && kept.zones[0].label.contains("UTC−05:00"));
    }
}

//! The periods of a prescription that periodic reports cover. A prescription runs from its
//! start to its end; every 7 and every 30 days of it a report is due, and one when it ends.
//! Days are the patient's local calendar days, so a week across a daylight-saving change is
//! still seven days (of 167 or 169 hours).

use chrono::{DateTime, Days, TimeZone, Utc};
use chrono_tz::Tz;

/// Why a periodic report is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Trigger {
    /// On request.
    Manual,
    /// Every 7 days of a prescription.
    PeriodDaysPassed7,
    /// Every 30 days of a prescription.
    PeriodDaysPassed30,
    /// The prescription ended.
    PrescriptionEnded,
}

impl Trigger {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Manual => "MANUAL",
            Trigger::PeriodDaysPassed7 => "PERIOD_DAYS_PASSED_7",
            Trigger::PeriodDaysPassed30 => "PERIOD_DAYS_PASSED_30",
            Trigger::PrescriptionEnded => "PRESCRIPTION_ENDED",
        }
    }

    /// Parses a wire name.
    pub fn parse(text: &str) -> Option<Self> {
        [
            Trigger::Manual,
            Trigger::PeriodDaysPassed7,
            Trigger::PeriodDaysPassed30,
            Trigger::PrescriptionEnded,
        ]
        .into_iter()
        .find(|t| t.as_str() == text)
    }
}

/// A period a report covers: `[start, end)` in epoch milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Period {
    pub trigger: Trigger,
    pub start: i64,
    pub end: i64,
}

/// The instant `days` local calendar days after `start`, at the same local time of day. A
/// local time that does not exist (skipped by a DST change) moves to the next one that does.
fn local_days_after(start: DateTime<Tz>, days: u64) -> Option<DateTime<Utc>> {
    let local = start.naive_local().checked_add_days(Days::new(days))?;
    let zone = start.timezone();
    zone.from_local_datetime(&local)
        .earliest()
        .or_else(|| {
            zone.from_local_datetime(&(local + chrono::Duration::hours(1)))
                .earliest()
        })
        .map(|t| t.with_timezone(&Utc))
}

/// Every period of a prescription from `start` to `end` (epoch ms) that has ended by `now`:
/// each complete 7-day and 30-day period, and the whole prescription once it has ended.
/// Periods are in the order they end.
pub fn due_periods(start: i64, end: i64, now: i64, zone: Tz) -> Vec<Period> {
    let Some(start_local) = zone.timestamp_millis_opt(start).single() else {
        return Vec::new();
    };
    let until = end.min(now);
    let mut periods = Vec::new();
    for (trigger, length) in [
        (Trigger::PeriodDaysPassed7, 7u64),
        (Trigger::PeriodDaysPassed30, 30),
    ] {
        for k in 0.. {
            let (Some(from), Some(to)) = (
                local_days_after(start_local, k * length),
                local_days_after(start_local, (k + 1) * length),
            ) else {
                break;
            };
            let (from, to) = (from.timestamp_millis(), to.timestamp_millis());
            if to > until {
                break;
            }
            periods.push(Period {
                trigger,
                start: from,
                end: to,
            });
        }
    }
    if end <= now && end > start {
        periods.push(Period {
            trigger: Trigger::PrescriptionEnded,
            start,
            end,
        });
    }
    periods.sort_by_key(|p| (p.end, p.trigger));
    periods
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000;

    fn at(zone: Tz, y: i32, m: u32, d: u32, h: u32) -> i64 {
        zone.with_ymd_and_hms(y, m, d, h, 0, 0)
            .unwrap()
            .timestamp_millis()
    }

    #[test]
    fn a_finished_thirty_day_prescription_has_four_weeks_a_month_and_an_end() {
        let zone = chrono_tz::UTC;
        let start = at(zone, 2026, 10, 1, 9);
        let end = start + 30 * DAY;
        let periods = due_periods(start, end, end + DAY, zone);
        let weekly: Vec<_> = periods
            .iter()
            .filter(|p| p.trigger == Trigger::PeriodDaysPassed7)
            .collect();
        assert_eq!(weekly.len(), 4);
        assert_eq!((weekly[0].start, weekly[0].end), (start, start + 7 * DAY));
        assert_eq!(weekly[3].end, start + 28 * DAY);
        let monthly: Vec<_> = periods
            .iter()
            .filter(|p| p.trigger == Trigger::PeriodDaysPassed30)
            .collect();
        assert_eq!(monthly.len(), 1);
        assert_eq!((monthly[0].start, monthly[0].end), (start, end));
        assert_eq!(
            periods.last(),
            Some(&Period {
                trigger: Trigger::PrescriptionEnded,
                start,
                end
            })
        );
        assert_eq!(periods.len(), 6);
    }

    #[test]
    fn only_periods_that_ended_are_due() {
        let zone = chrono_tz::UTC;
        let start = at(zone, 2026, 10, 1, 9);
        let end = start + 30 * DAY;
        assert!(due_periods(start, end, start + 7 * DAY - 1, zone).is_empty());
        let after_a_week = due_periods(start, end, start + 7 * DAY, zone);
        assert_eq!(
            after_a_week,
            vec![Period {
                trigger: Trigger::PeriodDaysPassed7,
                start,
                end: start + 7 * DAY
            }]
        );
        // Ended early: the last, incomplete week is covered by the end-of-prescription report.
        let early_end = start + 10 * DAY;
        let ended = due_periods(start, early_end, early_end, zone);
        assert_eq!(
            ended.iter().map(|p| p.trigger).collect::<Vec<_>>(),
            [Trigger::PeriodDaysPassed7, Trigger::PrescriptionEnded]
        );
    }

    #[test]
    fn weeks_across_a_dst_change_have_seven_local_days() {
        let zone: Tz = "Europe/Brussels".parse().unwrap();
        // Summer time ends on 25 October 2026 at 03:00 local time.
        let start = at(zone, 2026, 10, 20, 8);
        let periods = due_periods(start, start + 60 * DAY, start + 8 * DAY, zone);
        let week = periods[0];
        assert_eq!(
            week.end,
            at(zone, 2026, 10, 27, 8),
            "08:00 local, seven days later"
        );
        assert_eq!(
            week.end - week.start,
            7 * DAY + 3_600_000,
            "a 169-hour week"
        );
        let spring: Tz = "America/New_York".parse().unwrap();
        let start = at(spring, 2026, 3, 5, 2);
        let week = due_periods(start, start + 30 * DAY, start + 8 * DAY, spring)[0];
        assert_eq!(
            week.end - week.start,
            7 * DAY - 3_600_000,
            "a 167-hour week"
        );
    }

    #[test]
    fn triggers_have_wire_names() {
        for trigger in [
            Trigger::Manual,
            Trigger::PeriodDaysPassed7,
            Trigger::PeriodDaysPassed30,
            Trigger::PrescriptionEnded,
        ] {
            assert_eq!(Trigger::parse(trigger.as_str()), Some(trigger));
        }
        assert_eq!(Trigger::parse("WEEKLY"), None);
    }
}

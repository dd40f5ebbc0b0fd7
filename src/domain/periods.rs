//! The periods of a prescription that periodic reports cover. A prescription runs from its
//! start to its end; every 7 and every 30 days of it a report is due, and one when it ends.
//! Days are the patient's local calendar days, so a week across a daylight-saving change is
//! still seven days (of 167 or 169 hours).

use chrono::{DateTime, Days, Offset, Utc};
use chrono_tz::Tz;

use super::time::{at_local_time, check_millis, local_time};

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

impl std::fmt::Display for Trigger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Trigger {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Trigger {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Trigger::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown trigger `{text}`")))
    }
}

/// A period a report covers: `[start, end)` in epoch milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Period {
    pub trigger: Trigger,
    /// Which period of its trigger this is, from 0: the same in every time zone, while its
    /// start and end move with the zone's daylight-saving rules.
    pub index: u32,
    pub start: i64,
    pub end: i64,
}

/// The next report of a prescription from `start` to `end` in `zone`: the earliest of its
/// periods to end after `after` (the end of the latest one enqueued), whether it has ended
/// yet or not.
pub fn next_period(start: i64, end: i64, after: Option<i64>, zone: Tz) -> Option<Period> {
    let after = after.unwrap_or(i64::MIN);
    due_periods(start, end, i64::MAX, zone)
        .into_iter()
        .filter(|p| p.end > after)
        .min_by_key(|p| p.end)
}

/// The longest period a manual report may cover, in days.
pub const MAX_MANUAL_DAYS: i64 = 366;
const DAY_MS: i64 = 86_400_000;

/// Checks the period of a manual report: `[start, end)` in epoch ms, both within
/// [`check_millis`]'s range (1970 to the end of 9999), at most [`MAX_MANUAL_DAYS`] long. The
/// error names the rule broken.
pub fn check_manual_period(start: i64, end: i64) -> Result<(), String> {
    check_millis("period_start_timestamp", start)?;
    check_millis("period_end_timestamp", end)?;
    if end <= start {
        return Err("period_end_timestamp must be after period_start_timestamp".into());
    }
    match end.checked_sub(start) {
        Some(length) if length <= MAX_MANUAL_DAYS * DAY_MS => Ok(()),
        _ => Err(format!("a report covers at most {MAX_MANUAL_DAYS} days")),
    }
}

/// A period the portal offers for a patient's trends and for a report made on request: the
/// last 7 days, the last 30 days (the lengths of the scheduled reports), or the prescription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChosenPeriod {
    Week,
    Month,
    Prescription,
}

impl ChosenPeriod {
    /// Every choice, shortest first.
    pub const ALL: [ChosenPeriod; 3] = [
        ChosenPeriod::Week,
        ChosenPeriod::Month,
        ChosenPeriod::Prescription,
    ];

    /// The form's value.
    pub fn as_str(self) -> &'static str {
        match self {
            ChosenPeriod::Week => "week",
            ChosenPeriod::Month => "month",
            ChosenPeriod::Prescription => "prescription",
        }
    }

    /// The choice named `value`, if any.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == value)
    }

    /// `[start, end)` at `now`. The prescription's period runs from its start to its end or
    /// now, whichever is first, and at most [`MAX_MANUAL_DAYS`] back; `None` without one.
    pub fn bounds(self, now: i64, prescription: Option<(i64, i64)>) -> Option<(i64, i64)> {
        let days_back = |days: i64| Some((now.saturating_sub(days * DAY_MS), now));
        match self {
            ChosenPeriod::Week => days_back(7),
            ChosenPeriod::Month => days_back(30),
            ChosenPeriod::Prescription => {
                let (start, end) = prescription?;
                let end = end.min(now);
                let start = start.max(end.saturating_sub(MAX_MANUAL_DAYS * DAY_MS));
                (start < end).then_some((start, end))
            }
        }
    }
}

/// The period of a manual report with defaults: it ends at `end` or now, and starts at
/// `start` or seven days before its end; then checked by [`check_manual_period`]. A client's
/// numbers meet arithmetic here, so every step is checked: an end of `i64::MIN` is an error,
/// not an overflow.
pub fn manual_period(start: Option<i64>, end: Option<i64>, now: i64) -> Result<(i64, i64), String> {
    let end = check_millis("period_end_timestamp", end.unwrap_or(now))?;
    let start = match start {
        Some(start) => start,
        None => end
            .checked_sub(7 * DAY_MS)
            .ok_or_else(|| "period_end_timestamp is too early for a 7-day period".to_owned())?,
    };
    check_manual_period(start, end)?;
    Ok((start, end))
}

/// The instant `days` local calendar days after `start`, at the same local time of day. A
/// local time that does not exist (skipped by a DST change) moves to the first one after it
/// that does ([`at_local_time`]).
fn local_days_after(start: DateTime<Tz>, days: u64) -> Option<DateTime<Utc>> {
    let local = start.naive_local().checked_add_days(Days::new(days))?;
    let at = at_local_time(local.date(), local.time(), start.timezone())?;
    DateTime::<Utc>::from_timestamp_millis(at)
}

/// Every period of a prescription from `start` to `end` (epoch ms) that has ended by `now`:
/// each complete 7-day and 30-day period, and the whole prescription once it has ended.
/// Periods are in the order they end.
///
/// A prescription's end is an instant, usually a whole number of 24-hour days after its start.
/// When a daylight-saving change falls inside it, its last local day is an hour short or long;
/// a period that would end after the prescription by no more than that change ends with the
/// prescription instead, so a 30-day prescription across October still has its 30-day report.
pub fn due_periods(start: i64, end: i64, now: i64, zone: Tz) -> Vec<Period> {
    let (Some(start_local), Some(end_local)) = (local_time(zone, start), local_time(zone, end))
    else {
        return Vec::new();
    };
    let offset = |t: DateTime<Tz>| i64::from(t.offset().fix().local_minus_utc()) * 1000;
    let shift = (offset(end_local) - offset(start_local)).abs();
    let ended = end <= now && end > start;
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
            let (from, mut to) = (from.timestamp_millis(), to.timestamp_millis());
            if to > end && to - end <= shift && from < end {
                to = end;
            }
            if to > end.min(now) {
                break;
            }
            periods.push(Period {
                trigger,
                index: k as u32,
                start: from,
                end: to,
            });
            if to == end {
                break;
            }
        }
    }
    if ended {
        periods.push(Period {
            trigger: Trigger::PrescriptionEnded,
            index: 0,
            start,
            end,
        });
    }
    periods.sort_by_key(|p| (p.end, p.trigger));
    periods
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

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
                index: 0,
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
                index: 0,
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
    fn chosen_periods_end_now_or_with_the_prescription() {
        let now = 100 * DAY;
        assert_eq!(ChosenPeriod::Week.bounds(now, None), Some((93 * DAY, now)));
        assert_eq!(ChosenPeriod::Month.bounds(now, None), Some((70 * DAY, now)));
        assert_eq!(ChosenPeriod::Prescription.bounds(now, None), None);
        assert_eq!(
            ChosenPeriod::Prescription.bounds(now, Some((40 * DAY, 200 * DAY))),
            Some((40 * DAY, now)),
            "a running prescription ends now"
        );
        assert_eq!(
            ChosenPeriod::Prescription.bounds(now, Some((10 * DAY, 50 * DAY))),
            Some((10 * DAY, 50 * DAY))
        );
        assert_eq!(
            ChosenPeriod::Prescription.bounds(1000 * DAY, Some((0, 900 * DAY))),
            Some((534 * DAY, 900 * DAY)),
            "at most a year back"
        );
        for p in ChosenPeriod::ALL {
            assert_eq!(ChosenPeriod::parse(p.as_str()), Some(p));
            if let Some((start, end)) = p.bounds(now, Some((40 * DAY, 200 * DAY))) {
                assert_eq!(check_manual_period(start, end), Ok(()));
            }
        }
        assert_eq!(ChosenPeriod::parse("year"), None);
    }

    #[test]
    fn manual_periods_default_to_the_last_week_and_are_bounded() {
        assert_eq!(manual_period(None, None, 10 * DAY), Ok((3 * DAY, 10 * DAY)));
        assert_eq!(
            manual_period(Some(DAY), None, 10 * DAY),
            Ok((DAY, 10 * DAY))
        );
        assert!(check_manual_period(0, DAY).is_ok());
        assert!(check_manual_period(DAY, DAY).is_err());
        assert!(check_manual_period(-1, DAY).is_err());
        assert!(check_manual_period(0, 366 * DAY).is_ok());
        assert!(check_manual_period(0, 367 * DAY).is_err());
    }

    #[test]
    fn manual_periods_refuse_extreme_numbers_without_overflowing() {
        let now = 10 * DAY;
        let extremes = [i64::MIN, i64::MIN + 1, -1, i64::MAX - 1, i64::MAX];
        for x in extremes {
            for (start, end) in [
                (None, Some(x)),
                (Some(x), None),
                (Some(x), Some(x)),
                (Some(0), Some(x)),
                (Some(x), Some(DAY)),
            ] {
                assert!(manual_period(start, end, now).is_err(), "{start:?} {end:?}");
            }
            for y in extremes {
                assert!(check_manual_period(x, y).is_err(), "{x} {y}");
            }
        }
        let message = manual_period(None, Some(i64::MIN), now).unwrap_err();
        assert!(
            message.starts_with("`period_end_timestamp` must be"),
            "{message}"
        );
        assert!(manual_period(None, Some(crate::domain::time::MAX_MILLIS), now).is_ok());
    }

    #[test]
    fn due_periods_of_extreme_prescriptions_do_not_overflow() {
        let zone: Tz = "Pacific/Kiritimati".parse().unwrap();
        for (start, end, now) in [
            (i64::MIN, i64::MAX, i64::MAX),
            (0, i64::MAX, i64::MAX),
            (i64::MAX - DAY, i64::MAX, i64::MAX),
            (8_210_266_876_799_000, 8_210_266_876_799_999, i64::MAX),
        ] {
            due_periods(start, end, now, zone);
        }
    }

    #[test]
    fn the_next_period_is_the_earliest_to_end_after_the_last_enqueued() {
        let zone: Tz = "Europe/Brussels".parse().unwrap();
        let start = at(zone, 2026, 1, 5, 9);
        let end = start + 30 * DAY;
        let first = next_period(start, end, None, zone).unwrap();
        assert_eq!(
            (first.trigger, first.index),
            (Trigger::PeriodDaysPassed7, 0)
        );
        assert_eq!(first.end, start + 7 * DAY);
        let fifth = next_period(start, end, Some(start + 28 * DAY), zone).unwrap();
        assert_eq!(fifth.end, end);
        assert_eq!(fifth.trigger, Trigger::PeriodDaysPassed30);
        assert!(next_period(start, end, Some(end), zone).is_none());
    }

    #[test]
    fn a_prescription_across_a_dst_change_keeps_its_last_period() {
        let zone: Tz = "Europe/Brussels".parse().unwrap();
        // 30 days of 24 hours from 22 October: the last local day has 25 hours.
        let start = at(zone, 2026, 10, 22, 9);
        let end = start + 30 * DAY;
        let periods = due_periods(start, end, end + DAY, zone);
        let count = |t| periods.iter().filter(|p| p.trigger == t).count();
        assert_eq!(count(Trigger::PeriodDaysPassed7), 4);
        assert_eq!(count(Trigger::PeriodDaysPassed30), 1);
        assert_eq!(count(Trigger::PrescriptionEnded), 1);
        let monthly = periods
            .iter()
            .find(|p| p.trigger == Trigger::PeriodDaysPassed30)
            .unwrap();
        assert_eq!((monthly.start, monthly.end), (start, end));
        // Before the end, the shortened month is not due yet.
        assert!(
            due_periods(start, end, end - 1, zone)
                .iter()
                .all(|p| p.trigger == Trigger::PeriodDaysPassed7)
        );
        // A prescription 60 days long has two months, the second ending with it.
        let long = due_periods(start, start + 60 * DAY, start + 61 * DAY, zone);
        assert_eq!(
            long.iter()
                .filter(|p| p.trigger == Trigger::PeriodDaysPassed30)
                .count(),
            2
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

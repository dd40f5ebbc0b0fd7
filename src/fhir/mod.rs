//! HL7 FHIR R4 (4.0.1), read-only: Tacho's patients, results and reports as a clinic's own
//! systems read them. `docs/fhir.md` maps each field to its element and code.
//!
//! This module is framework-free: the resources ([`model`]), their codes ([`codes`]), the
//! mapping from Tacho's records ([`map`]), and the parsing of search parameters and the
//! CapabilityStatement (here). What a reader may see is decided by the access gate before
//! anything reaches it; `routes::api::fhir` serves it.

pub mod codes;
pub mod map;
pub mod model;

use chrono::{NaiveDate, TimeZone, Utc};

use model::*;

/// The FHIR version served.
pub const FHIR_VERSION: &str = "4.0.1";
/// The media type of every answer.
pub const MEDIA_TYPE: &str = "application/fhir+json";
/// A search's page when `_count` does not say.
pub const DEFAULT_COUNT: u64 = 20;
/// The largest page: a larger `_count` is served as this many.
pub const MAX_COUNT: u64 = 100;

/// A search parameter that cannot be served: FHIR's `not-supported` or `invalid`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    #[error("unknown search parameter `{0}` (this server refuses what it would otherwise ignore)")]
    Unknown(String),
    #[error("`{0}`: {1}")]
    Invalid(String, String),
    #[error("`{0}` is required")]
    Missing(&'static str),
}

/// A bound on a date search parameter: the instant (epoch ms) a value must be at or after,
/// and the one it must be before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DateRange {
    pub from: Option<i64>,
    pub before: Option<i64>,
}

impl DateRange {
    /// Narrows the range by one `date` value: an optional prefix (`eq`, `ge`, `gt`, `le`,
    /// `lt`) and a FHIR date or dateTime. A date without a time is the whole day in UTC.
    pub fn narrow(&mut self, value: &str) -> Result<(), SearchError> {
        let invalid = |why: &str| SearchError::Invalid("date".to_owned(), why.to_owned());
        let (prefix, rest) = match value.get(..2) {
            Some(p @ ("eq" | "ge" | "gt" | "le" | "lt")) => (p, &value[2..]),
            Some(p) if p.chars().all(|c| c.is_ascii_lowercase()) => {
                return Err(invalid("prefixes served: eq, ge, gt, le, lt"));
            }
            _ => ("eq", value),
        };
        let (start, end) = interval(rest).ok_or_else(|| {
            invalid("must be a date (YYYY, YYYY-MM, YYYY-MM-DD) or a dateTime with its offset")
        })?;
        let raise = |bound: &mut Option<i64>, v: i64| *bound = Some(bound.map_or(v, |b| b.max(v)));
        let lower = |bound: &mut Option<i64>, v: i64| *bound = Some(bound.map_or(v, |b| b.min(v)));
        match prefix {
            "ge" => raise(&mut self.from, start),
            "gt" => raise(&mut self.from, end),
            "le" => lower(&mut self.before, end),
            "lt" => lower(&mut self.before, start),
            _ => {
                raise(&mut self.from, start);
                lower(&mut self.before, end);
            }
        }
        Ok(())
    }

    /// Whether `millis` falls in the range.
    pub fn holds(&self, millis: i64) -> bool {
        self.from.is_none_or(|from| millis >= from) && self.before.is_none_or(|b| millis < b)
    }
}

/// The interval `[start, end)` (epoch ms) a FHIR date or dateTime stands for.
fn interval(text: &str) -> Option<(i64, i64)> {
    let day = |y: i32, m: u32, d: u32| NaiveDate::from_ymd_opt(y, m, d);
    let millis = |date: NaiveDate| -> Option<i64> {
        Some(
            Utc.from_utc_datetime(&date.and_hms_opt(0, 0, 0)?)
                .timestamp_millis(),
        )
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match text.len() {
        4 if digits(text) => {
            let y: i32 = text.parse().ok()?;
            Some((millis(day(y, 1, 1)?)?, millis(day(y + 1, 1, 1)?)?))
        }
        7 if digits(&text[..4]) && &text[4..5] == "-" && digits(&text[5..]) => {
            let (y, m): (i32, u32) = (text[..4].parse().ok()?, text[5..].parse().ok()?);
            let next = if m == 12 {
                day(y + 1, 1, 1)?
            } else {
                day(y, m + 1, 1)?
            };
            Some((millis(day(y, m, 1)?)?, millis(next)?))
        }
        10 => {
            let date = crate::domain::time::parse_day(text)?;
            Some((millis(date)?, millis(date.succ_opt()?)?))
        }
        _ => {
            let at = chrono::DateTime::parse_from_rfc3339(text).ok()?;
            let ms = at.timestamp_millis();
            // A dateTime is as precise as its seconds.
            Some((ms, ms + 1000))
        }
    }
}

/// `_count`: the page's size, at most [`MAX_COUNT`].
pub fn count(value: &str) -> Result<u64, SearchError> {
    value
        .parse::<u64>()
        .map(|n| n.min(MAX_COUNT))
        .map_err(|_| SearchError::Invalid("_count".to_owned(), "must be a whole number".into()))
}

/// `_offset`: where a page starts (the `next` and `previous` links carry it).
pub fn offset(value: &str) -> Result<u64, SearchError> {
    value
        .parse::<u64>()
        .map_err(|_| SearchError::Invalid("_offset".to_owned(), "must be a whole number".into()))
}

/// `_sort`: `-date` (newest first, the default) or `date`. Returns whether newest first.
pub fn newest_first(value: &str) -> Result<bool, SearchError> {
    match value {
        "-date" => Ok(true),
        "date" => Ok(false),
        _ => Err(SearchError::Invalid(
            "_sort".to_owned(),
            "sorts served: date, -date".to_owned(),
        )),
    }
}

/// A reference search value (`Patient/<id>` or `<id>`) as the id it names.
pub fn patient_id(value: &str) -> &str {
    value.strip_prefix("Patient/").unwrap_or(value)
}

/// An OperationOutcome of one error.
pub fn outcome(code: &str, diagnostics: &str) -> OperationOutcome {
    OperationOutcome {
        issue: vec![Issue {
            severity: "error".to_owned(),
            code: code.to_owned(),
            diagnostics: diagnostics.to_owned(),
        }],
    }
}

/// A page of a search or of `$everything`, with its links: `self`, and `previous` and
/// `next` where there are such pages (`page_url(offset)` makes each).
pub fn searchset(
    entries: Vec<BundleEntry>,
    total: Option<u64>,
    offset: u64,
    count: u64,
    more: bool,
    page_url: impl Fn(u64) -> String,
) -> Bundle {
    let mut link = vec![BundleLink {
        relation: "self".to_owned(),
        url: page_url(offset),
    }];
    // A page of none (`_count=0`, a total alone) has no pages beside it: its links would
    // name itself.
    if offset > 0 && count > 0 {
        link.push(BundleLink {
            relation: "previous".to_owned(),
            url: page_url(offset.saturating_sub(count)),
        });
    }
    if more && count > 0 {
        link.push(BundleLink {
            relation: "next".to_owned(),
            url: page_url(offset + count),
        });
    }
    Bundle {
        kind: "searchset".to_owned(),
        total,
        link,
        entry: entries,
    }
}

/// An entry of a Bundle, its `fullUrl` under `base` (`…/fhir/R4`).
pub fn entry(base: &str, resource: Resource, mode: &str) -> BundleEntry {
    let (kind, id) = resource.kind_and_id();
    BundleEntry {
        full_url: format!("{base}/{kind}/{id}"),
        resource,
        search: EntrySearch {
            mode: mode.to_owned(),
        },
    }
}

/// What this server serves, exactly: the reads, searches and parameters the routes take.
pub fn capability_statement(base: &str, version: &str, date: &str) -> CapabilityStatement {
    let interactions = |codes: &[&str]| {
        codes
            .iter()
            .map(|c| Interaction {
                code: (*c).to_owned(),
            })
            .collect()
    };
    let params = |list: &[(&str, &str)]| {
        list.iter()
            .map(|(name, kind)| SearchParam {
                name: (*name).to_owned(),
                kind: (*kind).to_owned(),
            })
            .collect()
    };
    let paging = [
        ("_count", "number"),
        ("_sort", "string"),
        ("_offset", "number"),
    ];
    let with_paging = |own: &[(&'static str, &'static str)]| {
        let mut all: Vec<(&str, &str)> = own.to_vec();
        all.extend(paging);
        params(&all)
    };
    let resource = |kind: &str, search: Vec<SearchParam>, operation: Vec<Operation>| RestResource {
        kind: kind.to_owned(),
        interaction: if search.is_empty() {
            interactions(&["read"])
        } else {
            interactions(&["read", "search-type"])
        },
        search_param: search,
        operation,
    };
    CapabilityStatement {
        status: "active".to_owned(),
        date: date.to_owned(),
        kind: "instance".to_owned(),
        software: Software {
            name: "Tacho".to_owned(),
            version: version.to_owned(),
        },
        implementation: Implementation {
            description: "Tacho: heart-rhythm screening results, read-only".to_owned(),
            url: base.to_owned(),
        },
        fhir_version: FHIR_VERSION.to_owned(),
        format: vec![MEDIA_TYPE.to_owned()],
        rest: vec![Rest {
            mode: "server".to_owned(),
            documentation: "Bearer tokens of /auth/v2; every read passes Tacho's access \
                            rules and is audited. Searches need `patient` (or, for Patient, \
                            `identifier`); unknown parameters are refused."
                .to_owned(),
            resource: vec![
                resource(
                    "Patient",
                    params(&[
                        ("identifier", "token"),
                        ("_count", "number"),
                        ("_offset", "number"),
                    ]),
                    vec![Operation {
                        name: "everything".to_owned(),
                        definition: "http://hl7.org/fhir/OperationDefinition/Patient-everything"
                            .to_owned(),
                    }],
                ),
                resource(
                    "Observation",
                    with_paging(&[
                        ("patient", "reference"),
                        ("code", "token"),
                        ("date", "date"),
                    ]),
                    Vec::new(),
                ),
                resource(
                    "DiagnosticReport",
                    with_paging(&[
                        ("patient", "reference"),
                        ("date", "date"),
                        ("category", "token"),
                    ]),
                    Vec::new(),
                ),
                resource(
                    "DocumentReference",
                    with_paging(&[("patient", "reference")]),
                    Vec::new(),
                ),
                resource("Device", Vec::new(), Vec::new()),
                resource("Binary", Vec::new(), Vec::new()),
            ],
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(text: &str) -> i64 {
        chrono::DateTime::parse_from_rfc3339(text)
            .unwrap()
            .timestamp_millis()
    }

    #[test]
    fn date_prefixes_bound_the_range_as_fhir_defines_them() {
        let mut range = DateRange::default();
        range.narrow("ge2026-11-01").unwrap();
        range.narrow("lt2026-11-03").unwrap();
        assert_eq!(range.from, Some(ms("2026-11-01T00:00:00Z")));
        assert_eq!(range.before, Some(ms("2026-11-03T00:00:00Z")));
        assert!(range.holds(ms("2026-11-02T23:59:59Z")));
        assert!(!range.holds(ms("2026-11-03T00:00:00Z")));

        let mut day = DateRange::default();
        day.narrow("2026-02").unwrap();
        assert_eq!(day.before, Some(ms("2026-03-01T00:00:00Z")));
        let mut after = DateRange::default();
        after.narrow("gt2026-11-01T10:00:00+01:00").unwrap();
        assert_eq!(after.from, Some(ms("2026-11-01T09:00:01Z")));
    }

    #[test]
    fn bad_dates_and_prefixes_are_refused() {
        for bad in ["sa2026-01-01", "2026-13-01", "yesterday", "ge", "2026-1-1"] {
            assert!(DateRange::default().narrow(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn count_is_bounded_and_sort_is_by_date() {
        assert_eq!(count("500").unwrap(), MAX_COUNT);
        assert!(count("-1").is_err());
        assert!(newest_first("-date").unwrap());
        assert!(newest_first("name").is_err());
    }

    #[test]
    fn a_searchset_links_to_the_pages_beside_it() {
        let page = searchset(Vec::new(), Some(45), 20, 20, true, |o| {
            format!("u?_offset={o}")
        });
        let links: Vec<(&str, &str)> = page
            .link
            .iter()
            .map(|l| (l.relation.as_str(), l.url.as_str()))
            .collect();
        assert_eq!(
            links,
            [
                ("self", "u?_offset=20"),
                ("previous", "u?_offset=0"),
                ("next", "u?_offset=40")
            ]
        );
        let none = searchset(Vec::new(), Some(45), 20, 0, true, |o| {
            format!("u?_offset={o}")
        });
        assert_eq!(none.link.len(), 1, "a page of none links only to itself");
    }
}

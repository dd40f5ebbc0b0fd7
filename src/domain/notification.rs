//! Notifications as values: the kinds of event, the channels a reader receives them on, a
//! reader's preferences, the kinds a group lets reach its staff, and webhook addresses that
//! may be called. Parsed once, at the edge; stored as text.

use std::collections::BTreeSet;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What happened. The first five are the events patients, staff and webhooks receive;
/// `WebhookDisabled` tells administrators that an endpoint stopped receiving.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventKind {
    /// A measurement was stored and analysed (its detail is the result class).
    MeasurementAnalysed,
    /// A measurement's report document (PDF) was made.
    MeasurementReportReady,
    /// A periodic report was made.
    PeriodicReportCreated,
    /// A physician reviewed a measurement.
    MeasurementReviewed,
    /// A measurement's indicator is `urgent`; for the patient's staff only.
    ResultUrgent,
    /// A webhook endpoint was disabled after repeated failures; for administrators.
    WebhookDisabled,
}

impl EventKind {
    /// The kinds anyone may subscribe to, in the order pages list them.
    pub const PUBLIC: [EventKind; 5] = [
        EventKind::MeasurementAnalysed,
        EventKind::MeasurementReportReady,
        EventKind::PeriodicReportCreated,
        EventKind::MeasurementReviewed,
        EventKind::ResultUrgent,
    ];

    /// Every kind.
    pub const ALL: [EventKind; 6] = [
        EventKind::MeasurementAnalysed,
        EventKind::MeasurementReportReady,
        EventKind::PeriodicReportCreated,
        EventKind::MeasurementReviewed,
        EventKind::ResultUrgent,
        EventKind::WebhookDisabled,
    ];

    /// The wire name, e.g. `measurement.analysed`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::MeasurementAnalysed => "measurement.analysed",
            EventKind::MeasurementReportReady => "measurement.report_ready",
            EventKind::PeriodicReportCreated => "periodic_report.created",
            EventKind::MeasurementReviewed => "measurement.reviewed",
            EventKind::ResultUrgent => "result.urgent",
            EventKind::WebhookDisabled => "webhook.disabled",
        }
    }

    /// The kind named `text`.
    pub fn parse(text: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// The name of its messages in the locale files: `event-measurement-analysed`, …
    pub fn message_key(self) -> String {
        format!("event-{}", self.as_str().replace(['.', '_'], "-"))
    }

    /// The message key for a reader who is the patient the event is about (`patient`), or
    /// someone in the patient's care team: a review is "by your physician" to the patient,
    /// "by a colleague" to the team.
    pub fn message_key_for(self, patient: bool) -> String {
        match self {
            EventKind::MeasurementReviewed if !patient => {
                "event-measurement-reviewed-staff".to_owned()
            }
            _ => self.message_key(),
        }
    }

    /// Whether the patient the event is about receives it. Urgent results go to the staff,
    /// who act on them; the patient hears of the same measurement through
    /// `measurement.analysed`, in the calmer words of its result.
    pub fn reaches_patient(self) -> bool {
        !matches!(self, EventKind::ResultUrgent | EventKind::WebhookDisabled)
    }

    /// Whether every administrator receives the event: only the news that a webhook endpoint
    /// stopped receiving, which only they can mend.
    pub fn reaches_administrators(self) -> bool {
        self == EventKind::WebhookDisabled
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a reader receives a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Channel {
    /// The portal's inbox (and the apps' `GET /notifications/v1`).
    Inbox,
    /// E-mail.
    Email,
}

impl Channel {
    /// Both channels, in the order pages list them.
    pub const ALL: [Channel; 2] = [Channel::Inbox, Channel::Email];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Inbox => "inbox",
            Channel::Email => "email",
        }
    }

    /// The channel named `text`.
    pub fn parse(text: &str) -> Option<Channel> {
        Channel::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

/// A set of event kinds, stored as their names separated by spaces.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KindSet(BTreeSet<EventKind>);

impl KindSet {
    /// Every public kind.
    pub fn all_public() -> KindSet {
        KindSet(EventKind::PUBLIC.into_iter().collect())
    }

    /// The kinds named in `names`; an unknown or internal name is refused by name.
    pub fn parse<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<KindSet, String> {
        let mut set = BTreeSet::new();
        for name in names {
            match EventKind::parse(name) {
                Some(kind) if EventKind::PUBLIC.contains(&kind) => {
                    set.insert(kind);
                }
                _ => {
                    return Err(format!(
                        "`{name}` is not an event; events are {}",
                        EventKind::PUBLIC.map(EventKind::as_str).join(", ")
                    ));
                }
            }
        }
        Ok(KindSet(set))
    }

    /// The set as stored; unknown names in stored text are dropped (a kind retired later).
    pub fn from_stored(text: &str) -> KindSet {
        KindSet(
            text.split_whitespace()
                .filter_map(EventKind::parse)
                .collect(),
        )
    }

    /// The stored text.
    pub fn to_stored(&self) -> String {
        self.0
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Whether `kind` is in the set.
    pub fn contains(&self, kind: EventKind) -> bool {
        self.0.contains(&kind)
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The kinds, in order.
    pub fn iter(&self) -> impl Iterator<Item = EventKind> + '_ {
        self.0.iter().copied()
    }
}

/// What a reader chose to receive. By default everything, on every channel, one e-mail per
/// event, without attachments.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Preferences {
    muted: BTreeSet<(EventKind, Channel)>,
    /// One e-mail a day listing the day's events instead of one e-mail per event.
    pub daily_digest: bool,
    /// Attach the PDF to the e-mail of a report (off unless the reader opts in: an attachment
    /// carries health data outside the portal's access control).
    pub attach_pdf: bool,
}

impl Preferences {
    /// Whether the reader receives `kind` on `channel`.
    pub fn wants(&self, kind: EventKind, channel: Channel) -> bool {
        !self.muted.contains(&(kind, channel))
    }

    /// Turns `kind` on `channel` on or off.
    pub fn set(&mut self, kind: EventKind, channel: Channel, on: bool) {
        if on {
            self.muted.remove(&(kind, channel));
        } else {
            self.muted.insert((kind, channel));
        }
    }

    /// The muted pairs as stored: `kind:channel` separated by spaces.
    pub fn muted_to_stored(&self) -> String {
        self.muted
            .iter()
            .map(|(k, c)| format!("{}:{}", k.as_str(), c.as_str()))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Preferences from their stored parts; unknown pairs are dropped.
    pub fn from_stored(muted: &str, daily_digest: bool, attach_pdf: bool) -> Preferences {
        let muted = muted
            .split_whitespace()
            .filter_map(|pair| {
                let (kind, channel) = pair.split_once(':')?;
                Some((EventKind::parse(kind)?, Channel::parse(channel)?))
            })
            .collect();
        Preferences {
            muted,
            daily_digest,
            attach_pdf,
        }
    }
}

/// Which addresses webhooks may reach beyond the public internet: this machine
/// (`TACHO_WEBHOOK_ALLOW_LOOPBACK=1`, over plain `http://` too, for tests and local receivers)
/// and private networks (`TACHO_WEBHOOK_ALLOW_PRIVATE=1`: 10/8, 172.16/12, 192.168/16, the
/// carrier-grade NAT range 100.64/10 and IPv6 unique local addresses fc00::/7), which are
/// refused by default so that a webhook cannot be aimed at the service's own network (OWASP
/// SSRF Prevention Cheat Sheet).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reach {
    pub loopback: bool,
    pub private: bool,
}

/// A webhook endpoint's address: `https://`, or `http://` to a loopback address when the
/// service allows it. Addresses that reach into the service's own network are refused here
/// for literal hosts and again, after name resolution, on every delivery
/// ([`address_allowed`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookUrl(String);

/// The longest webhook address accepted.
pub const MAX_WEBHOOK_URL: usize = 2000;

/// Why a webhook address is refused: in the API's words ([`Display`](std::fmt::Display)), and
/// as the portal's message key ([`AddressRefusal::key`]), so that an administrator reads a
/// sentence in its own language rather than a URL parser's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddressRefusal {
    TooLong,
    /// Not a URL at all; the parser's reason, for the API.
    NotAUrl(String),
    Credentials,
    Fragment,
    NoHost,
    /// Plain `http`, where only a loopback address may take it and that is not one (or not
    /// allowed).
    NotHttps,
    /// Neither `https` nor `http`.
    WrongScheme,
    /// A loopback address, where the service does not allow it.
    ThisMachine(Option<IpAddr>),
    /// Link-local, cloud metadata, unspecified, broadcast or multicast.
    Reserved(IpAddr),
    /// A private network, where the service does not allow it.
    Private(IpAddr),
}

impl AddressRefusal {
    /// The portal's message for the refusal.
    pub fn key(&self) -> &'static str {
        match self {
            AddressRefusal::TooLong => "webhook-url-too-long",
            AddressRefusal::NotAUrl(_) => "webhook-url-not-url",
            AddressRefusal::Credentials => "webhook-url-credentials",
            AddressRefusal::Fragment => "webhook-url-fragment",
            AddressRefusal::NoHost => "webhook-url-no-host",
            AddressRefusal::NotHttps | AddressRefusal::WrongScheme => "webhook-url-not-https",
            AddressRefusal::ThisMachine(_) => "webhook-url-this-machine",
            AddressRefusal::Reserved(_) => "webhook-url-reserved",
            AddressRefusal::Private(_) => "webhook-url-private",
        }
    }
}

impl std::fmt::Display for AddressRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AddressRefusal::TooLong => write!(f, "must be at most {MAX_WEBHOOK_URL} characters"),
            AddressRefusal::NotAUrl(reason) => write!(f, "is not a URL ({reason})"),
            AddressRefusal::Credentials => f.write_str("must not carry a user name or password"),
            AddressRefusal::Fragment => f.write_str("must not have a fragment"),
            AddressRefusal::NoHost => f.write_str("must name a host"),
            AddressRefusal::NotHttps => f.write_str("must use https://"),
            AddressRefusal::WrongScheme => f.write_str("must be an https:// address"),
            AddressRefusal::ThisMachine(None) => f.write_str("must not point at this machine"),
            AddressRefusal::ThisMachine(Some(ip)) => write!(f, "resolves to {ip}, this machine"),
            AddressRefusal::Reserved(ip) => write!(
                f,
                "resolves to {ip}, a link-local, metadata or non-unicast address"
            ),
            AddressRefusal::Private(ip) => write!(
                f,
                "resolves to {ip}, a private network (TACHO_WEBHOOK_ALLOW_PRIVATE=1 admits it)"
            ),
        }
    }
}

impl WebhookUrl {
    /// Parses `text`; the error says why it is refused.
    pub fn parse(text: &str, reach: Reach) -> Result<WebhookUrl, AddressRefusal> {
        if text.len() > MAX_WEBHOOK_URL {
            return Err(AddressRefusal::TooLong);
        }
        let url = url::Url::parse(text).map_err(|e| AddressRefusal::NotAUrl(e.to_string()))?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(AddressRefusal::Credentials);
        }
        if url.fragment().is_some() {
            return Err(AddressRefusal::Fragment);
        }
        let host = url.host().ok_or(AddressRefusal::NoHost)?;
        let literal = match host {
            url::Host::Ipv4(v4) => Some(IpAddr::V4(v4)),
            url::Host::Ipv6(v6) => Some(IpAddr::V6(v6)),
            url::Host::Domain(_) => None,
        };
        let loopback_name =
            matches!(host, url::Host::Domain(d) if d.eq_ignore_ascii_case("localhost"));
        let loopback = loopback_name || literal.is_some_and(|ip| ip.is_loopback());
        match url.scheme() {
            "https" => {}
            "http" if reach.loopback && loopback => {}
            "http" => return Err(AddressRefusal::NotHttps),
            _ => return Err(AddressRefusal::WrongScheme),
        }
        if loopback && !reach.loopback {
            return Err(AddressRefusal::ThisMachine(None));
        }
        if let Some(ip) = literal {
            address_allowed(ip, reach)?;
        }
        Ok(WebhookUrl(url.to_string()))
    }

    /// The address as stored (a stored address was parsed when it was registered).
    pub fn from_stored(text: &str) -> WebhookUrl {
        WebhookUrl(text.to_owned())
    }

    /// The address.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// `url` as logs, audit records and errors show it: without its query string, which may
/// carry a receiver's token (`?…` stands in for it).
pub fn url_for_logs(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            let had_query = parsed.query().is_some();
            parsed.set_query(None);
            parsed.set_fragment(None);
            let _ = parsed.set_password(None);
            let _ = parsed.set_username("");
            let mut shown = parsed.to_string();
            if had_query {
                shown.push_str("?…");
            }
            shown
        }
        Err(_) => url.split(['?', '#']).next().unwrap_or_default().to_owned(),
    }
}

/// Whether `ip` lies in a private network: RFC 1918 (10/8, 172.16/12, 192.168/16), shared
/// address space for carrier-grade NAT (RFC 6598, 100.64/10), or an IPv6 unique local
/// address (RFC 4193, fc00::/7).
fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_private() || (a == 100 && (64..128).contains(&b))
        }
        IpAddr::V6(v6) => v6.segments()[0] & 0xfe00 == 0xfc00,
    }
}

/// Whether a webhook may be delivered to `ip`. Refused: link-local addresses (which include
/// the cloud metadata service at 169.254.169.254, and fe80::/10), the metadata addresses
/// that lie outside them (AWS's fd00:ec2::254, Alibaba's 100.100.100.200), unspecified,
/// broadcast and multicast addresses; loopback and private networks unless `reach` allows
/// them.
pub fn address_allowed(ip: IpAddr, reach: Reach) -> Result<(), AddressRefusal> {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    };
    let refused = match ip {
        IpAddr::V4(v4) => {
            v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4 == Ipv4Addr::new(100, 100, 100, 200)
        }
        IpAddr::V6(v6) => {
            v6.is_unicast_link_local()
                || v6.is_unspecified()
                || v6.is_multicast()
                || v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)
        }
    };
    if refused {
        return Err(AddressRefusal::Reserved(ip));
    }
    if ip.is_loopback() && !reach.loopback {
        return Err(AddressRefusal::ThisMachine(Some(ip)));
    }
    if is_private(ip) && !reach.private {
        return Err(AddressRefusal::Private(ip));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_and_unknown_names_are_refused_by_name() {
        for kind in EventKind::ALL {
            assert_eq!(EventKind::parse(kind.as_str()), Some(kind));
        }
        let set = KindSet::parse(["result.urgent", "measurement.analysed"]).unwrap();
        assert_eq!(set.to_stored(), "measurement.analysed result.urgent");
        assert_eq!(KindSet::from_stored(&set.to_stored()), set);
        let err = KindSet::parse(["measurement.deleted"]).unwrap_err();
        assert!(err.contains("`measurement.deleted`"), "{err}");
        // Administrators' own kind is not for subscription.
        assert!(KindSet::parse(["webhook.disabled"]).is_err());
    }

    #[test]
    fn preferences_mute_one_channel_of_one_kind() {
        let mut p = Preferences::default();
        assert!(p.wants(EventKind::MeasurementAnalysed, Channel::Email));
        p.set(EventKind::MeasurementAnalysed, Channel::Email, false);
        assert!(!p.wants(EventKind::MeasurementAnalysed, Channel::Email));
        assert!(p.wants(EventKind::MeasurementAnalysed, Channel::Inbox));
        let stored = p.muted_to_stored();
        assert_eq!(stored, "measurement.analysed:email");
        let back = Preferences::from_stored(&format!("{stored} nonsense x:y"), true, false);
        assert!(!back.wants(EventKind::MeasurementAnalysed, Channel::Email));
        assert!(back.daily_digest);
        p.set(EventKind::MeasurementAnalysed, Channel::Email, true);
        assert_eq!(p, Preferences::default());
    }

    const PUBLIC: Reach = Reach {
        loopback: false,
        private: false,
    };
    const LOOPBACK: Reach = Reach {
        loopback: true,
        private: false,
    };

    #[test]
    fn webhook_urls_are_https_or_allowed_loopback_and_never_link_local() {
        assert!(WebhookUrl::parse("https://clinic.example/hooks", PUBLIC).is_ok());
        let refused = |url: &str, loopback: bool| {
            let reach = if loopback { LOOPBACK } else { PUBLIC };
            WebhookUrl::parse(url, reach).unwrap_err().to_string()
        };
        assert!(refused("http://clinic.example/hooks", false).contains("https"));
        assert!(refused("http://127.0.0.1:9000/h", false).contains("https"));
        assert!(refused("https://127.0.0.1:9000/h", false).contains("this machine"));
        assert!(WebhookUrl::parse("http://127.0.0.1:9000/h", LOOPBACK).is_ok());
        assert!(WebhookUrl::parse("http://localhost:9000/h", LOOPBACK).is_ok());
        assert!(WebhookUrl::parse("http://[::1]:9000/h", LOOPBACK).is_ok());
        // Loopback permission does not open plain http to other hosts.
        assert!(refused("http://clinic.example/hooks", true).contains("https"));
        for url in [
            "https://169.254.169.254/latest/meta-data",
            "https://[fe80::1]/x",
            "https://[fd00:ec2::254]/x",
            "https://100.100.100.200/x",
            "https://0.0.0.0/x",
            "https://[::ffff:169.254.169.254]/x",
            // The same address written as one number, in decimal and in hexadecimal.
            "https://2852039166/x",
            "https://0xA9FEA9FE/x",
        ] {
            assert!(refused(url, true).contains("link-local"), "{url}");
        }
        assert!(refused("ftp://clinic.example/x", false).contains("https"));
        assert!(refused("https://user:pw@clinic.example/x", false).contains("password"));
        assert!(refused("not a url", false).contains("not a URL"));
    }

    #[test]
    fn private_networks_are_refused_unless_allowed() {
        let private = Reach {
            loopback: false,
            private: true,
        };
        for url in [
            "https://10.1.2.3/h",
            "https://172.16.0.1/h",
            "https://172.31.255.254/h",
            "https://192.168.1.1/h",
            "https://100.64.0.1/h",
            "https://100.127.255.254/h",
            "https://[fc00::1]/h",
            "https://[fd12:3456::1]/h",
            "https://[::ffff:10.0.0.1]/h",
        ] {
            let refused = WebhookUrl::parse(url, PUBLIC).unwrap_err().to_string();
            assert!(refused.contains("private network"), "{url}: {refused}");
            assert!(WebhookUrl::parse(url, private).is_ok(), "{url}");
        }
        // Next to the ranges, public addresses.
        for url in [
            "https://172.32.0.1/h",
            "https://100.128.0.1/h",
            "https://11.0.0.1/h",
            "https://[fe00::1]/h",
        ] {
            let parsed = WebhookUrl::parse(url, PUBLIC);
            assert!(
                parsed.as_ref().is_ok() || !matches!(parsed, Err(AddressRefusal::Private(_))),
                "{url}"
            );
        }
        // The metadata address stays refused inside the ULA range, whatever is allowed.
        assert!(WebhookUrl::parse("https://[fd00:ec2::254]/x", private).is_err());
    }

    #[test]
    fn urls_lose_their_query_in_logs() {
        assert_eq!(
            url_for_logs("https://hooks.example/in?token=s3cret&x=1"),
            "https://hooks.example/in?…"
        );
        assert_eq!(
            url_for_logs("https://hooks.example/in"),
            "https://hooks.example/in"
        );
        assert!(!url_for_logs("not a url?token=s3cret").contains("s3cret"));
    }
}

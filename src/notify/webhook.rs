//! Webhook deliveries, as the Standard Webhooks specification
//! (<https://www.standardwebhooks.com>) lays them out: a JSON body `{type, timestamp, data}`,
//! and the headers `webhook-id` (the event's id, the same on every retry), `webhook-timestamp`
//! (Unix seconds) and `webhook-signature` (`v1,` + base64 of HMAC-SHA256 over
//! `id.timestamp.body`, keyed with the endpoint's secret).
//!
//! An endpoint's secret is `whsec_` + base64 of 32 bytes derived from its id under a server
//! key (HMAC-SHA256, as the apps' file tokens are), so it is shown once at registration and
//! never stored. Addresses are checked again on every delivery, after name resolution, so a
//! name that later resolves to a link-local or metadata address is not called.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use crate::domain::id::Id;
use crate::domain::notification::{
    AddressRefusal, Reach, WebhookUrl, address_allowed, url_for_logs,
};
use crate::store::entities::{event, webhook_endpoint};

/// How long a receiver has to answer.
const TIMEOUT: Duration = Duration::from_secs(15);
/// The longest a registration waits for its host name to resolve.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// What one attempt came to.
#[derive(Debug, Clone)]
pub struct Attempt {
    /// The receiver's status, if it answered.
    pub status: Option<u16>,
    /// How long the attempt took.
    pub latency: Duration,
    /// Why it failed; `None` for a 2xx answer.
    pub error: Option<String>,
}

/// The secret of endpoint `id` under `key`.
pub fn webhook_secret(key: &[u8], id: &Id) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key");
    mac.update(b"webhook-secret:");
    mac.update(id.to_string().as_bytes());
    format!("whsec_{}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// The `webhook-signature` value of `body` sent as message `id` at `timestamp` (seconds)
/// under `secret` (`whsec_…`).
pub fn signature(secret: &str, id: &str, timestamp: i64, body: &str) -> String {
    let key = STANDARD
        .decode(secret.trim_start_matches("whsec_"))
        .unwrap_or_default();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).expect("HMAC takes any key");
    mac.update(format!("{id}.{timestamp}.{body}").as_bytes());
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// The body of `event` for `endpoint`: ids and links only, never a document's content.
pub fn body(
    event: &event::Model,
    endpoint: &webhook_endpoint::Model,
    base_url: &str,
    portal_link: String,
) -> String {
    let api = match (event.measurement_id, event.report_id, event.kind.as_str()) {
        (_, Some(report), "periodic_report.created") => {
            Some(format!("{base_url}/reports/v1/{report}"))
        }
        (_, Some(report), "measurement.report_ready") => Some(format!(
            "{base_url}/data/v1/measurement-reports/documents/{report}"
        )),
        (Some(measurement), _, _) => Some(format!(
            "{base_url}/data/v1/measurements/documents/{measurement}"
        )),
        _ => None,
    };
    let timestamp = chrono::DateTime::from_timestamp_millis(event.creation_timestamp)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    json!({
        "type": event.kind.as_str(),
        "timestamp": timestamp,
        "data": {
            "event_id": event.id,
            "group_id": endpoint.group_id,
            "patient_id": event.patient_id,
            "measurement_id": event.measurement_id,
            "report_id": event.report_id,
            "links": { "portal": portal_link, "api": api.map(Value::String).unwrap_or(Value::Null) },
        }
    })
    .to_string()
}

/// Refuses a host whose addresses include one no webhook may reach: at registration and at
/// every delivery alike.
fn refuse_any(addresses: &[SocketAddr], reach: Reach) -> Result<(), AddressRefusal> {
    addresses
        .iter()
        .try_for_each(|address| address_allowed(address.ip(), reach))
}

/// Resolves names for the webhook client, refusing any address a webhook must not reach.
struct CheckedResolver {
    reach: Reach,
}

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let reach = self.reach;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addresses: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            refuse_any(&addresses, reach).map_err(|reason| format!("{host} {reason}"))?;
            let addrs: reqwest::dns::Addrs = Box::new(addresses.into_iter());
            Ok(addrs)
        })
    }
}

/// Posts signed events.
#[derive(Clone)]
pub struct WebhookSender {
    client: reqwest::Client,
    key: Arc<Vec<u8>>,
    reach: Reach,
}

impl std::fmt::Debug for WebhookSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookSender")
    }
}

impl WebhookSender {
    /// A sender signing under `key` (the server's), to the addresses `reach` admits.
    pub fn new(key: &[u8], reach: Reach) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder()
            .timeout(TIMEOUT)
            // A redirect would lead the signed body somewhere the address check never saw.
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(Arc::new(CheckedResolver { reach }))
            .user_agent(concat!("Tacho-Webhooks/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(WebhookSender {
            client,
            key: Arc::new(key.to_vec()),
            reach,
        })
    }

    /// Which addresses beyond the public internet deliveries may reach.
    pub fn reach(&self) -> Reach {
        self.reach
    }

    /// Refuses `url` when its host name resolves to an address no delivery may go to. A
    /// name that does not resolve (yet) is let through: every delivery resolves it again
    /// and checks what it finds.
    pub async fn check_resolution(&self, url: &WebhookUrl) -> Result<(), AddressRefusal> {
        let Ok(parsed) = url::Url::parse(url.as_str()) else {
            return Ok(());
        };
        let Some(url::Host::Domain(host)) = parsed.host() else {
            return Ok(());
        };
        let lookup = tokio::net::lookup_host((host, 0));
        let Ok(Ok(addresses)) = tokio::time::timeout(RESOLVE_TIMEOUT, lookup).await else {
            return Ok(());
        };
        refuse_any(&addresses.collect::<Vec<_>>(), self.reach)
    }

    /// The secret of endpoint `id`.
    pub fn secret(&self, id: &Id) -> String {
        webhook_secret(&self.key, id)
    }

    /// Posts `body` (event `event_id`) to `endpoint`, signed; never fails, the outcome says
    /// what happened.
    pub async fn post(
        &self,
        endpoint: &webhook_endpoint::Model,
        event_id: &Id,
        body: &str,
    ) -> Attempt {
        let started = Instant::now();
        // Checked again: the setting may have changed since the endpoint was registered.
        if let Err(reason) = WebhookUrl::parse(&endpoint.url, self.reach) {
            return Attempt {
                status: None,
                latency: started.elapsed(),
                error: Some(format!("the address {reason}")),
            };
        }
        let id = event_id.to_string();
        let timestamp = chrono::Utc::now().timestamp();
        let signature = signature(&self.secret(&endpoint.id), &id, timestamp, body);
        let sent = self
            .client
            .post(&endpoint.url)
            .header("content-type", "application/json")
            .header("webhook-id", &id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(body.to_owned())
            .send()
            .await;
        let latency = started.elapsed();
        match sent {
            Ok(response) if response.status().is_success() => Attempt {
                status: Some(response.status().as_u16()),
                latency,
                error: None,
            },
            Ok(response) => Attempt {
                status: Some(response.status().as_u16()),
                latency,
                error: Some(format!("the receiver answered {}", response.status())),
            },
            Err(err) => Attempt {
                status: None,
                latency,
                error: Some(describe(&err.without_url(), &endpoint.url)),
            },
        }
    }
}

/// A transport error with its causes, which say what actually went wrong, and never the
/// endpoint's query string (which may carry the receiver's token): `err` comes without its
/// URL, and `url` is cut out of whatever a cause quotes.
fn describe(err: &reqwest::Error, url: &str) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text.replace(url, &url_for_logs(url))
        .chars()
        .take(500)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_what_the_reference_library_signs() {
        let secret = webhook_secret(&[3u8; 32], &Id::generate());
        let reference = standardwebhooks::Webhook::new(&secret).unwrap();
        let body = r#"{"type":"measurement.analysed","data":{"id":"x"}}"#;
        let expected = reference
            .sign("evt_1", 1_764_000_000, body.as_bytes())
            .unwrap();
        assert_eq!(signature(&secret, "evt_1", 1_764_000_000, body), expected);
    }

    #[test]
    fn secrets_differ_per_endpoint_and_key() {
        let a = Id::generate();
        let b = Id::generate();
        let key = [7u8; 32];
        assert_ne!(webhook_secret(&key, &a), webhook_secret(&key, &b));
        assert_ne!(webhook_secret(&key, &a), webhook_secret(&[8u8; 32], &a));
        assert_eq!(webhook_secret(&key, &a), webhook_secret(&key, &a));
        let secret = webhook_secret(&key, &a);
        assert!(secret.starts_with("whsec_"));
        assert_eq!(STANDARD.decode(&secret[6..]).unwrap().len(), 32);
    }
}

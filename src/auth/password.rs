//! Argon2id password hashing. Hashing costs tens of milliseconds of CPU and ~19 MiB, so it runs
//! on the blocking pool, at most one per core at a time, never on the async workers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher as _, PasswordVerifier, SaltString};
use tokio::sync::Semaphore;

/// Hashes and verifies passwords off the async workers.
#[derive(Clone)]
pub struct PasswordHasher {
    permits: Arc<Semaphore>,
    /// Self-registrations hash one at a time, so that however many arrive they hold at most
    /// one of the permits logins need.
    registrations: Arc<Semaphore>,
    checks: Arc<AtomicU64>,
}

impl Default for PasswordHasher {
    fn default() -> Self {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2);
        PasswordHasher {
            permits: Arc::new(Semaphore::new(cores)),
            registrations: Arc::new(Semaphore::new(1)),
            checks: Arc::new(AtomicU64::new(0)),
        }
    }
}

fn dummy_hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| hash_now("a password nobody has").unwrap_or_default())
}

fn hash_now(password: &str) -> anyhow::Result<String> {
    let salt_bytes: [u8; 16] = rand::random();
    let salt = SaltString::encode_b64(&salt_bytes)
        .map_err(|e| anyhow::anyhow!("salt encoding failed: {e}"))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| anyhow::anyhow!("password hashing failed: {e}"))
}

fn verify_now(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash)
        .map(|parsed| {
            Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
        })
        .unwrap_or(false)
}

impl PasswordHasher {
    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> anyhow::Result<T> {
        let _permit = self.permits.acquire().await?;
        Ok(tokio::task::spawn_blocking(work).await?)
    }

    /// Hashes a new password (PHC string with its salt and parameters).
    pub async fn hash(&self, password: String) -> anyhow::Result<String> {
        self.run(move || hash_now(&password)).await?
    }

    /// Hashes the password of a self-registration: as [`PasswordHasher::hash`], one
    /// registration at a time.
    pub async fn hash_for_registration(&self, password: String) -> anyhow::Result<String> {
        let _turn = self.registrations.acquire().await?;
        self.hash(password).await
    }

    /// How many passwords were checked (real or dummy) since start: what the brute-force
    /// policy lets through to the expensive check.
    pub fn checks(&self) -> u64 {
        self.checks.load(Ordering::Relaxed)
    }

    /// Whether `password` matches `hash`.
    pub async fn verify(&self, password: String, hash: String) -> bool {
        self.checks.fetch_add(1, Ordering::Relaxed);
        self.run(move || verify_now(&password, &hash))
            .await
            .unwrap_or(false)
    }

    /// Does the work of a verification against a hash no password matches, so that answers
    /// for unknown accounts take as long as those for known ones.
    pub async fn verify_dummy(&self, password: String) {
        self.checks.fetch_add(1, Ordering::Relaxed);
        let _ = self.run(move || verify_now(&password, dummy_hash())).await;
    }
}

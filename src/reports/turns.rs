//! One turn at a time per account: an async lock per key, made when first asked for and
//! dropped when nobody holds or waits for it, so the map only ever holds the accounts that
//! are rendering or waiting to.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

use crate::domain::id::Id;

/// Locks by key.
#[derive(Debug, Default)]
pub struct Turns {
    locks: Mutex<HashMap<Id, Entry>>,
}

/// A key's lock and how many turns hold or wait for it.
#[derive(Debug, Default)]
struct Entry {
    lock: Arc<AsyncMutex<()>>,
    users: usize,
}

/// A key's turn, or the wait for it. Dropping it (also while still waiting, when a request
/// is cancelled) releases the turn and forgets the key once nobody else holds or waits.
#[derive(Debug)]
pub struct Turn {
    turns: Arc<Turns>,
    key: Id,
    guard: Option<OwnedMutexGuard<()>>,
}

impl Turns {
    /// Waits for `key`'s turn; turns are given in the order they were asked for.
    pub async fn take(self: &Arc<Self>, key: &Id) -> Turn {
        let lock = {
            let mut locks = self.locks.lock().unwrap_or_else(|e| e.into_inner());
            let entry = locks.entry(*key).or_default();
            entry.users += 1;
            entry.lock.clone()
        };
        // From here on the turn counts as a user of the key, so that a cancelled wait is
        // counted out again.
        let mut turn = Turn {
            turns: self.clone(),
            key: *key,
            guard: None,
        };
        turn.guard = Some(lock.lock_owned().await);
        turn
    }

    /// How many keys are held or waited for.
    pub fn len(&self) -> usize {
        self.locks.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether no key is held or waited for.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut locks = self.turns.locks.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = locks.get_mut(&self.key) {
            entry.users -= 1;
            if entry.users == 0 {
                locks.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;
    use std::time::Duration;

    #[tokio::test]
    async fn one_turn_per_key_and_the_map_empties() {
        let turns = Arc::new(Turns::default());
        let first = turns.take(&"ann".into()).await;
        // Another key is not held up.
        let other =
            tokio::time::timeout(Duration::from_millis(100), turns.take(&"bob".into())).await;
        assert!(other.is_ok());
        drop(other);
        // The same key waits until the first turn ends.
        let waiting = tokio::spawn({
            let turns = turns.clone();
            async move { turns.take(&"ann".into()).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished());
        drop(first);
        let second = tokio::time::timeout(Duration::from_secs(1), waiting)
            .await
            .expect("the second turn follows")
            .unwrap();
        assert_eq!(turns.len(), 1);
        drop(second);
        assert!(turns.is_empty(), "no key is kept once unused");
    }

    #[tokio::test]
    async fn a_cancelled_wait_leaves_nothing_behind() {
        let turns = Arc::new(Turns::default());
        let first = turns.take(&"ann".into()).await;
        let cancelled =
            tokio::time::timeout(Duration::from_millis(20), turns.take(&"ann".into())).await;
        assert!(cancelled.is_err());
        drop(first);
        assert!(turns.is_empty());
        // And in the other order: the holder leaves first, then the waiter gives up.
        let ann: Id = "ann".into();
        let first = turns.take(&ann).await;
        let mut wait = Box::pin(turns.take(&ann));
        let waker = futures_util::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        assert!(wait.as_mut().poll(&mut cx).is_pending());
        drop(first);
        drop(wait);
        assert!(turns.is_empty());
    }
}

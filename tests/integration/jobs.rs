//! The job queue that periodic reports will run on: enqueue once, claim under a lease, retry.

use std::collections::HashSet;

use chrono::Duration;
use tacho::domain::id::Id;
use tacho::store::entities::job::{JobKind, JobStatus};
use tacho::store::{NewJob, Store, StoreResult, Tx, Unaudited, Viewer};

use crate::helpers::{TestApp, spawn_app};

fn job(key: &str, run_after: i64, max_attempts: i32) -> NewJob {
    NewJob {
        kind: JobKind::Digest,
        dedupe_key: key.into(),
        payload: format!("{{\"key\":\"{key}\"}}"),
        run_after,
        max_attempts,
    }
}

/// The queue's own work, as the scheduler does it: one transaction, unaudited.
async fn queue<T>(store: &Store, work: impl AsyncFnOnce(&Tx) -> StoreResult<T>) -> T {
    store.write(Unaudited::Workers, work).await.unwrap()
}

/// Enqueues one job; whether it was new (the queue grew by one).
async fn enqueue(store: &Store, new: NewJob) -> bool {
    let admin = Viewer {
        user_id: Id::generate(),
        admin: true,
    };
    let count = async || -> i64 {
        let counts = store.job_counts(&admin).await.unwrap();
        counts.iter().map(|(_, n)| n).sum()
    };
    let before = count().await;
    queue(store, async |tx| tx.enqueue_jobs(vec![new]).await).await;
    count().await == before + 1
}

/// Marks one job done; whether `worker` still held it.
async fn complete(store: &Store, id: &Id, worker: &str) -> bool {
    queue(store, async |tx| tx.complete_jobs(&[*id], worker).await).await == 1
}

async fn claim_all(app: &TestApp, worker: &str) -> Vec<Id> {
    let mut ids = Vec::new();
    loop {
        let claimed = queue(&app.store, async |tx| {
            tx.claim_jobs(worker, 7, 60_000).await
        })
        .await;
        if claimed.is_empty() {
            return ids;
        }
        ids.extend(claimed.into_iter().map(|j| j.id));
    }
}

#[tokio::test]
async fn jobs_are_enqueued_once_and_claimed_by_one_worker_each() {
    let app = spawn_app().await;
    let now = app.clock_millis();
    let store = &app.store;
    assert!(enqueue(store, job("a", now, 3)).await);
    assert!(
        !enqueue(store, job("a", now, 3)).await,
        "the same key enqueues nothing"
    );
    for n in 0..59 {
        enqueue(store, job(&format!("k{n}"), now - n, 3)).await;
    }
    let (first, second, third) = tokio::join!(
        claim_all(&app, "w1"),
        claim_all(&app, "w2"),
        claim_all(&app, "w3")
    );
    let all: Vec<&Id> = first.iter().chain(&second).chain(&third).collect();
    let distinct: HashSet<&&Id> = all.iter().collect();
    assert_eq!(all.len(), 60, "every job claimed");
    assert_eq!(distinct.len(), 60, "no job claimed twice");
}

#[tokio::test]
async fn jobs_wait_for_their_time_and_expired_leases_are_retaken() {
    let app = spawn_app().await;
    let now = app.clock_millis();
    let store = &app.store;
    enqueue(store, job("later", now + 60_000, 2)).await;
    assert!(
        queue(store, async |tx| tx.claim_jobs("w1", 10, 1_000).await)
            .await
            .is_empty(),
        "not due yet"
    );
    app.clock.advance(Duration::minutes(1));
    let claimed = queue(store, async |tx| tx.claim_jobs("w1", 10, 1_000).await).await;
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].attempts, 1);
    assert!(
        queue(store, async |tx| tx.claim_jobs("w2", 10, 1_000).await)
            .await
            .is_empty(),
        "leased to w1"
    );

    // w1 dies; after its lease another worker takes the job over.
    app.clock.advance(Duration::seconds(2));
    let retaken = queue(store, async |tx| tx.claim_jobs("w2", 10, 1_000).await).await;
    assert_eq!(retaken.len(), 1);
    assert_eq!(retaken[0].attempts, 2);
    assert!(
        !complete(store, &claimed[0].id, "w1").await,
        "w1 lost its lease"
    );
    assert!(complete(store, &claimed[0].id, "w2").await);
    assert_eq!(
        store.job(&claimed[0].id).await.unwrap().unwrap().status,
        JobStatus::Done
    );
    app.clock.advance(Duration::hours(1));
    assert!(
        queue(store, async |tx| tx.claim_jobs("w3", 10, 1_000).await)
            .await
            .is_empty(),
        "done jobs stay done"
    );
}

#[tokio::test]
async fn failures_are_retried_then_the_job_fails() {
    let app = spawn_app().await;
    let now = app.clock_millis();
    let store = &app.store;
    enqueue(store, job("flaky", now, 2)).await;
    let first = queue(store, async |tx| tx.claim_jobs("w", 1, 1_000).await)
        .await
        .remove(0);
    assert!(
        queue(store, async |tx| tx
            .fail_job(&first.id, "w", "database busy", now + 5_000)
            .await)
        .await
    );
    let queued = store.job(&first.id).await.unwrap().unwrap();
    assert_eq!(
        (queued.status.as_str(), queued.last_error.as_deref()),
        ("queued", Some("database busy"))
    );
    assert!(
        queue(store, async |tx| tx.claim_jobs("w", 1, 1_000).await)
            .await
            .is_empty(),
        "retried later, not at once"
    );
    app.clock.advance(Duration::seconds(5));
    let second = queue(store, async |tx| tx.claim_jobs("w", 1, 1_000).await)
        .await
        .remove(0);
    assert_eq!(second.attempts, 2);
    assert!(
        queue(store, async |tx| tx
            .fail_job(&second.id, "w", "still busy", now + 10_000)
            .await)
        .await
    );
    assert_eq!(
        store.job(&first.id).await.unwrap().unwrap().status,
        JobStatus::Failed
    );

    // A job whose worker died on its last attempt fails when the lease runs out.
    enqueue(store, job("doomed", app.clock_millis(), 1)).await;
    let doomed = queue(store, async |tx| tx.claim_jobs("w", 1, 1_000).await)
        .await
        .remove(0);
    app.clock.advance(Duration::seconds(2));
    assert!(
        queue(store, async |tx| tx.claim_jobs("w", 1, 1_000).await)
            .await
            .is_empty()
    );
    assert_eq!(
        store.job(&doomed.id).await.unwrap().unwrap().status,
        JobStatus::Failed
    );
}

#[tokio::test]
async fn a_stopping_worker_returns_its_leases_and_claims_nothing_more() {
    let app = spawn_app().await;
    let now = app.clock_millis();
    let store = &app.store;
    enqueue(store, job("one", now, 3)).await;
    enqueue(store, job("two", now, 3)).await;
    let held = queue(store, async |tx| tx.claim_jobs("w1", 10, 300_000).await).await;
    assert_eq!(held.len(), 2);
    assert!(
        queue(store, async |tx| tx.claim_jobs("w2", 10, 300_000).await)
            .await
            .is_empty()
    );

    assert_eq!(
        queue(store, async |tx| tx.release_jobs("w1").await).await,
        2
    );
    assert_eq!(
        queue(store, async |tx| tx.release_jobs("w1").await).await,
        0,
        "nothing left to return"
    );
    // At once, not after the five-minute lease, and the returned attempt is not counted.
    let retaken = queue(store, async |tx| tx.claim_jobs("w2", 10, 300_000).await).await;
    assert_eq!(retaken.len(), 2);
    assert!(retaken.iter().all(|j| j.attempts == 1), "{retaken:?}");
    assert!(!complete(store, &held[0].id, "w1").await, "w1 gave it up");
    assert!(complete(store, &held[0].id, "w2").await);

    // A scheduler whose stop token is cancelled claims no batch.
    enqueue(store, job("three", now, 3)).await;
    let scheduler = app.scheduler();
    scheduler.stop_token().cancel();
    let summary = scheduler.work(|_| {}).await.unwrap();
    assert_eq!(summary.handled(), 0);
    let left = queue(store, async |tx| tx.claim_jobs("w3", 10, 300_000).await).await;
    assert_eq!(
        left.len(),
        1,
        "the job waits for a worker that is not stopping"
    );
}

//! How a SQLite connection waits for the write lock. SQLite's own busy handler (behind
//! `busy_timeout`) sleeps 1, 2, 5, 10 … 100 ms between tries; with several workers whose
//! transactions hold the lock for well under a millisecond, those sleeps, not the work,
//! set the pace. This one tries again after 50 µs at first and backs off to 1 ms, and gives
//! up after about ten seconds, as the timeout did.

use std::ffi::{c_int, c_void};
use std::time::Duration;

use sea_orm::sqlx::{self, SqliteConnection};

/// Tries at 50 µs apart before backing off.
const QUICK_TRIES: c_int = 200;
/// Tries in all: 200 × 50 µs, then 1 ms each, about ten seconds.
const MAX_TRIES: c_int = QUICK_TRIES + 10_000;

extern "C" fn wait(_: *mut c_void, tries: c_int) -> c_int {
    if tries >= MAX_TRIES {
        return 0;
    }
    let pause = if tries < QUICK_TRIES {
        Duration::from_micros(50)
    } else {
        Duration::from_millis(1)
    };
    // This runs on the connection's own worker thread, never on the async runtime's.
    std::thread::sleep(pause);
    1
}

/// Replaces `conn`'s busy handler.
pub(super) async fn install(conn: &mut SqliteConnection) -> Result<(), sqlx::Error> {
    let mut handle = conn.lock_handle().await?;
    let raw = handle.as_raw_handle();
    // SAFETY: `raw` is this connection's open handle, held locked for the call; the
    // handler is a plain function without state.
    let code = unsafe {
        libsqlite3_sys::sqlite3_busy_handler(raw.as_ptr(), Some(wait), std::ptr::null_mut())
    };
    if code == libsqlite3_sys::SQLITE_OK {
        Ok(())
    } else {
        Err(sqlx::Error::Protocol(format!(
            "sqlite3_busy_handler returned {code}"
        )))
    }
}

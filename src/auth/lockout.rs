//! The brute-force policy: from the 5th failed login in a row an account is frozen for a time
//! that doubles with each further failure (10 s, 20 s, 40 s, … up to an hour); from the 50th it
//! is blocked until an administrator unblocks it. A successful login resets the count.

/// Failures in a row from which each failure freezes the account.
pub const FREEZE_AFTER: i32 = 5;
/// Failures in a row from which the account is blocked.
pub const BLOCK_AFTER: i32 = 50;
const FIRST_FREEZE_MILLIS: i64 = 10_000;
const LONGEST_FREEZE_MILLIS: i64 = 3_600_000;

/// Whether an account may attempt a login now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockState {
    Open,
    Frozen { until: i64 },
    Blocked,
}

/// How long the `failures`-th failure in a row freezes the account, in milliseconds.
pub fn freeze_millis(failures: i32) -> i64 {
    if failures < FREEZE_AFTER {
        return 0;
    }
    let doublings = (failures - FREEZE_AFTER).min(20) as u32;
    (FIRST_FREEZE_MILLIS << doublings).min(LONGEST_FREEZE_MILLIS)
}

/// The lock state of an account with `failures` in a row, the last at `last_failed`.
pub fn state(failures: i32, last_failed: Option<i64>, now: i64) -> LockState {
    if failures >= BLOCK_AFTER {
        return LockState::Blocked;
    }
    match last_failed {
        Some(last) if failures >= FREEZE_AFTER && now < last + freeze_millis(failures) => {
            LockState::Frozen {
                until: last + freeze_millis(failures),
            }
        }
        _ => LockState::Open,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freezes_grow_and_are_capped() {
        assert_eq!(freeze_millis(4), 0);
        assert_eq!(freeze_millis(5), 10_000);
        assert_eq!(freeze_millis(6), 20_000);
        assert_eq!(freeze_millis(12), 1_280_000);
        assert_eq!(freeze_millis(49), LONGEST_FREEZE_MILLIS);
    }

    #[test]
    fn states_follow_the_count_and_time() {
        assert_eq!(state(0, None, 0), LockState::Open);
        assert_eq!(state(4, Some(1_000), 1_001), LockState::Open);
        assert_eq!(
            state(5, Some(1_000), 1_001),
            LockState::Frozen { until: 11_000 }
        );
        assert_eq!(state(5, Some(1_000), 11_000), LockState::Open);
        assert_eq!(state(50, Some(0), i64::MAX), LockState::Blocked);
    }
}

//! Optimistic concurrency: read, compute, compare-and-swap, and on a conflict read again.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::time::Duration;

use crate::error::quote_bytes;
use crate::kv::{Compare, Op};
use crate::{Client, Error, KeyValue};

/// How often and how patiently a compare-and-swap is retried after conflicts.
///
/// Attempt `i` (from 0) that conflicts sleeps a random time in `[b/2, b]` with
/// `b = min(first_backoff × 2^i, max_backoff)` before the next; the randomness only spreads
/// concurrent writers apart, the bounds are fixed: at most [`Retry::attempts`] transactions and
/// at most [`Retry::max_sleep`] of sleep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    attempts: u32,
    first_backoff: Duration,
    max_backoff: Duration,
}

impl Default for Retry {
    /// 32 attempts, 2 ms first backoff, 250 ms cap: at most about 6.3 s of sleep, enough for
    /// dozens of writers contending on one key.
    fn default() -> Retry {
        Retry { attempts: 32, first_backoff: Duration::from_millis(2), max_backoff: Duration::from_millis(250) }
    }
}

impl Retry {
    /// `attempts` transactions at most (at least 1), backing off from `first_backoff` doubling
    /// up to `max_backoff`.
    pub fn new(attempts: u32, first_backoff: Duration, max_backoff: Duration) -> Retry {
        Retry { attempts: attempts.max(1), first_backoff, max_backoff: max_backoff.max(first_backoff) }
    }

    /// The most transactions tried.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The most time spent sleeping between attempts (the sum of the backoff caps).
    pub fn max_sleep(&self) -> Duration {
        (0..self.attempts.saturating_sub(1)).map(|i| self.backoff(i)).sum()
    }

    /// The sleep after conflicting attempt `attempt` (from 0): a random time in `[b/2, b]`.
    pub(crate) fn backoff_for(&self, attempt: u32) -> Duration {
        jittered(self.backoff(attempt), &RandomState::new(), attempt)
    }

    fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.min(31)).unwrap_or(u32::MAX);
        self.first_backoff.saturating_mul(factor).min(self.max_backoff)
    }

    /// Runs `attempt(i)` for `i = 0, 1, ...` until it returns `Ok(Some(t))` (done) or an error;
    /// `Ok(None)` means "my transaction lost a race": back off and try again. `what` names the
    /// thing updated in [`Error::Conflict`].
    ///
    /// Errors are returned at once, not retried: a write whose outcome is unknown
    /// ([`Error::Timeout`] with `outcome_unknown`) must be read back, never blindly repeated, or a
    /// change could be applied twice.
    ///
    /// The error type is any that an [`Error`] converts into, so that a layer above (the ring
    /// store) can fail an attempt with its own errors.
    ///
    /// # Errors
    /// The first error of `attempt`; [`Error::Conflict`] after [`Retry::attempts`] conflicts.
    pub fn run<T, E: From<Error>>(
        &self,
        what: &str,
        mut attempt: impl FnMut(u32) -> Result<Option<T>, E>,
    ) -> Result<T, E> {
        let jitter = RandomState::new();
        for i in 0..self.attempts {
            if let Some(done) = attempt(i)? {
                return Ok(done);
            }
            if i + 1 < self.attempts {
                std::thread::sleep(jittered(self.backoff(i), &jitter, i));
            }
        }
        Err(Error::Conflict { what: what.to_owned(), attempts: self.attempts }.into())
    }
}

/// A time in `[b/2, b]` picked by a per-call random hasher: timing only, never a result.
fn jittered(b: Duration, state: &RandomState, attempt: u32) -> Duration {
    let half = b / 2;
    let nanos = half.as_nanos() as u64;
    half + Duration::from_nanos(if nanos == 0 { 0 } else { state.hash_one(attempt) % (nanos + 1) })
}

impl Client {
    /// Read-modify-write of one key under concurrency: reads `key`, calls `f` with the current
    /// value (`None` when absent), and writes what `f` returns in a transaction that succeeds
    /// only if nobody changed the key in between; on a conflict it reads again and calls `f`
    /// again. Every committed change was computed from the value it replaced, so no concurrent
    /// change is lost or applied twice. `f` returning `None` leaves the key as it is.
    ///
    /// Returns the revision of the write, or `None` when `f` declined. Costs two round trips per
    /// attempt; `f` may run several times, so keep it free of side effects.
    ///
    /// # Errors
    /// As [`Retry::run`], [`Client::get`] and [`Client::txn`].
    pub fn update(
        &self,
        key: &[u8],
        retry: &Retry,
        mut f: impl FnMut(Option<&KeyValue>) -> Option<Vec<u8>>,
    ) -> Result<Option<i64>, Error> {
        retry.run(&quote_bytes(key), |_| {
            let current = self.get(key)?;
            let Some(new) = f(current.as_ref()) else { return Ok(Some(None)) };
            let guard = match &current {
                Some(kv) => Compare::unchanged_since(key, kv.mod_revision),
                None => Compare::absent(key),
            };
            let r = self.txn(&[guard], &[Op::put(key, new)])?;
            Ok(r.succeeded.then_some(Some(r.revision)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_fixed_and_run_stops() {
        let r = Retry::new(5, Duration::from_millis(1), Duration::from_millis(3));
        assert_eq!(r.max_sleep(), Duration::from_millis(1 + 2 + 3 + 3));
        let mut calls = 0;
        let out: Result<(), Error> = r.run("k", |_| {
            calls += 1;
            Ok(None)
        });
        assert_eq!(calls, 5);
        assert_eq!(out, Err(Error::Conflict { what: "k".into(), attempts: 5 }));
        let done: Result<u32, Error> = r.run("k", |i| Ok((i == 2).then_some(i)));
        assert_eq!(done, Ok(2));
        let failed: Result<(), Error> = r.run("k", |_| Err(Error::InvalidArgument("x".into())));
        assert!(failed.is_err());
        assert_eq!(Retry::new(0, Duration::ZERO, Duration::ZERO).attempts(), 1);
        let huge = Retry::new(200, Duration::from_secs(1), Duration::from_secs(2));
        assert_eq!(huge.max_sleep(), Duration::from_secs(1 + 2 * 198));
    }

    #[test]
    fn jitter_stays_in_bounds() {
        let s = RandomState::new();
        for i in 0..100 {
            let b = Duration::from_micros(100 + i as u64);
            let j = jittered(b, &s, i);
            assert!(j >= b / 2 && j <= b, "{j:?} {b:?}");
        }
        assert_eq!(jittered(Duration::ZERO, &s, 0), Duration::ZERO);
    }
}

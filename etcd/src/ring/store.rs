//! [`RingStore`]: a ring under a key prefix in etcd, changed by compare-and-swap transactions.

use std::collections::hash_map::RandomState;
use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::time::{Duration, Instant};

use hashroute::{Node, RouterSpec};

use super::error::{quote_key, DecodeError, RingError};
use super::state::{logs_change, ChangeId, Keys, MemberState, Records, RingState};
use super::watcher::{RingWatcher, WatchConfig};
use std::sync::mpsc::RecvTimeoutError;

use crate::{Client, Compare, Error, KeyValue, Op, Range, Retry, WatchEvent, WatchOptions};

/// Default [`RingStore::with_time_bound`]: how long one operation may keep trying.
pub(crate) const DEFAULT_TIME_BOUND: Duration = Duration::from_secs(20);

/// First wait after a failure that may clear (etcd electing a leader), doubled per failure up to
/// [`MAX_FAILURE_BACKOFF`].
const FIRST_FAILURE_BACKOFF: Duration = Duration::from_millis(50);
const MAX_FAILURE_BACKOFF: Duration = Duration::from_secs(1);

/// The outcome of a ring change.
#[derive(Debug, Clone, PartialEq)]
pub struct Committed {
    /// The etcd revision of the change: every watcher serves revision `>= revision` once it
    /// has it ([`RingWatcher::wait_for_revision`]). For a no-op, the revision of the ring read.
    pub revision: i64,
    /// Whether anything was written (false for a no-op such as marking a down member down).
    pub changed: bool,
    /// The ring after the change, its [`RingState::revision`] set to `revision`.
    pub state: RingState,
    /// Whether the answer to the transaction that applied the change was lost (a timeout, a
    /// broken connection, a leader election) and the change was then found applied by reading
    /// the ring back: `revision` and `state` are then those of that read (the change's own
    /// revision, or a later one when other changes followed).
    pub recovered: bool,
}

/// A ring stored under a key prefix in etcd (see the [crate docs](crate#rings-in-etcd) for the
/// schema and the consistency model). Cheap to clone; every method blocks the calling thread
/// for a bounded time (the [`Client`]'s timeouts, and the [`Retry`] bounds on conflicts).
///
/// Every change is one transaction computed from the state it replaces: read the prefix at
/// revision R, decode it (garbage is refused, nothing is written), compute the next state
/// ([`RingState`]'s pure changes, which validate with the kernel and allocate a token ring's
/// tokens), then write the changed keys if no key under the prefix changed after R. A writer
/// that lost the race reads again; no change is lost or applied twice.
#[derive(Debug, Clone)]
pub struct RingStore {
    client: Client,
    keys: Keys,
    retry: Retry,
    time_bound: Duration,
}

impl RingStore {
    /// The ring under `prefix` (`/hashroute/cache` stores `/hashroute/cache/config` and
    /// `/hashroute/cache/members/NAME`). Does not contact etcd.
    ///
    /// # Errors
    /// [`RingError::InvalidPrefix`] for an empty prefix or one with control characters.
    pub fn new(client: Client, prefix: &str) -> Result<RingStore, RingError> {
        Ok(RingStore { client, keys: Keys::new(prefix)?, retry: Retry::default(), time_bound: DEFAULT_TIME_BOUND })
    }

    /// How long one operation ([`RingStore::read`], a change) may keep trying through failures
    /// that may clear: an endpoint that does not answer, a broken connection, a cluster electing
    /// a leader (default 20 s). Every etcd call of the operation is cut to the time left, so the
    /// operation returns within the bound plus a few milliseconds. A bound shorter than the
    /// client's request timeout cuts that too.
    #[must_use]
    pub fn with_time_bound(mut self, bound: Duration) -> RingStore {
        self.time_bound = bound;
        self
    }

    /// The time bound of one operation.
    pub fn time_bound(&self) -> Duration {
        self.time_bound
    }

    /// Retries of a change that conflicts with concurrent writers (default [`Retry::default`]).
    #[must_use]
    pub fn with_retry(mut self, retry: Retry) -> RingStore {
        self.retry = retry;
        self
    }

    /// The client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The prefix as given.
    pub fn prefix(&self) -> &str {
        self.keys.prefix()
    }

    pub(crate) fn keys(&self) -> &Keys {
        &self.keys
    }

    /// Creates an empty ring with configuration `spec`, if nothing at all is stored under the
    /// prefix (one transaction comparing that).
    ///
    /// # Errors
    /// [`RingError::Exists`] when keys exist under the prefix; [`RingError::Refused`] /
    /// [`RingError::Unstorable`] for a configuration that cannot be stored; etcd errors.
    pub fn init(&self, spec: RouterSpec) -> Result<Committed, RingError> {
        let mut state = RingState::new(spec)?;
        let ops: Vec<Op> = state.encode(&self.keys)?.into_iter().map(|(k, v)| Op::put(k, v)).collect();
        let client = self.bounded_client();
        let r = client.txn(&[Compare::nothing_under(self.keys.root())], &ops)?;
        if !r.succeeded {
            return Err(RingError::Exists { prefix: quote_key(self.keys.prefix().as_bytes()) });
        }
        state.revision = r.revision;
        Ok(Committed { revision: r.revision, changed: true, state, recovered: false })
    }

    /// The ring as stored now (one linearizable range read: never older than a change that
    /// committed before the call), decoded and checked. An endpoint that does not answer is
    /// passed over for the next; failures that may clear (no leader yet) are retried with
    /// backoff within the [time bound](RingStore::with_time_bound).
    ///
    /// # Errors
    /// [`RingError::Decode`] ([`DecodeError::NoRing`] when nothing is stored); etcd errors;
    /// [`RingError::GaveUp`] when the time bound ran out after several attempts.
    pub fn read(&self) -> Result<RingState, RingError> {
        let client = self.bounded_client();
        let range = self.read_range(&client)?;
        Ok(decode_range(&self.keys, &range.kvs)?)
    }

    /// The client for one operation: calls cut to the time bound (or the client's own deadline
    /// when that is sooner).
    pub(crate) fn bounded_client(&self) -> Client {
        let deadline = Instant::now() + self.time_bound;
        self.client.with_deadline(self.client.deadline().map_or(deadline, |d| d.min(deadline)))
    }

    /// A range read of the ring, retried through transient failures until `client`'s deadline.
    pub(crate) fn read_range(&self, client: &Client) -> Result<Range, RingError> {
        let mut backoff = Backoff::new();
        let mut last: Option<Error> = None;
        for attempt in 1u32.. {
            match client.get_prefix(self.keys.root()) {
                Ok(range) => return Ok(range),
                Err(e) if e.is_transient() => {
                    if last.is_none() || !out_of_time(&e) {
                        last = Some(e);
                    }
                    if !backoff.wait(client.deadline()) {
                        let cause = last.take().expect("a failure was recorded");
                        return Err(self.gave_up("read", attempt, cause));
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
        unreachable!("the loop returns")
    }

    /// The error of an operation that kept failing until its time bound ran out: the cause alone
    /// after one attempt, else with the attempts and the bound.
    fn gave_up(&self, what: &str, attempts: u32, cause: Error) -> RingError {
        if attempts <= 1 {
            return RingError::Etcd(cause);
        }
        let what = format!("{what} on ring {}", quote_key(self.keys.prefix().as_bytes()));
        RingError::GaveUp { what, attempts, bound: self.time_bound, cause }
    }

    /// Joins `node` (name, weight, `zone`/`rack` labels; tokens on a token ring, else the
    /// allocator's) as an active member. See [`RingState::with_member`].
    ///
    /// # Errors
    /// As [`RingState::with_member`] and [`RingStore::change`].
    pub fn join(&self, node: &Node) -> Result<Committed, RingError> {
        self.change("join", |s| s.with_member(node, false))
    }

    /// Joins `node` staged ([`MemberState::Joining`]): stored (tokens allocated) but not routed
    /// until [`RingStore::mark_up`].
    ///
    /// # Errors
    /// As [`RingStore::join`].
    pub fn join_staged(&self, node: &Node) -> Result<Committed, RingError> {
        self.change("join", |s| s.with_member(node, true))
    }

    /// Removes member `name`. See [`RingState::without_member`].
    ///
    /// # Errors
    /// As [`RingState::without_member`] and [`RingStore::change`].
    pub fn leave(&self, name: &str) -> Result<Committed, RingError> {
        self.change("leave", |s| s.without_member(name))
    }

    /// Sets member `name`'s weight. See [`RingState::with_weight`].
    ///
    /// # Errors
    /// As [`RingState::with_weight`] and [`RingStore::change`].
    pub fn reweigh(&self, name: &str, weight: f64) -> Result<Committed, RingError> {
        self.change("reweigh", |s| s.with_weight(name, weight))
    }

    /// Marks member `name` down: clients route around it, no other key moves.
    ///
    /// # Errors
    /// As [`RingState::with_member_state`] and [`RingStore::change`].
    pub fn mark_down(&self, name: &str) -> Result<Committed, RingError> {
        self.change("down", |s| s.with_member_state(name, MemberState::Down))
    }

    /// Makes member `name` active (from down, joining or draining).
    ///
    /// # Errors
    /// As [`RingState::with_member_state`] and [`RingStore::change`].
    pub fn mark_up(&self, name: &str) -> Result<Committed, RingError> {
        self.change("up", |s| s.with_member_state(name, MemberState::Active))
    }

    /// Stages the removal of member `name` ([`MemberState::Draining`]): still routed, absent
    /// from the staged view, until [`RingStore::leave`].
    ///
    /// # Errors
    /// As [`RingState::with_member_state`] and [`RingStore::change`].
    pub fn drain(&self, name: &str) -> Result<Committed, RingError> {
        self.change("drain", |s| s.with_member_state(name, MemberState::Draining))
    }

    /// Any change: [`RingStore::change_with_id`] with a fresh [`ChangeId`].
    ///
    /// # Errors
    /// As [`RingStore::change_with_id`].
    pub fn change(
        &self,
        what: &str,
        f: impl FnMut(&RingState) -> Result<RingState, RingError>,
    ) -> Result<Committed, RingError> {
        self.change_with_id(what, &ChangeId::new(), f)
    }

    /// Any change, applied exactly once: reads the ring, calls `f` with it, and writes what `f`
    /// returns, with `id` logged in the config record, in one transaction that succeeds only if
    /// no key under the prefix changed since the read (and the config key is still at the
    /// revision read). `f` returning a state with the same serial is a no-op (nothing written).
    /// `f` may run several times: keep it free of side effects.
    ///
    /// Retried within the [time bound](RingStore::with_time_bound):
    /// - a conflict with another writer: read again, call `f` again (at most [`Retry::attempts`]
    ///   conflicts, with its backoff);
    /// - a failure that may clear (an endpoint that does not answer, a broken connection, no
    ///   leader, leader changed), with backoff, on the next endpoint. When the transaction went
    ///   out and its answer was lost, the next read decides: `id` in the ring's change log means
    ///   the change was applied ([`Committed::recovered`]); absent, it was not, and cannot be
    ///   applied later either (every attempt compares the config revision it read, which a later
    ///   commit changes), so the change is tried again. When more than
    ///   [`CHANGE_LOG`](crate::CHANGE_LOG) changes committed since, one watch of the config key
    ///   from the revision the attempt compared decides (its first change is the attempt's, or
    ///   the attempt failed).
    ///
    /// A call whose `id` is already in the change log returns at once, [`Committed::recovered`]
    /// set, writing nothing: give the same `id` to a later call to settle a change that ended
    /// [`RingError::Unresolved`] (within [`CHANGE_LOG`](crate::CHANGE_LOG) later changes).
    ///
    /// Costs per attempt: one range read of the whole ring, `f`, one transaction writing the
    /// config and the changed members.
    ///
    /// # Errors
    /// `f`'s error (not retried); [`RingError::Decode`] when the stored ring is invalid;
    /// [`RingError::Unresolved`] when a transaction went out, its answer was lost and the ring
    /// could not be read back within the bound; [`RingError::GaveUp`] (or the etcd error, after a
    /// single attempt) when the bound ran out with nothing applied, [`crate::Error::Conflict`] after too many
    /// conflicts; errors retrying cannot fix (credentials, permissions) at once.
    pub fn change_with_id(
        &self,
        what: &str,
        id: &ChangeId,
        mut f: impl FnMut(&RingState) -> Result<RingState, RingError>,
    ) -> Result<Committed, RingError> {
        let label = format!("{what} on ring {}", quote_key(self.keys.prefix().as_bytes()));
        let client = self.bounded_client();
        let mut backoff = Backoff::new();
        let mut conflicts = 0u32;
        // The attempts whose answer was lost and that may have been applied.
        let mut unknown: Vec<Pending> = Vec::new();
        // The last failure worth reporting (not a call refused for lack of time).
        let mut last: Option<Error> = None;
        for round in 1u32.. {
            let failure = match self.attempt(&client, id, &mut f, &mut unknown) {
                Ok(Attempt::Done(c)) => return Ok(c),
                Ok(Attempt::Conflict) => {
                    conflicts += 1;
                    if conflicts >= self.retry.attempts() {
                        return Err(Error::Conflict { what: label, attempts: conflicts }.into());
                    }
                    std::thread::sleep(self.retry.backoff_for(conflicts - 1));
                    continue;
                }
                Err(AttemptError::Fatal(e)) => return Err(e),
                Err(AttemptError::Transient(e)) => e,
            };
            if last.is_none() || !out_of_time(&failure) {
                last = Some(failure);
            }
            if !backoff.wait(client.deadline()) {
                let last = last.take().expect("a failure was recorded");
                return Err(match unknown.into_iter().next() {
                    Some(p) => RingError::Unresolved { what: label, bound: self.time_bound, cause: p.cause },
                    None => self.gave_up(what, round, last),
                });
            }
        }
        unreachable!("the loop returns")
    }

    /// Whether an attempt whose answer was lost turns out applied, for the attempts the change
    /// log no longer covers (more changes committed since than it keeps): etcd's history decides,
    /// since such an attempt can only have been the first config change after the revision it
    /// compared. An attempt found not applied is dropped from `unknown`.
    fn settle(
        &self,
        client: &Client,
        id: &ChangeId,
        current: &RingState,
        unknown: &mut Vec<Pending>,
    ) -> Result<bool, AttemptError> {
        let mut i = 0;
        while i < unknown.len() {
            if current.change_log_covers(unknown[i].serial) {
                // Absent from a log that covers it: not applied (yet; it may still be in flight
                // when nothing changed since, so it stays pending).
                i += 1;
                continue;
            }
            match self.applied_after(client, unknown[i].base_revision, id) {
                Ok(Some(true)) => return Ok(true),
                Ok(Some(false)) => {
                    unknown.remove(i);
                }
                Ok(None) => {
                    return Err(AttemptError::Fatal(RingError::Unresolved {
                        what: format!("change {id} (etcd's history of the ring was compacted)"),
                        bound: self.time_bound,
                        cause: unknown[i].cause.clone(),
                    }))
                }
                Err(e) => return Err(AttemptError::from_etcd(e)),
            }
        }
        Ok(false)
    }

    /// Whether the first change of the config key after `base` logged `id` (`None` when etcd
    /// compacted that history away). One watch from `base + 1`, closed after its first event.
    fn applied_after(&self, client: &Client, base: i64, id: &ChangeId) -> Result<Option<bool>, Error> {
        let key = self.keys.config();
        let options = WatchOptions { idle_reconnect: Duration::from_secs(1), ..WatchOptions::default() };
        let watch = client.watch_with(&key, base + 1, options)?;
        let deadline = client.deadline().unwrap_or_else(|| Instant::now() + self.time_bound);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let endpoint = client.preferred_endpoint().to_owned();
                return Err(Error::Timeout { endpoint, after: Duration::ZERO, outcome_unknown: false });
            }
            match watch.events().recv_timeout(left.min(Duration::from_millis(100))) {
                Ok(WatchEvent::Changes(events)) => {
                    if let Some(e) = events.iter().find(|e| e.kv.key == key) {
                        return Ok(Some(logs_change(&e.kv.value, id)));
                    }
                }
                Ok(WatchEvent::Compacted { .. }) => return Ok(None),
                Ok(WatchEvent::Failed(e)) => return Err(e),
                Ok(_) | Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    let endpoint = client.preferred_endpoint().to_owned();
                    return Err(Error::Disconnected { endpoint, cause: "the history watch ended".into() });
                }
            }
        }
    }

    /// One read–compute–write round of [`RingStore::change_with_id`].
    fn attempt(
        &self,
        client: &Client,
        id: &ChangeId,
        f: &mut impl FnMut(&RingState) -> Result<RingState, RingError>,
        unknown: &mut Vec<Pending>,
    ) -> Result<Attempt, AttemptError> {
        let range = client.get_prefix(self.keys.root()).map_err(AttemptError::from_etcd)?;
        let current = decode_range(&self.keys, &range.kvs).map_err(|e| AttemptError::Fatal(e.into()))?;
        // Applied already: by an attempt whose answer was lost, or by an earlier call given the
        // same id.
        if current.change_serial(id).is_some() {
            let revision = current.revision;
            return Ok(Attempt::Done(Committed { revision, changed: true, state: current, recovered: true }));
        }
        if self.settle(client, id, &current, unknown)? {
            let revision = current.revision;
            return Ok(Attempt::Done(Committed { revision, changed: true, state: current, recovered: true }));
        }
        let next = f(&current).map_err(AttemptError::Fatal)?;
        if next.serial == current.serial {
            let revision = current.revision;
            return Ok(Attempt::Done(Committed { revision, changed: false, state: current, recovered: false }));
        }
        let next = next.with_change_id(id);
        let ops = diff(&range.kvs, next.encode(&self.keys).map_err(AttemptError::Fatal)?);
        let compares = [
            Compare::unchanged_since(self.keys.config(), current.revision),
            Compare::unchanged_under_since(self.keys.root(), range.revision),
        ];
        match client.txn(&compares, &ops) {
            Ok(r) if r.succeeded => {
                let mut state = next;
                state.revision = r.revision;
                Ok(Attempt::Done(Committed { revision: r.revision, changed: true, state, recovered: false }))
            }
            Ok(_) => Ok(Attempt::Conflict),
            Err(e) if sent_and_lost(&e) => {
                unknown.push(Pending { serial: next.serial, base_revision: current.revision, cause: e.clone() });
                Err(AttemptError::Transient(e))
            }
            Err(e) => Err(AttemptError::from_etcd(e)),
        }
    }

    /// A watcher that serves this ring to readers and follows every change (see
    /// [`RingWatcher`]).
    ///
    /// # Errors
    /// As [`RingWatcher::start`].
    pub fn watch(&self, config: WatchConfig) -> Result<RingWatcher, RingError> {
        RingWatcher::start(self.clone(), config)
    }
}

/// An attempt whose answer was lost: it may have been applied, as the change of serial
/// `serial`, right after the config's revision `base_revision` (its transaction compared it).
struct Pending {
    serial: u64,
    base_revision: i64,
    cause: Error,
}

/// How one attempt of a change ended.
enum Attempt {
    Done(Committed),
    Conflict,
}

/// Why an attempt failed: retry after a backoff, or give up.
enum AttemptError {
    Transient(Error),
    Fatal(RingError),
}

impl AttemptError {
    fn from_etcd(e: Error) -> AttemptError {
        if e.is_transient() {
            AttemptError::Transient(e)
        } else {
            AttemptError::Fatal(e.into())
        }
    }
}

/// Whether a write failed after it went out, so that it may have been applied: no answer in
/// time, a broken connection, or etcd's "unavailable" (leader changed while it waited, no
/// leader, a timeout inside etcd).
fn sent_and_lost(e: &Error) -> bool {
    matches!(
        e,
        Error::Timeout { outcome_unknown: true, .. } | Error::OutcomeUnknown { .. } | Error::Server { code: 14, .. }
    )
}

/// Whether a failure is a call refused because the deadline had passed (it says less than the
/// failure before it).
fn out_of_time(e: &Error) -> bool {
    matches!(e, Error::Timeout { after, .. } if after.is_zero())
}

/// Waits between attempts after failures that may clear: 50 ms doubling to 1 s, each wait a
/// random time in `[b/2, b]` (spreading writers that failed together), never past the deadline.
struct Backoff {
    next: Duration,
    jitter: RandomState,
    turn: u64,
}

impl Backoff {
    fn new() -> Backoff {
        Backoff { next: FIRST_FAILURE_BACKOFF, jitter: RandomState::new(), turn: 0 }
    }

    /// Sleeps the next backoff; false (without sleeping) when the deadline would pass first.
    fn wait(&mut self, deadline: Option<Instant>) -> bool {
        let half = self.next / 2;
        let spread = half.as_nanos() as u64;
        self.turn += 1;
        let d = half + Duration::from_nanos(self.jitter.hash_one(self.turn) % (spread + 1));
        self.next = (self.next * 2).min(MAX_FAILURE_BACKOFF);
        if let Some(deadline) = deadline {
            if Instant::now() + d >= deadline {
                return false;
            }
        }
        std::thread::sleep(d);
        true
    }
}

/// The writes that turn the stored `kvs` into `records`: a put per new or changed value, a
/// delete per key no longer present.
fn diff(kvs: &[KeyValue], records: Records) -> Vec<Op> {
    let old: BTreeMap<&[u8], &[u8]> = kvs.iter().map(|kv| (kv.key.as_slice(), kv.value.as_slice())).collect();
    let mut ops = Vec::new();
    for (key, value) in &records {
        if old.get(key.as_slice()) != Some(&value.as_slice()) {
            ops.push(Op::put(key.clone(), value.clone()));
        }
    }
    let kept: BTreeMap<&[u8], ()> = records.iter().map(|(k, _)| (k.as_slice(), ())).collect();
    for key in old.keys().filter(|k| !kept.contains_key(*k)) {
        ops.push(Op::delete(key.to_vec()));
    }
    ops
}

/// The ring in `kvs` (a range read of the prefix, or a watcher's copy of it), with the check
/// only revisions allow: every change writes the config key, so no member may have changed
/// after it; a member that did was written outside a ring transaction and is refused.
pub(crate) fn decode_range<'a>(
    keys: &Keys,
    kvs: impl IntoIterator<Item = &'a KeyValue> + Clone,
) -> Result<RingState, DecodeError> {
    let mut state = RingState::decode(keys.prefix(), kvs.clone().into_iter().map(|kv| (&kv.key, &kv.value)))?;
    let config_key = keys.config();
    // Decoded, so the config is there.
    let config_revision = kvs.clone().into_iter().find(|kv| kv.key == config_key).map_or(0, |kv| kv.mod_revision);
    if let Some(late) = kvs.into_iter().find(|kv| kv.mod_revision > config_revision) {
        return Err(DecodeError::Inconsistent(format!(
            "key {:?} changed at revision {}, after the ring's config (revision {config_revision}): it was \
             written outside a ring transaction (restore it, or put the config key again to accept it)",
            quote_key(&late.key),
            late.mod_revision
        )));
    }
    state.revision = config_revision;
    Ok(state)
}

//! [`RingStore`]: a ring under a key prefix in etcd, changed by compare-and-swap transactions.

use std::collections::BTreeMap;

use hashroute::{Node, RouterSpec};

use super::error::{quote_key, DecodeError, RingError};
use super::state::{Keys, MemberState, Records, RingState};
use super::watcher::{RingWatcher, WatchConfig};
use crate::{Client, Compare, KeyValue, Op, Retry};

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
}

impl RingStore {
    /// The ring under `prefix` (`/hashroute/cache` stores `/hashroute/cache/config` and
    /// `/hashroute/cache/members/NAME`). Does not contact etcd.
    ///
    /// # Errors
    /// [`RingError::InvalidPrefix`] for an empty prefix or one with control characters.
    pub fn new(client: Client, prefix: &str) -> Result<RingStore, RingError> {
        Ok(RingStore { client, keys: Keys::new(prefix)?, retry: Retry::default() })
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
        let r = self.client.txn(&[Compare::nothing_under(self.keys.root())], &ops)?;
        if !r.succeeded {
            return Err(RingError::Exists { prefix: quote_key(self.keys.prefix().as_bytes()) });
        }
        state.revision = r.revision;
        Ok(Committed { revision: r.revision, changed: true, state })
    }

    /// The ring as stored now (one range read), decoded and checked.
    ///
    /// # Errors
    /// [`RingError::Decode`] ([`DecodeError::NoRing`] when nothing is stored); etcd errors.
    pub fn read(&self) -> Result<RingState, RingError> {
        let range = self.client.get_prefix(self.keys.root())?;
        Ok(decode_range(&self.keys, &range.kvs)?)
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

    /// Any change: reads the ring, calls `f` with it, and writes what `f` returns in one
    /// transaction that succeeds only if no key under the prefix changed since the read (and
    /// the config key is still at the revision read); on a conflict it reads again and calls
    /// `f` again, within the [`Retry`] bounds. `f` returning a state with the same serial is a
    /// no-op (nothing written). `f` may run several times: keep it free of side effects.
    ///
    /// Costs per attempt: one range read of the whole ring, `f`, one transaction writing the
    /// config and the changed members.
    ///
    /// # Errors
    /// `f`'s error (not retried); [`RingError::Decode`] when the stored ring is invalid;
    /// etcd errors, [`crate::Error::Conflict`] after too many conflicts.
    pub fn change(
        &self,
        what: &str,
        mut f: impl FnMut(&RingState) -> Result<RingState, RingError>,
    ) -> Result<Committed, RingError> {
        let label = format!("{what} on ring {}", quote_key(self.keys.prefix().as_bytes()));
        self.retry.run(&label, |_| {
            let range = self.client.get_prefix(self.keys.root())?;
            let current = decode_range(&self.keys, &range.kvs)?;
            let next = f(&current)?;
            if next.serial == current.serial {
                return Ok(Some(Committed { revision: current.revision, changed: false, state: current }));
            }
            let ops = diff(&range.kvs, next.encode(&self.keys)?);
            let compares = [
                Compare::unchanged_since(self.keys.config(), current.revision),
                Compare::unchanged_under_since(self.keys.root(), range.revision),
            ];
            let r = self.client.txn(&compares, &ops)?;
            if !r.succeeded {
                return Ok(None);
            }
            let mut state = next;
            state.revision = r.revision;
            Ok(Some(Committed { revision: r.revision, changed: true, state }))
        })
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

//! Key-value calls: reads, writes, compare-and-swap transactions, compaction, status.

use serde_json::{json, Map, Value};

use crate::client::{Client, Kind};
use crate::json::{self, b64, rev};
use crate::Error;

/// One stored key with its value and revisions (etcd's `mvccpb.KeyValue`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyValue {
    /// The key.
    pub key: Vec<u8>,
    /// The value (empty in a delete event).
    pub value: Vec<u8>,
    /// Revision of the last creation of the key (0 in a delete event).
    pub create_revision: i64,
    /// Revision of the last change of the key (for a delete event: the deletion's revision).
    pub mod_revision: i64,
    /// Changes since the last creation (1 right after it; 0 in a delete event).
    pub version: i64,
}

/// The keys under a prefix and the store revision they were read at.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Range {
    /// The keys, in ascending key order.
    pub kvs: Vec<KeyValue>,
    /// The store's revision at the read: watch from `revision + 1` to miss no later change.
    pub revision: i64,
}

/// Outcome of a delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deleted {
    /// Keys deleted (0 when none existed).
    pub count: i64,
    /// The store's revision after the call.
    pub revision: i64,
}

/// Outcome of a [`Client::txn`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxnResult {
    /// Whether every comparison held, so that the operations were applied.
    pub succeeded: bool,
    /// The store's revision after the call: the new revision when it succeeded with a change,
    /// the current one when it did not.
    pub revision: i64,
}

/// The store's status (`/v3/maintenance/status`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// etcd's version, e.g. `3.4.23`.
    pub version: String,
    /// The store's current revision.
    pub revision: i64,
    /// Whether the member that answered knows a leader (writes can succeed).
    pub has_leader: bool,
}

/// Which revision of a key a [`Compare`] looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The revision of the key's last change.
    ModRevision,
    /// The revision of the key's creation; 0 when the key does not exist.
    CreateRevision,
    /// The number of changes since the creation; 0 when the key does not exist.
    Version,
}

/// How a [`Compare`] relates the key's revision to the given one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// Equal.
    Equal,
    /// Not equal.
    NotEqual,
    /// The key's revision is less than the given one.
    Less,
    /// The key's revision is greater than the given one.
    Greater,
}

/// One condition of a [`Client::txn`]: `target(key) op revision`. A key that does not exist has
/// every revision at 0. With [`Compare::range_end`], every key in `[key, range_end)` must satisfy
/// it (an empty range compares as one absent key: every revision 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compare {
    /// The key compared.
    pub key: Vec<u8>,
    /// `Some(end)`: compare every key from `key` (inclusive) to `end` (exclusive) instead of
    /// `key` alone (etcd 3.3 and later).
    pub range_end: Option<Vec<u8>>,
    /// Which of its revisions.
    pub target: Target,
    /// The relation.
    pub op: CmpOp,
    /// The revision compared with.
    pub revision: i64,
}

impl Compare {
    /// `key`'s last change is at `mod_revision`: nobody wrote it since it was read (for a key read
    /// as absent use [`Compare::absent`]).
    pub fn unchanged_since(key: impl Into<Vec<u8>>, mod_revision: i64) -> Compare {
        Compare {
            key: key.into(),
            range_end: None,
            target: Target::ModRevision,
            op: CmpOp::Equal,
            revision: mod_revision,
        }
    }

    /// `key` does not exist (its create revision is 0).
    pub fn absent(key: impl Into<Vec<u8>>) -> Compare {
        Compare { key: key.into(), range_end: None, target: Target::CreateRevision, op: CmpOp::Equal, revision: 0 }
    }

    /// No key starts with `prefix` (every key of the range has create revision 0, and an empty
    /// range compares as an absent key): "nothing is stored under this prefix".
    pub fn nothing_under(prefix: impl Into<Vec<u8>>) -> Compare {
        let prefix = prefix.into();
        let (key, end) = prefix_bounds(&prefix);
        Compare { key, range_end: Some(end), target: Target::CreateRevision, op: CmpOp::Equal, revision: 0 }
    }

    /// No key starting with `prefix` changed after `revision` (every key of the range has a mod
    /// revision at most `revision`): "nothing under this prefix changed since my read at
    /// `revision`". A key deleted since is not seen by this comparison.
    pub fn unchanged_under_since(prefix: impl Into<Vec<u8>>, revision: i64) -> Compare {
        let prefix = prefix.into();
        let (key, end) = prefix_bounds(&prefix);
        Compare {
            key,
            range_end: Some(end),
            target: Target::ModRevision,
            op: CmpOp::Less,
            revision: revision.saturating_add(1),
        }
    }

    /// `key`'s mod revision `op` `revision`.
    pub fn mod_revision(key: impl Into<Vec<u8>>, op: CmpOp, revision: i64) -> Compare {
        Compare { key: key.into(), range_end: None, target: Target::ModRevision, op, revision }
    }

    /// `key`'s create revision `op` `revision`.
    pub fn create_revision(key: impl Into<Vec<u8>>, op: CmpOp, revision: i64) -> Compare {
        Compare { key: key.into(), range_end: None, target: Target::CreateRevision, op, revision }
    }

    fn to_json(&self) -> Value {
        let (target, field) = match self.target {
            Target::ModRevision => ("MOD", "mod_revision"),
            Target::CreateRevision => ("CREATE", "create_revision"),
            Target::Version => ("VERSION", "version"),
        };
        let result = match self.op {
            CmpOp::Equal => "EQUAL",
            CmpOp::NotEqual => "NOT_EQUAL",
            CmpOp::Less => "LESS",
            CmpOp::Greater => "GREATER",
        };
        let mut m = Map::new();
        m.insert("key".into(), b64(&self.key));
        if let Some(end) = &self.range_end {
            m.insert("range_end".into(), b64(end));
        }
        m.insert("target".into(), target.into());
        m.insert("result".into(), result.into());
        m.insert(field.into(), rev(self.revision));
        Value::Object(m)
    }
}

/// One write of a [`Client::txn`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Set `key` to `value`.
    Put {
        /// The key.
        key: Vec<u8>,
        /// The value.
        value: Vec<u8>,
    },
    /// Delete `key` (nothing when it does not exist).
    Delete {
        /// The key.
        key: Vec<u8>,
    },
    /// Delete every key starting with `prefix`.
    DeletePrefix {
        /// The prefix.
        prefix: Vec<u8>,
    },
}

impl Op {
    /// [`Op::Put`].
    pub fn put(key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> Op {
        Op::Put { key: key.into(), value: value.into() }
    }

    /// [`Op::Delete`].
    pub fn delete(key: impl Into<Vec<u8>>) -> Op {
        Op::Delete { key: key.into() }
    }

    fn to_json(&self) -> Value {
        match self {
            Op::Put { key, value } => json!({ "request_put": { "key": b64(key), "value": b64(value) } }),
            Op::Delete { key } => json!({ "request_delete_range": { "key": b64(key) } }),
            Op::DeletePrefix { prefix } => json!({ "request_delete_range": prefix_range(prefix) }),
        }
    }
}

/// `{"key", "range_end"}` covering every key that starts with `prefix`.
fn prefix_range(prefix: &[u8]) -> Value {
    let (key, end) = prefix_bounds(prefix);
    json!({ "key": b64(&key), "range_end": b64(&end) })
}

/// The key range `[key, end)` of every key that starts with `prefix` (every key when empty).
fn prefix_bounds(prefix: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let key: &[u8] = if prefix.is_empty() { &[0] } else { prefix };
    (key.to_vec(), json::prefix_end(prefix))
}

fn non_empty(key: &[u8]) -> Result<(), Error> {
    if key.is_empty() {
        return Err(Error::InvalidArgument("empty key: etcd keys are at least one byte".into()));
    }
    Ok(())
}

impl Client {
    /// The value and revisions of `key`, or `None` when it does not exist. One round trip.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty key; transport, auth and answer errors.
    pub fn get(&self, key: &[u8]) -> Result<Option<KeyValue>, Error> {
        non_empty(key)?;
        let v = self.call("/v3/kv/range", &json!({ "key": b64(key) }), Kind::Read)?;
        let kvs = self.parsed(json::array(&v, "kvs"))?;
        kvs.first().map(|kv| self.parsed(json::key_value(kv))).transpose()
    }

    /// Every key starting with `prefix` (every key when it is empty), in key order, with the
    /// revision of the read. One round trip; the answer is held in memory whole (up to
    /// [`MAX_RESPONSE_BYTES`](crate::MAX_RESPONSE_BYTES)), so do not use it on a huge keyspace.
    ///
    /// # Errors
    /// Transport, auth and answer errors.
    pub fn get_prefix(&self, prefix: &[u8]) -> Result<Range, Error> {
        let v = self.call("/v3/kv/range", &prefix_range(prefix), Kind::Read)?;
        let revision = self.parsed(json::header_revision(&v))?;
        let kvs = self.parsed(json::array(&v, "kvs"))?;
        let kvs = kvs.iter().map(|kv| self.parsed(json::key_value(kv))).collect::<Result<Vec<_>, _>>()?;
        Ok(Range { kvs, revision })
    }

    /// Sets `key` to `value` unconditionally; returns the new revision.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty key; transport errors ([`Error::Timeout`] with
    /// `outcome_unknown` when the answer did not come), auth and answer errors.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<i64, Error> {
        non_empty(key)?;
        let v = self.call("/v3/kv/put", &json!({ "key": b64(key), "value": b64(value) }), Kind::Write)?;
        self.parsed(json::header_revision(&v))
    }

    /// Deletes `key`; [`Deleted::count`] is 0 when it did not exist.
    ///
    /// # Errors
    /// As [`Client::put`].
    pub fn delete(&self, key: &[u8]) -> Result<Deleted, Error> {
        non_empty(key)?;
        self.delete_range(json!({ "key": b64(key) }))
    }

    /// Deletes every key starting with `prefix` (every key when it is empty: careful).
    ///
    /// # Errors
    /// As [`Client::put`].
    pub fn delete_prefix(&self, prefix: &[u8]) -> Result<Deleted, Error> {
        self.delete_range(prefix_range(prefix))
    }

    fn delete_range(&self, body: Value) -> Result<Deleted, Error> {
        let v = self.call("/v3/kv/deleterange", &body, Kind::Write)?;
        Ok(Deleted { count: self.parsed(json::int(&v, "deleted"))?, revision: self.parsed(json::header_revision(&v))? })
    }

    /// Applies `ops` atomically if every comparison holds (nothing otherwise), in one round trip.
    /// This is the compare-and-swap every concurrent change builds on: read, compute, then
    /// `txn(&[Compare::unchanged_since(key, read.mod_revision)], &[Op::put(key, new)])`, and read
    /// again when it did not succeed (see [`Retry`](crate::Retry) and [`Client::update`]).
    ///
    /// # Errors
    /// As [`Client::put`]; a failed comparison is not an error but `succeeded == false`.
    pub fn txn(&self, compares: &[Compare], ops: &[Op]) -> Result<TxnResult, Error> {
        let body = json!({
            "compare": compares.iter().map(Compare::to_json).collect::<Vec<_>>(),
            "success": ops.iter().map(Op::to_json).collect::<Vec<_>>(),
        });
        let v = self.call("/v3/kv/txn", &body, Kind::Write)?;
        Ok(TxnResult {
            succeeded: self.parsed(json::boolean(&v, "succeeded"))?,
            revision: self.parsed(json::header_revision(&v))?,
        })
    }

    /// Drops the history before `revision` (etcd's compaction, waiting until it is applied):
    /// watches and reads from older revisions then fail with a compaction report.
    ///
    /// # Errors
    /// [`Error::Compacted`] when `revision` is already compacted; [`Error::Server`] when it is in
    /// the future; transport, auth and answer errors.
    pub fn compact(&self, revision: i64) -> Result<(), Error> {
        let body = json!({ "revision": rev(revision), "physical": true });
        match self.call("/v3/kv/compaction", &body, Kind::Write) {
            Ok(_) => Ok(()),
            Err(Error::Server { message, .. }) if message.contains("compacted") => {
                Err(Error::Compacted { requested: revision, compact_revision: None })
            }
            Err(e) => Err(e),
        }
    }

    /// The store's version and current revision; also a cheap liveness check.
    ///
    /// # Errors
    /// Transport and answer errors.
    pub fn status(&self) -> Result<Status, Error> {
        let v = self.call("/v3/maintenance/status", &json!({}), Kind::Read)?;
        let leader = self.parsed(json::string(&v, "leader").map(str::to_owned).or_else(|_| {
            // Some encoders write uint64 as a number.
            json::int(&v, "leader").map(|l| l.to_string())
        }))?;
        Ok(Status {
            version: self.parsed(json::string(&v, "version"))?.to_owned(),
            revision: self.parsed(json::header_revision(&v))?,
            has_leader: !leader.is_empty() && leader != "0",
        })
    }

    /// A field accessor's result, its reason becoming [`Error::Malformed`].
    pub(crate) fn parsed<T>(&self, r: Result<T, String>) -> Result<T, Error> {
        r.map_err(|reason| {
            let index = self.inner.order().next().map(|(i, _)| i).unwrap_or(0);
            Error::Malformed { endpoint: self.inner.endpoints[index].name.clone(), reason }
        })
    }
}

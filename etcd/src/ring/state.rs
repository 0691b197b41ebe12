//! The stored ring: its key layout, its records, and the decoder from `(key, value)` pairs.
//!
//! Plain synchronous code with no etcd in it, so that a fuzz target can call
//! [`RingState::decode`] on arbitrary bytes: every input gives a [`RingState`] or a
//! [`DecodeError`], never a panic, and a state is returned only when every record was read and
//! every cross-check held (never a ring applied in part).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use hashroute::{Algorithm, Node, NodeSet, RouterSpec};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::error::{quote_key, quote_text, DecodeError, RingError};
use super::router::RingRouter;

/// The `format` every config record carries; a reader refuses any other, so a future schema
/// is never misread as this one.
pub const FORMAT: &str = "hashroute-ring/1";

/// How many change ids the config record keeps (the newest ones): a writer whose answer was lost
/// finds its change among them if fewer than this many changes committed after it, and asks
/// etcd's history otherwise (see [`ChangeId`]). About 50 bytes each in the config record.
pub const CHANGE_LOG: usize = 32;

/// Longest [`ChangeId`], in bytes.
pub const MAX_CHANGE_ID_BYTES: usize = 64;

/// Longest member name, in bytes.
pub const MAX_NAME_BYTES: usize = 253;

/// Most labels per member, and longest label key or value in bytes.
pub const MAX_LABELS: usize = 16;
/// Longest label key or value, in bytes.
pub const MAX_LABEL_BYTES: usize = 128;

/// Where a member is in its life cycle. Only `active`, `down` and `draining` members are in the
/// router clients route with ([`RingState::router`]); the staged view
/// ([`RingState::target_router`]) is the ring once every staged change is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemberState {
    /// Routed: owns its share of the keys.
    Active,
    /// Routed around, as [`hashroute::Failover`] does: its keys go to the next live node of
    /// their preference list and no other key moves; `up` gives them back exactly. The delayed
    /// removal: mark a failed node down at once, remove it (`leave`) later.
    Down,
    /// Staged scale-out: a member (with its tokens, on a token ring) that clients do not route
    /// to yet; the staged view routes to it. `up` makes it active.
    Joining,
    /// Staged scale-in: still routed, absent from the staged view; `leave` removes it.
    Draining,
}

impl MemberState {
    /// Every state, in declaration order.
    pub const ALL: [MemberState; 4] =
        [MemberState::Active, MemberState::Down, MemberState::Joining, MemberState::Draining];

    /// The name used in the records and by the CLI.
    pub fn name(self) -> &'static str {
        match self {
            MemberState::Active => "active",
            MemberState::Down => "down",
            MemberState::Joining => "joining",
            MemberState::Draining => "draining",
        }
    }

    /// Whether clients route to members in this state now (active, down, draining).
    pub fn is_routed(self) -> bool {
        !matches!(self, MemberState::Joining)
    }

    /// Whether the staged view routes to members in this state (active, down, joining).
    pub fn is_in_target(self) -> bool {
        !matches!(self, MemberState::Draining)
    }
}

impl fmt::Display for MemberState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MemberState {
    type Err = String;
    fn from_str(s: &str) -> Result<MemberState, String> {
        MemberState::ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| {
            format!("unknown member state {:?} (expected active, down, joining or draining)", quote_text(s))
        })
    }
}

/// One member of a stored ring.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub(crate) name: String,
    pub(crate) weight: f64,
    pub(crate) labels: BTreeMap<String, String>,
    pub(crate) state: MemberState,
    pub(crate) tokens: Vec<i64>,
    pub(crate) order: u64,
    pub(crate) serial: u64,
}

impl Member {
    /// The member's name (its node name in the router).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its weight.
    pub fn weight(&self) -> f64 {
        self.weight
    }

    /// Its labels (`zone`, `rack`, ...), sorted by key.
    pub fn labels(&self) -> &BTreeMap<String, String> {
        &self.labels
    }

    /// Its state.
    pub fn state(&self) -> MemberState {
        self.state
    }

    /// Its tokens, ascending (token rings only; empty otherwise).
    pub fn tokens(&self) -> &[i64] {
        &self.tokens
    }

    /// Its position in the node order (routers where node order matters, such as jump, take
    /// the members by ascending position); positions are given out in join order.
    pub fn order(&self) -> u64 {
        self.order
    }

    /// The serial of the change that last wrote this member.
    pub fn serial(&self) -> u64 {
        self.serial
    }

    /// The member as a kernel node: name, weight, labels and tokens.
    pub fn node(&self) -> Node {
        let mut node = Node::new(self.name.clone()).with_weight(self.weight);
        for (k, v) in &self.labels {
            node = node.with_label(k.clone(), v.clone());
        }
        if !self.tokens.is_empty() {
            node = node.with_tokens(self.tokens.iter().copied());
        }
        node
    }
}

/// A decoded ring: the router configuration, the members in node order, and the revision it
/// was read at. Built only by [`RingState::decode`] (or a ring operation), so every value is
/// valid: names and labels checked, serials and counts consistent.
#[derive(Debug, Clone, PartialEq)]
pub struct RingState {
    pub(crate) spec: RouterSpec,
    pub(crate) serial: u64,
    pub(crate) next_order: u64,
    /// Ascending `order`.
    pub(crate) members: Vec<Member>,
    pub(crate) revision: i64,
    /// The ids of the newest changes and their serials, ascending serial, at most
    /// [`CHANGE_LOG`].
    pub(crate) changes: Vec<ChangeEntry>,
}

/// The idempotency token of one logical ring change: written into the config record by the
/// transaction that applies the change, so that a writer whose answer was lost (a timeout, a
/// broken connection, a leader election) can read the ring back and tell "applied" from "not
/// applied" before it tries again ([`RingStore::change_with_id`](crate::RingStore::change_with_id)).
///
/// [`ChangeId::new`] draws 128 random bits (from the standard library's per-process random
/// keys, the clock, the process id and a counter): unique in practice, never used for routing.
/// Give the same id to every attempt of one change, and a new one to every change. An id is 1
/// to [`MAX_CHANGE_ID_BYTES`] ASCII letters, digits, `-` or `_`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChangeId(String);

impl ChangeId {
    /// A fresh random id (32 hexadecimal digits). Costs two hashes.
    pub fn new() -> ChangeId {
        use std::hash::{BuildHasher, Hasher};
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let half = |salt: u64| {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(salt);
            h.write_u128(nanos);
            h.write_u32(std::process::id());
            h.write_u64(n);
            h.finish()
        };
        ChangeId(format!("{:016x}{:016x}", half(1), half(2)))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for ChangeId {
    /// A fresh random id: [`ChangeId::new`].
    fn default() -> ChangeId {
        ChangeId::new()
    }
}

impl fmt::Display for ChangeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for ChangeId {
    type Err = String;
    /// # Errors
    /// A message naming the rule when `s` is empty, too long or has other characters.
    fn from_str(s: &str) -> Result<ChangeId, String> {
        check_change_id(s)?;
        Ok(ChangeId(s.to_owned()))
    }
}

/// Whether a stored config record logs change `id` (false for anything that is not a config
/// record).
pub(crate) fn logs_change(config: &[u8], id: &ChangeId) -> bool {
    serde_json::from_slice::<ConfigRecord>(config).is_ok_and(|c| c.changes.iter().any(|e| e.id == id.0))
}

fn check_change_id(s: &str) -> Result<(), String> {
    let ok = !s.is_empty()
        && s.len() <= MAX_CHANGE_ID_BYTES
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "change id {:?} is not 1 to {MAX_CHANGE_ID_BYTES} ASCII letters, digits, '-' or '_'",
            quote_text(s)
        ))
    }
}

/// One logged change: its id and the serial it committed as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ChangeEntry {
    pub(crate) id: String,
    pub(crate) serial: u64,
}

/// The config record (`PREFIX/config`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigRecord {
    format: String,
    spec: RouterSpec,
    serial: u64,
    members: u64,
    next_order: u64,
    /// The ids of the newest changes (absent in rings written before change ids existed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    changes: Vec<ChangeEntry>,
}

/// A member record (`PREFIX/members/NAME`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct MemberRecord {
    order: u64,
    #[serde(serialize_with = "write_weight", deserialize_with = "read_weight")]
    weight: f64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    labels: BTreeMap<String, String>,
    state: MemberState,
    serial: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tokens: Vec<i64>,
}

fn write_weight<S: Serializer>(w: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(*w)
}

/// A weight read from its digits with Rust's correctly rounded parser (serde_json's default
/// float parsing may differ in the last bit for long mantissas): every client gets the f64
/// the writer had, so the routes agree bit for bit.
fn read_weight<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    use serde::de::Error as _;
    let raw: Box<serde_json::value::RawValue> = Deserialize::deserialize(d)?;
    let text = raw.get();
    if !text.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        return Err(D::Error::custom(format!("weight is not a number: {}", quote_text(text))));
    }
    text.parse::<f64>().map_err(|_| D::Error::custom(format!("weight is not a number: {}", quote_text(text))))
}

/// The key layout under a prefix: `ROOT` is the prefix with a `/` appended unless it ends with
/// one; the ring is `ROOT config` and one `ROOT members/NAME` per member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Keys {
    prefix: String,
    root: Vec<u8>,
}

const CONFIG: &[u8] = b"config";
const MEMBERS: &[u8] = b"members/";

impl Keys {
    pub(crate) fn new(prefix: &str) -> Result<Keys, RingError> {
        let bad = |reason| RingError::InvalidPrefix { prefix: quote_text(prefix), reason };
        if prefix.is_empty() {
            return Err(bad("give a non-empty prefix such as /hashroute/cache"));
        }
        if prefix.chars().any(char::is_control) {
            return Err(bad("control characters are not allowed"));
        }
        let mut root = prefix.as_bytes().to_vec();
        if !prefix.ends_with('/') {
            root.push(b'/');
        }
        Ok(Keys { prefix: prefix.to_owned(), root })
    }

    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Every key of the ring starts with this.
    pub(crate) fn root(&self) -> &[u8] {
        &self.root
    }

    pub(crate) fn config(&self) -> Vec<u8> {
        [self.root.as_slice(), CONFIG].concat()
    }

    pub(crate) fn member(&self, name: &str) -> Vec<u8> {
        [self.root.as_slice(), MEMBERS, name.as_bytes()].concat()
    }
}

/// What a key under the root is.
enum KeyKind<'a> {
    Config,
    Member(&'a str),
}

fn classify<'a>(keys: &Keys, key: &'a [u8]) -> Result<KeyKind<'a>, DecodeError> {
    let unknown = |reason| DecodeError::UnknownKey { key: quote_key(key), reason };
    let rest = key.strip_prefix(keys.root()).ok_or_else(|| unknown("outside the prefix"))?;
    if rest == CONFIG {
        return Ok(KeyKind::Config);
    }
    let name = rest.strip_prefix(MEMBERS).ok_or_else(|| unknown("expected config or members/NAME"))?;
    let name = std::str::from_utf8(name).map_err(|_| unknown("the member name is not UTF-8"))?;
    check_name(name).map_err(|_| unknown("not a valid member name"))?;
    Ok(KeyKind::Member(name))
}

/// A member name the schema accepts: 1 to [`MAX_NAME_BYTES`] bytes, no whitespace or control
/// characters (names are one field of the `NAME WEIGHT` nodes file and of `ring status`).
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty".into());
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(format!("the name is longer than {MAX_NAME_BYTES} bytes"));
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("the name contains whitespace or control characters".into());
    }
    Ok(())
}

/// Labels the schema accepts: at most [`MAX_LABELS`], keys and values 1 to
/// [`MAX_LABEL_BYTES`] bytes without whitespace, control characters or `=`.
pub(crate) fn check_labels(labels: &BTreeMap<String, String>) -> Result<(), String> {
    if labels.len() > MAX_LABELS {
        return Err(format!("{} labels, at most {MAX_LABELS}", labels.len()));
    }
    for (k, v) in labels {
        for part in [k, v] {
            let bad = part.is_empty()
                || part.len() > MAX_LABEL_BYTES
                || part.chars().any(|c| c.is_whitespace() || c.is_control() || c == '=');
            if bad {
                return Err(format!(
                    "label {}={}: keys and values are 1 to {MAX_LABEL_BYTES} bytes without spaces or '='",
                    quote_text(k),
                    quote_text(v)
                ));
            }
        }
    }
    Ok(())
}

/// Algorithms whose routes after a change are not a function of the member list (and tokens):
/// memento, anchor and jumpback-anchor remember the order of past removals, slots its past slot
/// moves, haproxy the server ids it gave out. Rebuilding them from the stored members would not
/// give the router their incremental changes give (a removal would renumber and move far more
/// keys), so a ring in etcd refuses them; the tests check both lists against the kernel.
pub(crate) const HISTORY_DEPENDENT: [Algorithm; 5] =
    [Algorithm::Memento, Algorithm::Anchor, Algorithm::JumpBackAnchor, Algorithm::Slots, Algorithm::Haproxy];

/// Refuses the [`HISTORY_DEPENDENT`] algorithms.
pub(crate) fn check_storable(spec: &RouterSpec) -> Result<(), String> {
    if HISTORY_DEPENDENT.contains(&spec.algorithm) {
        return Err(format!(
            "{}'s routes after a change depend on the history of changes, not on the member list \
             alone; use ring, token-ring, ketama, rendezvous, maglev or another algorithm whose \
             routes follow from its members",
            spec.algorithm
        ));
    }
    Ok(())
}

impl RingState {
    /// Decodes the keys and values stored under `prefix` (as a range read returns them, in any
    /// order) into a ring, checking everything: the key layout, every record's fields, the
    /// config's format, member count and change serial against the members', unique node
    /// positions, names and labels, tokens present exactly when the algorithm is token-ring,
    /// and the router configuration ([`RouterSpec::validate`]). [`RingState::router`] then builds
    /// it. O(total bytes); no panic on any input.
    ///
    /// The revision is 0; the store sets the config key's revision on what it reads.
    ///
    /// # Errors
    /// [`DecodeError::NoRing`] for no entries; the other [`DecodeError`]s naming the key.
    pub fn decode<I, K, V>(prefix: &str, entries: I) -> Result<RingState, DecodeError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        let keys = Keys::new(prefix)
            .map_err(|e| DecodeError::UnknownKey { key: quote_text(prefix), reason: prefix_reason(&e) })?;
        let mut config = None;
        let mut members: BTreeMap<String, MemberRecord> = BTreeMap::new();
        let mut any = false;
        for (key, value) in entries {
            let (key, value) = (key.as_ref(), value.as_ref());
            any = true;
            let malformed = |e: serde_json::Error| DecodeError::Malformed {
                key: quote_key(key),
                reason: quote_text(&e.to_string()),
            };
            match classify(&keys, key)? {
                KeyKind::Config => {
                    let record: ConfigRecord = serde_json::from_slice(value).map_err(malformed)?;
                    if config.replace(record).is_some() {
                        return Err(DecodeError::Inconsistent(format!("key {:?} given twice", quote_key(key))));
                    }
                }
                KeyKind::Member(name) => {
                    let record: MemberRecord = serde_json::from_slice(value).map_err(malformed)?;
                    if members.insert(name.to_owned(), record).is_some() {
                        return Err(DecodeError::Inconsistent(format!("key {:?} given twice", quote_key(key))));
                    }
                }
            }
        }
        if !any {
            return Err(DecodeError::NoRing { prefix: quote_text(prefix) });
        }
        let config = config.ok_or_else(|| {
            DecodeError::Inconsistent(format!("members but no config key {:?}", quote_key(&keys.config())))
        })?;
        RingState::assemble(&keys, config, members)
    }

    fn assemble(
        keys: &Keys,
        config: ConfigRecord,
        records: BTreeMap<String, MemberRecord>,
    ) -> Result<RingState, DecodeError> {
        let config_key = || quote_key(&keys.config());
        let bad_config = |reason: String| DecodeError::Malformed { key: config_key(), reason };
        if config.format != FORMAT {
            return Err(bad_config(format!(
                "format {:?}, this reader understands {FORMAT:?}",
                quote_text(&config.format)
            )));
        }
        config.spec.validate().map_err(DecodeError::Router)?;
        check_storable(&config.spec).map_err(bad_config)?;
        if config.serial == 0 {
            return Err(bad_config("serial 0: the first change has serial 1".into()));
        }
        if config.members != records.len() as u64 {
            return Err(DecodeError::Inconsistent(format!(
                "the config counts {} members and {} are stored (a change applied in part, or a key \
                 written by hand)",
                config.members,
                records.len()
            )));
        }
        let tokens_expected = config.spec.algorithm == Algorithm::TokenRing;
        let mut members = Vec::with_capacity(records.len());
        for (name, r) in records {
            let member = member_from_record(keys, &config, tokens_expected, name, r)?;
            members.push(member);
        }
        members.sort_unstable_by_key(|m| m.order);
        if let Some(w) = members.windows(2).find(|w| w[0].order == w[1].order) {
            return Err(DecodeError::Inconsistent(format!(
                "members {:?} and {:?} share position {}",
                w[0].name, w[1].name, w[0].order
            )));
        }
        check_change_log(&config).map_err(|reason| DecodeError::Malformed { key: config_key(), reason })?;
        Ok(RingState {
            spec: config.spec,
            serial: config.serial,
            next_order: config.next_order,
            members,
            revision: 0,
            changes: config.changes,
        })
    }
}

/// The change log: at most [`CHANGE_LOG`] valid ids, each once, serials strictly ascending from
/// 2 (the first change after init) to the config's serial.
fn check_change_log(config: &ConfigRecord) -> Result<(), String> {
    let log = &config.changes;
    if log.len() > CHANGE_LOG {
        return Err(format!("{} change ids, at most {CHANGE_LOG}", log.len()));
    }
    for c in log {
        check_change_id(&c.id)?;
        if c.serial < 2 || c.serial > config.serial {
            return Err(format!("change {} has serial {}, outside 2..={}", c.id, c.serial, config.serial));
        }
    }
    if !log.windows(2).all(|w| w[0].serial < w[1].serial) {
        return Err("change ids are not in ascending serial order".into());
    }
    let ids: std::collections::BTreeSet<&str> = log.iter().map(|c| c.id.as_str()).collect();
    if ids.len() != log.len() {
        return Err("a change id is logged twice".into());
    }
    Ok(())
}

fn prefix_reason(e: &RingError) -> &'static str {
    match e {
        RingError::InvalidPrefix { reason, .. } => reason,
        _ => "invalid prefix",
    }
}

fn member_from_record(
    keys: &Keys,
    config: &ConfigRecord,
    tokens_expected: bool,
    name: String,
    r: MemberRecord,
) -> Result<Member, DecodeError> {
    let bad = |reason: String| DecodeError::Malformed { key: quote_key(&keys.member(&name)), reason };
    if !(r.weight.is_finite() && r.weight > 0.0) {
        return Err(bad(format!("weight {} is not a finite number above 0", r.weight)));
    }
    check_labels(&r.labels).map_err(&bad)?;
    if r.serial == 0 || r.serial > config.serial {
        return Err(DecodeError::Inconsistent(format!(
            "member {name:?} was written by change {} and the config is at change {} (a change \
             applied in part, or a record written by hand)",
            r.serial, config.serial
        )));
    }
    if r.order >= config.next_order {
        return Err(bad(format!("position {} is not below the config's next position {}", r.order, config.next_order)));
    }
    if !r.tokens.windows(2).all(|w| w[0] < w[1]) {
        return Err(bad("tokens are not strictly ascending".into()));
    }
    match (tokens_expected, r.tokens.is_empty()) {
        (true, true) => return Err(bad("a token-ring member needs its tokens".into())),
        (false, false) => {
            return Err(bad(format!("tokens are stored, but {} takes none", config.spec.algorithm)));
        }
        _ => {}
    }
    Ok(Member {
        name,
        weight: r.weight,
        labels: r.labels,
        state: r.state,
        tokens: r.tokens,
        order: r.order,
        serial: r.serial,
    })
}

impl RingState {
    /// A new ring without members: `spec` checked ([`RouterSpec::validate`], an algorithm the
    /// store can hold); a token ring without a tokens-per-node count gets the kernel's default
    /// ([`hashroute::TokenRing::DEFAULT_TOKENS_PER_NODE`]), recorded so that every later join
    /// allocates the same number.
    ///
    /// # Errors
    /// [`RingError::Refused`] for an invalid spec, [`RingError::Unstorable`].
    pub fn new(spec: RouterSpec) -> Result<RingState, RingError> {
        spec.validate().map_err(RingError::Refused)?;
        check_storable(&spec).map_err(RingError::Unstorable)?;
        let mut spec = spec;
        if spec.algorithm == Algorithm::TokenRing && spec.tokens_per_node.is_none() {
            spec = spec.with_tokens_per_node(hashroute::TokenRing::DEFAULT_TOKENS_PER_NODE);
        }
        Ok(RingState { spec, serial: 1, next_order: 0, members: Vec::new(), revision: 0, changes: Vec::new() })
    }

    /// The router configuration.
    pub fn spec(&self) -> &RouterSpec {
        &self.spec
    }

    /// The members, in node order.
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// The member called `name`.
    pub fn member(&self, name: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.name == name)
    }

    /// The serial of the last change (1 for a ring just created); every change adds one.
    pub fn serial(&self) -> u64 {
        self.serial
    }

    /// The serial the change with id `id` committed as, when it is among the newest
    /// [`CHANGE_LOG`] changes of this state. `None` means "not applied" only when fewer than
    /// `CHANGE_LOG` changes followed the state it was computed from (see
    /// [`RingState::change_log_covers`]). O(`CHANGE_LOG`).
    pub fn change_serial(&self, id: &ChangeId) -> Option<u64> {
        self.changes.iter().find(|c| c.id == id.0).map(|c| c.serial)
    }

    /// Whether the change log still holds every change from serial `serial` on, so that a change
    /// computed from the state at serial `serial - 1` and absent from the log was not applied.
    pub fn change_log_covers(&self, serial: u64) -> bool {
        self.changes.len() < CHANGE_LOG || self.changes.first().is_some_and(|c| c.serial <= serial)
    }

    /// This state with `id` logged as the change of its serial, the oldest entries dropped
    /// beyond [`CHANGE_LOG`].
    pub(crate) fn with_change_id(mut self, id: &ChangeId) -> RingState {
        self.changes.retain(|c| c.id != id.0 && c.serial < self.serial);
        self.changes.push(ChangeEntry { id: id.0.clone(), serial: self.serial });
        let excess = self.changes.len().saturating_sub(CHANGE_LOG);
        self.changes.drain(..excess);
        self
    }

    /// The etcd revision of the last change (the config key's mod revision) when read from the
    /// store; 0 for a state decoded from bare entries.
    pub fn revision(&self) -> i64 {
        self.revision
    }

    /// Heap bytes of the members (names, labels, tokens), approximately: what a
    /// [`RingRouter`] holds on top of its routes.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.members
            .iter()
            .map(|m| {
                let labels: usize = m.labels.iter().map(|(k, v)| k.len() + v.len() + 48).sum();
                std::mem::size_of::<Member>() + m.name.len() + m.tokens.len() * 8 + labels
            })
            .sum()
    }

    /// Whether any member is routed now (active, down or draining).
    pub fn has_routed_members(&self) -> bool {
        self.members.iter().any(|m| m.state.is_routed())
    }

    /// Whether a change is staged (a member joining or draining).
    pub fn has_staged_changes(&self) -> bool {
        self.members.iter().any(|m| matches!(m.state, MemberState::Joining | MemberState::Draining))
    }

    /// The router clients route with: the active, down and draining members in node order,
    /// built by [`RouterSpec::build`], down members marked down ([`hashroute::Failover`]).
    /// While no member is down, its routes and fingerprint are those of `RouterSpec::build`
    /// over the same nodes. Costs what building the algorithm costs plus a fingerprint (O(P)
    /// for P ring points).
    ///
    /// # Errors
    /// [`DecodeError::Empty`] when no member is routed; [`DecodeError::Router`] when the kernel
    /// refuses the members (weights on an algorithm without them, a token given twice, every
    /// routed member down, ...).
    pub fn router(&self) -> Result<RingRouter, DecodeError> {
        self.build(MemberState::is_routed)
    }

    /// The staged view: the ring once every staged change is done (joining members active,
    /// draining members gone), for planning data movement before `up` / `leave`. Equal to
    /// [`RingState::router`] while nothing is staged.
    ///
    /// # Errors
    /// As [`RingState::router`].
    pub fn target_router(&self) -> Result<RingRouter, DecodeError> {
        self.build(MemberState::is_in_target)
    }

    fn build(&self, include: fn(MemberState) -> bool) -> Result<RingRouter, DecodeError> {
        let chosen: Vec<&Member> = self.members.iter().filter(|m| include(m.state)).collect();
        if chosen.is_empty() {
            return Err(DecodeError::Empty);
        }
        let nodes = NodeSet::new(chosen.iter().map(|m| m.node()))?;
        let router = self.spec.build(nodes)?;
        let down: Vec<&str> = chosen.iter().filter(|m| m.state == MemberState::Down).map(|m| m.name.as_str()).collect();
        RingRouter::new(router, &down, self.clone())
    }

    /// The keys and values this state is stored as under `prefix`: the config key and one key
    /// per member, what [`RingState::decode`] reads back (a store writes them in one
    /// transaction; tests and fuzzers use them to start from a valid state). O(total bytes).
    ///
    /// # Errors
    /// [`RingError`] for a prefix that cannot hold a ring (empty), as [`RingStore::new`](crate::RingStore::new).
    pub fn records(&self, prefix: &str) -> Result<Records, RingError> {
        self.encode(&Keys::new(prefix)?)
    }

    /// The records of this state: the config key and one key per member, values as stored.
    ///
    /// # Errors
    /// [`RingError::Unstorable`] if a record does not serialize (serde_json refuses nothing
    /// these records hold, so this is defensive).
    pub(crate) fn encode(&self, keys: &Keys) -> Result<Records, RingError> {
        let config = ConfigRecord {
            format: FORMAT.to_owned(),
            spec: self.spec.clone(),
            serial: self.serial,
            members: self.members.len() as u64,
            next_order: self.next_order,
            changes: self.changes.clone(),
        };
        let mut out = Vec::with_capacity(self.members.len() + 1);
        out.push((keys.config(), to_json(&config)?));
        for m in &self.members {
            let record = MemberRecord {
                order: m.order,
                weight: m.weight,
                labels: m.labels.clone(),
                state: m.state,
                serial: m.serial,
                tokens: m.tokens.clone(),
            };
            out.push((keys.member(&m.name), to_json(&record)?));
        }
        Ok(out)
    }
}

/// Keys and values, as stored.
/// Keys and values as stored: what [`RingState::records`] returns and [`RingState::decode`] reads.
pub type Records = Vec<(Vec<u8>, Vec<u8>)>;

/// JSON of a record.
fn to_json<T: Serialize>(record: &T) -> Result<Vec<u8>, RingError> {
    serde_json::to_vec(record).map_err(|e| RingError::Unstorable(quote_text(&e.to_string())))
}

#[cfg(test)]
mod tests;

//! # hashroute-etcd
//!
//! One consistent-hashing ring for every client: a ring kept in etcd, changed by
//! compare-and-swap transactions, served to each process through a lock-free
//! [`SharedRouter`](hashroute::SharedRouter) that follows every change, with a fingerprint to
//! check that every process routes alike ([Rings in etcd](#rings-in-etcd)). Underneath, a small
//! synchronous etcd v3 client: reads, writes, compare-and-swap transactions with a bounded retry
//! helper, and watches that survive etcd restarts. No async runtime: calls block the calling
//! thread for a bounded time, and a watch runs on a plain thread.
//!
//! ```no_run
//! use hashroute::{Algorithm, Node, RouterSpec};
//! use hashroute_etcd::{Client, Options, RingStore, WatchConfig};
//!
//! let client = Client::connect(&["127.0.0.1:2379"], Options::new())?;
//! let ring = RingStore::new(client, "/hashroute/cache")?;
//! ring.init(RouterSpec::new(Algorithm::Ring).with_vnodes(160))?; // once, by an operator
//! let change = ring.join(&Node::new("cache-7").with_weight(2.0).with_label("zone", "dc1"))?;
//!
//! // In every client process: serve the ring, route with it, lock-free.
//! let watcher = ring.watch(WatchConfig::default())?;
//! watcher.wait_for_revision(change.revision, std::time::Duration::from_secs(5)).ok();
//! let routes = watcher.router().expect("a member joined");
//! println!("user:42 -> {} (ring {})", routes.route_name(b"user:42"), watcher.fingerprint().unwrap());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The client alone:
//!
//! ```no_run
//! use hashroute_etcd::{Client, Options, Retry, WatchEvent};
//!
//! let client = Client::connect(&["127.0.0.1:2379"], Options::new())?;
//! client.put(b"ring/algo", b"ring")?;
//! // Read-modify-write that no concurrent writer can lose or double.
//! client.update(b"ring/members", &Retry::default(), |current| {
//!     let mut members = current.map(|kv| kv.value.clone()).unwrap_or_default();
//!     members.extend_from_slice(b"cache-7\n");
//!     Some(members)
//! })?;
//! // Read the state, then follow every later change.
//! let state = client.get_prefix(b"ring/")?;
//! let watcher = client.watch(b"ring/", state.revision + 1)?;
//! for event in watcher {
//!     match event {
//!         WatchEvent::Changes(changes) => println!("{} changes", changes.len()),
//!         WatchEvent::Compacted { .. } => break, // read again and watch from the new revision
//!         other => println!("{other:?}"),
//!     }
//! }
//! # Ok::<(), hashroute_etcd::Error>(())
//! ```
//!
//! ## Rings in etcd
//!
//! ### The schema
//!
//! A ring lives under a key prefix `P` (a `/` is added unless it ends with one):
//!
//! | key | value (JSON) |
//! |---|---|
//! | `P/config` | `{"format": "hashroute-ring/1", "spec": RouterSpec, "serial": S, "members": M, "next_order": K, "changes": [{"id": ID, "serial": s}, …]}` |
//! | `P/members/NAME` | `{"order": i, "weight": w, "labels": {"zone": …, "rack": …}, "state": "active" \| "down" \| "joining" \| "draining", "serial": s, "tokens": [...]}` |
//!
//! `spec` is the kernel's [`RouterSpec`](hashroute::RouterSpec) (algorithm and parameters; a
//! token ring's `tokens_per_node`), `order` a member's position in the node order (given out in
//! join order; jump and the other order-dependent routers number their buckets by it), `tokens`
//! a token ring member's tokens, ascending. The router clients route with is
//! [`RouterSpec::build`](hashroute::RouterSpec::build) over the routed members in node order,
//! down members routed around by [`Failover`](hashroute::Failover) ([`RingState::router`]).
//!
//! **Why one key per member and a config key, not one document.** A change writes the config
//! and only the members it changes, so no value approaches etcd's request limit (1.5 MiB by
//! default) as the ring grows: a token ring of 1000 members with 256 tokens each is about 5 MB
//! as one document, and 5 KB per member here. A range read still gets the whole ring in one
//! consistent snapshot, `etcdctl get --prefix P/members/` lists one member per line, and a
//! watch event names the member that changed. The config key is the guard that serializes
//! changes: **every change writes it**, so
//!
//! - a transaction that compares the config's revision (and that nothing under `P` changed
//!   since the read) fails if any other change committed in between: writers retry, and no
//!   change is lost or applied twice;
//! - in any consistent read, the config is the newest key: a member key newer than it was
//!   written outside a ring transaction (by hand) and is refused;
//! - its `serial` counts changes and its `members` the member keys; every member records the
//!   serial of the change that last wrote it. A decoder given a partial change, or a member
//!   written by hand, finds a count or a serial that does not fit and refuses the state.
//!
//! Changes that touch many members — a token ring's leave or weight change, where the kernel's
//! allocator hands ranges to others — write every member whose tokens changed in the same
//! transaction, up to etcd's `--max-txn-ops` (128 by default; about 2V members change for V
//! tokens per node). The algorithms whose routes after a change depend on the history of
//! changes rather than on the member list (memento, anchor, jumpback-anchor, slots, haproxy)
//! are refused at [`RingStore::init`]: rebuilding them from the members would not give what
//! their incremental changes give.
//!
//! ### Changes
//!
//! [`RingStore`] makes every change one transaction: read the prefix at revision R, decode it
//! ([`RingState::decode`]; garbage is refused and nothing is written), compute the next state
//! with a pure function of the one read ([`RingState::with_member`], [`RingState::without_member`],
//! [`RingState::with_weight`], [`RingState::with_member_state`]: each validated by the kernel's
//! own incremental change on the router of every member, and a token-ring join allocates its
//! tokens there with [`TokenRing::with_node`](hashroute::TokenRing::with_node) against every
//! stored token), then write the changed keys if the config is still at its revision and no key
//! under `P` changed after R. A writer that lost the race reads again ([`Retry`]).
//!
//! **Every change is safe to retry, and is retried.** Each logical change has a [`ChangeId`]
//! (drawn once per call, or given: [`RingStore::change_with_id`]) that its transaction logs in
//! the config record's `changes` (the newest [`CHANGE_LOG`] ids with their serials). When the
//! answer to a transaction is lost (no answer in time, a broken connection, etcd's "leader
//! changed" or "no leader" while a member waits out an election), the store reads the ring
//! back, on the next endpoint: the id in the log means the change was applied (success,
//! [`Committed::recovered`]); absent, it was not, and never will be (every attempt compares the
//! config revision it read, which any later commit changes), so the change is computed again
//! and retried. When more changes than the log keeps committed meanwhile (busy writers, a
//! slow answer), etcd's history decides: the attempt can only have been the first config change
//! after the revision it compared, so one watch from there reads that change's log (a history
//! already compacted away leaves the change [`RingError::Unresolved`]).
//! Failures that may clear are retried with backoff within the store's time bound
//! ([`RingStore::with_time_bound`], 20 s; every etcd call is cut to the time left); past it the
//! error is one line, [`RingError::Unresolved`] when a write's outcome could not be learned.
//! Joins, leaves, weight changes, down / up / drain and token-ring joins (tokens allocated
//! inside the transaction) all go through this one path. The log costs about 50 bytes per id
//! in the config record (1.8 KB when full), written with every change; `results/etcd_ring.md`
//! has the record and watch-event sizes of 1,000-member rings. Readers of this crate from before
//! change ids refuse a config record with a `changes` field (they keep serving their last ring
//! and report the refusal): upgrade the watchers before the writers.
//!
//! ### Serving it
//!
//! A [`RingWatcher`] reads the ring, watches `P` from the revision after the read, and for each
//! batch of events decodes the keys as of the newest revision, builds the router and swaps it
//! into a [`SharedRouter`](hashroute::SharedRouter): readers never wait (a load is a few atomic
//! operations) and always get one whole ring with its revision and fingerprint
//! ([`RingRouter`]). After a reconnect, or when the revision to resume from was compacted away,
//! it reads the ring afresh. While etcd is down, or when a revision is not a valid ring, it keeps
//! serving the last good ring and says why ([`RingEvent`], [`RingWatcher::status`]). It follows
//! the cluster: its reads (linearizable) and its watch stream pass over a member that refuses
//! connections or stops answering with its port open (a frozen process: the idle stream is
//! reopened after [`WatchOptions::idle_reconnect`], 5 s, and an endpoint that does not answer
//! within the request timeout is passed over), and it reports the endpoint it follows
//! ([`RingEvent::Following`], [`WatchStatus::endpoint`]) and the revision it serves.
//! [`RingWatcher::wait_for_revision`] blocks until a given change is served.
//!
//! ### Consistency model
//!
//! - **What a client may see during a change.** Every client routes with one whole committed
//!   ring at a time, never a mix of two: a change is one transaction, delivered to a watcher as
//!   one revision, decoded whole (a state that does not check out is refused, not applied in
//!   part), and swapped in one atomic store; a reader's snapshot is one generation. Between the
//!   commit and a given watcher's swap, that watcher still routes with the previous ring, so for
//!   that short window two clients can route a key that the change moves to different nodes.
//!   A watcher never serves a ring older than one it served: reads are linearizable, a resumed
//!   watch starts after the last revision delivered, and a ring older than the one served (a
//!   store restored from an older backup) is reported ([`RingEvent::Stale`]) and not served:
//!   start a new watcher to follow a store rolled back on purpose.
//! - **How long until every watcher has it.** One watch delivery after the commit (etcd sends
//!   the event as the change is applied) plus the watcher's decode and build of the ring
//!   (O(members) JSON, plus what [`RouterSpec::build`](hashroute::RouterSpec::build) costs:
//!   O(V·N log(V·N)) for a ring). A watcher cut off from etcd keeps its last ring until it
//!   reaches etcd again, then reads afresh within [`WatchConfig::max_backoff`] (2 s by
//!   default); nothing commits without an etcd quorum, so a change reaches every connected
//!   watcher the same way. The `measure_propagation_and_read_cost` test in `tests/ring_live.rs`
//!   (`cargo test --release -p hashroute-etcd --test ring_live -- --ignored --nocapture`) prints
//!   the commit-to-swap time over 120 changes and a reader's route cost with and without swaps.
//! - **What a fingerprint proves.** Equal fingerprints mean equal routes for every key: the
//!   kernel's [`fingerprint`](hashroute::fingerprint()) hashes the exact structure of rings,
//!   Ketama, token rings and the bucket routers, and a fixed probe of 4096 keys and 1024 hashes
//!   for the others and for a ring with members down (which catches any realistic difference
//!   but is not a proof). While no member is down, a stored ring's fingerprint is the one
//!   `hashroute fingerprint` prints for the same nodes. Clients that print their revision and
//!   fingerprint ([`RingEvent::Serving`], `hashroute ring watch`) agree exactly when the
//!   fingerprints are equal; the revision says which change each one is at.
//!
//! ### Staging changes through member states
//!
//! - **Scale-out**: [`RingStore::join_staged`] stores the member as
//!   [`MemberState::Joining`] (a token ring allocates its tokens now) without routing to it;
//!   [`RingState::target_router`] is the ring once it is active, so
//!   `hashroute::migration::plan(&state.router()?, &state.target_router()?)` lists the ranges
//!   that will move to it. Copy them, then [`RingStore::mark_up`]: clients switch in one swap.
//! - **Scale-in**: [`RingStore::drain`] ([`MemberState::Draining`]) keeps the member routed
//!   while the staged view drops it; copy its ranges to their next owners, then
//!   [`RingStore::leave`].
//! - **Delayed removal**: [`RingStore::mark_down`] routes around a failed member at once
//!   ([`Failover`](hashroute::Failover): its keys go to the next live node of their preference
//!   list, no other key moves; [`RingStore::mark_up`] gives them back exactly). Remove it later
//!   with [`RingStore::leave`]: on a ring, Ketama or rendezvous the leave then moves nothing
//!   more; on a token ring the allocator hands its ranges to the least loaded members; jump and
//!   its family remove only their last member, so a middle one stays down.
//!
//! `examples/ring_fleet.rs` runs several client processes against one etcd and shows each
//! change reaching all of them.
//!
//! ## Why the JSON gateway and ureq
//!
//! etcd serves its v3 API over gRPC and, through its built-in gateway, as JSON over HTTP/1.1
//! (`/v3/kv/range`, `/v3/kv/put`, `/v3/kv/txn`, `/v3/kv/deleterange`, `/v3/kv/compaction`,
//! `/v3/watch`, `/v3/auth/authenticate`, `/v3/maintenance/status`; keys and values in base64,
//! revisions as strings). The gRPC client crates (`etcd-client`) compile etcd's protobuf files in
//! their build script and need `protoc` installed, and bring tokio and tonic: a fresh machine
//! with only the Rust toolchain could not build them. The gateway needs nothing but an HTTP
//! client. The `/v3/` paths are served by etcd 3.4 and later (Debian bookworm ships 3.4.23; 3.3
//! served `/v3beta/`, older ones `/v3alpha/`), so 3.4 is the oldest version supported.
//!
//! [`ureq`] 3 is a small, maintained, blocking HTTP/1.1 client. Without the `tls` feature the
//! crate builds from pure Rust with nothing but the Rust toolchain: 20 crates besides itself
//! (`cargo tree -e normal`), five of them `thiserror`'s derive macro, which hashroute builds
//! anyway. HTTP proxies from the environment are ignored: etcd is reached directly. `ureq`'s
//! `Agent::shutdown` interrupts a blocked watch read, so a watcher stops at once, and its
//! per-read timeout detects a silent dead connection. JSON is read with `serde_json::Value`
//! (no derive macros); every field is checked, so garbage is an [`Error::Malformed`], never a
//! panic.
//!
//! ## Features
//!
//! `tls` (off by default): `https://` endpoints verified against a CA file
//! ([`Options::ca_file`]), through rustls with the *ring* provider. *ring* compiles C and
//! assembly, so this feature needs a C compiler besides the Rust toolchain (and adds 12 crates,
//! plus `cc` to build *ring*); the default build needs neither. Client certificates are not
//! supported yet.
//!
//! ## Guarantees and limits
//!
//! - **Bounded time.** Each call tries each endpoint at most once, within
//!   [`Options::connect_timeout`] to connect and [`Options::request_timeout`] in all: with every
//!   endpoint down, a call fails within `endpoints × request timeout` (defaults 2 s and 5 s).
//!   [`Client::with_deadline`] cuts every call to the time left before a deadline.
//! - **Failover.** Calls start at the endpoint that answered last. A read moves on to the next
//!   endpoint on any transport failure or an "unavailable" answer; a write only when nothing was
//!   sent (connect failure): once a write went out, a timeout or a broken connection is reported
//!   as such ([`Error::Timeout`] with `outcome_unknown`, [`Error::OutcomeUnknown`]) rather than
//!   retried elsewhere, since it may have been applied; the next call then starts at the next
//!   endpoint. The ring layer settles such writes itself (see [Changes](#changes)).
//! - **Compare-and-swap.** [`Client::txn`] applies writes only if every [`Compare`] holds;
//!   [`Client::update`] and [`Retry::run`] loop read → compute → txn with a fixed bound on
//!   attempts and on sleep, so concurrent writers neither lose nor double a change.
//! - **Watches.** A [`Watcher`] delivers each revision's events once, in order, across
//!   reconnects (resuming from the last delivered revision + 1); a compacted start revision ends
//!   it with [`WatchEvent::Compacted`]. Outages are reported as [`WatchEvent::Disconnected`] /
//!   [`WatchEvent::Reconnected`].
//! - **Auth.** With [`Options::credentials`] the client authenticates, sends the token in the
//!   `Authorization` header, and authenticates again once when etcd says the token is missing or
//!   expired (simple tokens expire after `--auth-token-ttl`, and on an etcd restart).
//! - Errors are one line; server text in them is quoted with control characters escaped.

mod client;
mod error;
mod json;
mod kv;
mod retry;
mod ring;
#[cfg(feature = "tls")]
mod tls;
mod watch;

pub use client::{Client, Options, MAX_RESPONSE_BYTES};
pub use error::{Error, QUOTE_LIMIT};
pub use kv::{CmpOp, Compare, Deleted, KeyValue, Op, Range, Status, Target, TxnResult};
pub use retry::Retry;
pub use ring::{
    ChangeId, Committed, DecodeError, EventHandler, Member, MemberState, Records, RingError, RingEvent, RingRouter,
    RingState, RingStore, RingWatcher, WatchConfig, WatchStatus, CHANGE_LOG, FORMAT, MAX_CHANGE_ID_BYTES, MAX_LABELS,
    MAX_LABEL_BYTES, MAX_NAME_BYTES,
};
pub use watch::{Event, EventKind, WatchEvent, WatchOptions, Watcher, MAX_WATCH_MESSAGE_BYTES, WATCH_CHANNEL_CAPACITY};

/// Compile-time check that a client can be shared across threads.
#[allow(dead_code)]
fn assert_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<Client>();
    is::<Error>();
}

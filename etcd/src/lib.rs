//! # hashroute-etcd
//!
//! A small synchronous etcd v3 client, the transport under hashroute's shared rings: reads,
//! writes, compare-and-swap transactions with a bounded retry helper, and watches that survive
//! etcd restarts. No async runtime: calls block the calling thread for a bounded time, and a
//! watch runs on a plain thread.
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
//! - **Failover.** Calls start at the endpoint that answered last. A read moves on to the next
//!   endpoint on any transport failure or an "unavailable" answer; a write only when nothing was
//!   sent (connect failure): once a write went out, a timeout or a broken connection is reported
//!   as such ([`Error::Timeout`] with `outcome_unknown`, [`Error::OutcomeUnknown`]) rather than
//!   retried elsewhere, since it may have been applied.
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
    Committed, DecodeError, EventHandler, Member, MemberState, RingError, RingEvent, RingRouter, RingState, RingStore,
    RingWatcher, WatchConfig, WatchStatus, FORMAT, MAX_LABELS, MAX_LABEL_BYTES, MAX_NAME_BYTES,
};
pub use watch::{Event, EventKind, WatchEvent, WatchOptions, Watcher, MAX_WATCH_MESSAGE_BYTES, WATCH_CHANNEL_CAPACITY};

/// Compile-time check that a client can be shared across threads.
#[allow(dead_code)]
fn assert_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<Client>();
    is::<Error>();
}

//! Watching a prefix on a background thread that reconnects and resumes.
//!
//! The gateway serves a watch as one long POST whose answer is a stream of JSON lines. A plain
//! thread reads it with blocking I/O (no async runtime) and hands each line's events to a
//! bounded channel. When the stream breaks (etcd restarted, a proxy closed it, nothing arrived
//! for [`WatchOptions::idle_reconnect`]) the thread opens a new watch from the revision after
//! the last one it delivered, on whichever endpoint answers, backing off between failed
//! attempts: no event is lost or delivered twice across reconnects. A start revision that etcd
//! has compacted away is reported as [`WatchEvent::Compacted`], after which the caller must read
//! the state afresh ([`Client::get_prefix`]) and watch again from that read's revision + 1.

use std::io::{BufRead, BufReader, Read};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};

use crate::client::{decode_answer, server_error, Endpoint, Failure};
use crate::error::quote;
use crate::json::{self, b64, rev};
use crate::{Client, Error, KeyValue};

/// Longest line of a watch stream accepted, in bytes; a longer one is taken as garbage.
pub const MAX_WATCH_MESSAGE_BYTES: u64 = 64 << 20;

/// Events buffered for a consumer that is behind; past that the watcher stops reading etcd
/// until the consumer catches up.
pub const WATCH_CHANNEL_CAPACITY: usize = 1024;

/// Tuning of a [`Watcher`]; [`Default`] suits most uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchOptions {
    /// Reconnect when nothing arrived for this long (default 5 s). Detects connections that
    /// died silently and members that stopped answering with their port still open (a frozen
    /// or overloaded process): the reconnect passes over an endpoint that does not answer within
    /// the request timeout, so a watch moves off such a member within this plus the request
    /// timeout. An idle reconnect is cheap (one request, resumed from the next revision) and
    /// loses nothing.
    pub idle_reconnect: Duration,
    /// First wait after a failed attempt (default 50 ms), doubled per failure.
    pub first_backoff: Duration,
    /// Longest wait between failed attempts (default 2 s): how long after etcd is back a
    /// watcher may take to resume.
    pub max_backoff: Duration,
}

impl Default for WatchOptions {
    fn default() -> WatchOptions {
        WatchOptions {
            idle_reconnect: Duration::from_secs(5),
            first_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(2),
        }
    }
}

/// Whether an [`Event`] set or removed its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The key was created or changed.
    Put,
    /// The key was deleted.
    Delete,
}

/// One change of one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Put or delete.
    pub kind: EventKind,
    /// The key after the change; for a delete, the key and the deletion's `mod_revision`.
    pub kv: KeyValue,
}

/// What a [`Watcher`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchEvent {
    /// Changes of one or more whole revisions, in revision order (a transaction's writes arrive
    /// together, with the same `mod_revision`).
    Changes(Vec<Event>),
    /// The revision to resume from was compacted away (the watcher has ended): read the state
    /// again and start a new watch from that read's revision + 1.
    Compacted {
        /// etcd's compaction revision.
        compact_revision: i64,
    },
    /// The stream broke and could not be reopened at once; the watcher keeps retrying. Reported
    /// once per outage.
    Disconnected(Error),
    /// The watch is open again after [`WatchEvent::Disconnected`], resumed from `resumed_at`
    /// without losing an event.
    Reconnected {
        /// The first revision the new stream delivers.
        resumed_at: i64,
    },
    /// A failure retrying cannot fix (credentials refused or missing, permission denied); the
    /// watcher has ended.
    Failed(Error),
}

/// A running watch: events arrive on [`Watcher::events`]. Dropping it (or [`Watcher::stop`])
/// closes the stream and joins the thread within the connect timeout.
#[derive(Debug)]
pub struct Watcher {
    rx: Receiver<WatchEvent>,
    shared: Arc<Shared>,
    agent: ureq::Agent,
    wake: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Debug)]
struct Shared {
    stopped: AtomicBool,
    next: AtomicI64,
    /// The endpoint the open stream reads from (empty while none is open).
    endpoint: Mutex<String>,
}

impl Client {
    /// [`Client::watch_with`] with [`WatchOptions::default`].
    ///
    /// # Errors
    /// As [`Client::watch_with`].
    pub fn watch(&self, prefix: &[u8], start_revision: i64) -> Result<Watcher, Error> {
        self.watch_with(prefix, start_revision, WatchOptions::default())
    }

    /// Watches every key starting with `prefix` from `start_revision` (inclusive) on a new
    /// thread; 0 means "changes after now" (the current revision is read first, so nothing
    /// committed after this call returns is missed). Typical use: `let r =
    /// client.get_prefix(p)?; client.watch(p, r.revision + 1)`.
    ///
    /// Costs a thread and one connection per watcher, and one request each `idle_reconnect`
    /// while nothing changes.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a negative revision or a zero `idle_reconnect`; with
    /// `start_revision == 0`, the errors of [`Client::status`]. Later failures arrive as events.
    pub fn watch_with(&self, prefix: &[u8], start_revision: i64, options: WatchOptions) -> Result<Watcher, Error> {
        if start_revision < 0 {
            return Err(Error::InvalidArgument(format!("watch start revision {start_revision} is negative")));
        }
        if options.idle_reconnect.is_zero() {
            return Err(Error::InvalidArgument("watch idle_reconnect must be above 0".into()));
        }
        let start = if start_revision == 0 { self.status()?.revision + 1 } else { start_revision };
        let (tx, rx) = mpsc::sync_channel(WATCH_CHANNEL_CAPACITY);
        let (wake, sleeper) = mpsc::sync_channel(1);
        let shared = Arc::new(Shared {
            stopped: AtomicBool::new(false),
            next: AtomicI64::new(start),
            endpoint: Mutex::new(String::new()),
        });
        let agent = self.inner.agent_for(Some(options.idle_reconnect));
        let mut stream = Stream {
            client: self.clone(),
            agent: agent.clone(),
            body: create_request(prefix, start),
            tx,
            sleeper,
            shared: shared.clone(),
            options,
        };
        let thread = std::thread::Builder::new()
            .name("etcd-watch".into())
            .spawn(move || stream.run())
            .map_err(|e| Error::InvalidArgument(format!("cannot start the watch thread: {e}")))?;
        Ok(Watcher { rx, shared, agent, wake: Some(wake), thread: Some(thread) })
    }
}

impl Watcher {
    /// The events, in order: block on `recv`, poll with `try_recv`, or wait with `recv_timeout`.
    /// Disconnected once the watcher has ended (after [`WatchEvent::Compacted`] or
    /// [`WatchEvent::Failed`]).
    pub fn events(&self) -> &Receiver<WatchEvent> {
        &self.rx
    }

    /// The revision a reconnect would resume from: one past the last revision delivered.
    pub fn next_revision(&self) -> i64 {
        self.shared.next.load(Ordering::Acquire)
    }

    /// The endpoint (as given to the client) whose stream the watch reads now; `None` while no
    /// stream is open (connecting, backing off after a failure).
    pub fn endpoint(&self) -> Option<String> {
        let e = self.shared.endpoint.lock().unwrap_or_else(|p| p.into_inner());
        (!e.is_empty()).then(|| e.clone())
    }

    /// Stops the watch: closes its connection and joins the thread (within the connect and
    /// request timeouts, when the thread was authenticating or connecting). Same as dropping.
    pub fn stop(self) {}

    fn shutdown(&mut self) {
        self.shared.stopped.store(true, Ordering::Release);
        // Dropping the real receiver fails a send blocked on a full channel.
        let (_, dummy) = mpsc::sync_channel(0);
        drop(std::mem::replace(&mut self.rx, dummy));
        // Dropping the sender wakes a backoff wait.
        self.wake.take();
        // Interrupts a read blocked on the stream.
        self.agent.clone().shutdown();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl Iterator for Watcher {
    type Item = WatchEvent;

    /// Blocks for the next event; `None` once the watcher has ended.
    fn next(&mut self) -> Option<WatchEvent> {
        self.rx.recv().ok()
    }
}

fn create_request(prefix: &[u8], start: i64) -> Value {
    let key: &[u8] = if prefix.is_empty() { &[0] } else { prefix };
    json!({ "create_request": {
        "key": b64(key),
        "range_end": b64(&json::prefix_end(prefix)),
        "start_revision": rev(start),
        "progress_notify": true,
    }})
}

/// How one stream ended.
enum End {
    /// Nothing arrived for `idle_reconnect` on a healthy stream: reopen at once.
    Idle,
    /// Stopped, or the consumer went away.
    Stopped,
    /// The start revision is compacted.
    Compacted(i64),
    /// Retry after a backoff.
    Retry(Error),
    /// Give up.
    Fatal(Error),
}

/// The watch thread's state.
struct Stream {
    client: Client,
    agent: ureq::Agent,
    body: Value,
    tx: SyncSender<WatchEvent>,
    sleeper: Receiver<()>,
    shared: Arc<Shared>,
    options: WatchOptions,
}

impl Stream {
    fn stopped(&self) -> bool {
        self.shared.stopped.load(Ordering::Acquire)
    }

    /// Opens streams until stopped, compacted or failed for good. Each turn either waits a
    /// backoff or follows an idle period, so the loop never spins.
    fn run(&mut self) {
        let mut failing = false;
        let mut backoff = self.options.first_backoff;
        loop {
            if self.stopped() {
                return;
            }
            let end = self.stream_once(&mut failing);
            self.set_endpoint("");
            let final_event = match end {
                End::Stopped => return,
                End::Idle => continue,
                End::Compacted(c) => WatchEvent::Compacted { compact_revision: c },
                End::Fatal(e) => WatchEvent::Failed(e),
                End::Retry(e) => {
                    if !failing {
                        failing = true;
                        backoff = self.options.first_backoff;
                        if self.tx.send(WatchEvent::Disconnected(e)).is_err() {
                            return;
                        }
                    }
                    match self.sleeper.recv_timeout(backoff) {
                        Err(RecvTimeoutError::Timeout) => {}
                        _ => return,
                    }
                    backoff = (backoff * 2).min(self.options.max_backoff.max(self.options.first_backoff));
                    continue;
                }
            };
            let _ = self.tx.send(final_event);
            return;
        }
    }

    /// One watch request, read until it ends.
    fn stream_once(&mut self, failing: &mut bool) -> End {
        let next = self.shared.next.load(Ordering::Acquire);
        self.body["create_request"]["start_revision"] = rev(next);
        let token = match self.client.token() {
            Ok(t) => t,
            Err(e) => return self.triage(e, &None),
        };
        let (ep, resp) = match self.open(token.as_deref()) {
            Ok(x) => x,
            Err(e) => return self.triage(e, &token),
        };
        let reader = BufReader::new(resp.into_body().into_reader());
        self.read_stream(&ep, reader, failing, &token)
    }

    /// Sends the watch request to the first endpoint that takes it, starting at the client's
    /// preferred one: an endpoint that refuses the connection, does not answer within the request
    /// timeout (a frozen member keeps its TCP port open) or drops the connection is passed over
    /// for the next (a watch is a read: sending it twice changes nothing). An HTTP error is
    /// decoded and returned.
    fn open(&self, token: Option<&str>) -> Result<(Endpoint, ureq::http::Response<ureq::Body>), Error> {
        let inner = &self.client.inner;
        let body = self.body.to_string().into_bytes();
        let mut last_connect = String::new();
        let mut last_other = None;
        for (index, ep) in inner.order() {
            if self.stopped() {
                break;
            }
            match inner.send(&self.agent, ep, "/v3/watch", &body, token) {
                Ok(mut resp) if resp.status().as_u16() != 200 => {
                    let status = resp.status().as_u16();
                    let bytes = resp.body_mut().with_config().limit(64 << 10).read_to_vec().unwrap_or_default();
                    return Err(match decode_answer(&ep.name, status, &bytes, inner.user()) {
                        Err(e) => e,
                        Ok(_) => Error::Http { endpoint: ep.name.clone(), status, body: String::new() },
                    });
                }
                Ok(resp) => {
                    inner.prefer(index);
                    self.set_endpoint(&ep.name);
                    return Ok((ep.clone(), resp));
                }
                Err(Failure::Connect(cause)) => last_connect = format!("{}: {cause}", ep.name),
                Err(f) => last_other = Some(failure_error(ep, f, inner.options.request_timeout)),
            }
        }
        Err(last_other.unwrap_or_else(|| Error::Unreachable { endpoints: inner.endpoint_list(), cause: last_connect }))
    }

    fn set_endpoint(&self, name: &str) {
        let mut e = self.shared.endpoint.lock().unwrap_or_else(|p| p.into_inner());
        name.clone_into(&mut e);
    }

    /// Sorts an error into retry (with a fresh token when etcd asked for one) or give up.
    fn triage(&self, e: Error, token: &Option<String>) -> End {
        if self.stopped() {
            return End::Stopped;
        }
        match e {
            Error::AuthRequired { .. } if self.client.inner.options.credentials.is_some() => {
                self.client.forget_token(token);
                End::Retry(e)
            }
            Error::AuthRequired { .. }
            | Error::AuthFailed { .. }
            | Error::PermissionDenied { .. }
            | Error::InvalidArgument(_)
            | Error::Tls(_) => End::Fatal(e),
            e => End::Retry(e),
        }
    }

    fn read_stream(
        &mut self,
        ep: &Endpoint,
        mut reader: BufReader<impl Read>,
        failing: &mut bool,
        token: &Option<String>,
    ) -> End {
        let mut created = false;
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = (&mut reader).take(MAX_WATCH_MESSAGE_BYTES).read_until(b'\n', &mut line);
            if self.stopped() {
                return End::Stopped;
            }
            match read {
                Ok(0) => return self.dropped(ep, "the watch stream ended".into(), token),
                Ok(n) if line.last() != Some(&b'\n') => {
                    let cause = if n as u64 >= MAX_WATCH_MESSAGE_BYTES {
                        format!("watch message over {MAX_WATCH_MESSAGE_BYTES} bytes")
                    } else {
                        "the watch stream ended inside a message".into()
                    };
                    return self.dropped(ep, cause, token);
                }
                Ok(_) => {}
                Err(e) if created && is_idle_timeout(&e) => return End::Idle,
                Err(e) => {
                    return self.dropped(ep, quote(&e.to_string()), token);
                }
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match self.message(ep, &line, &mut created, failing) {
                Ok(None) => {}
                Ok(Some(end)) => return end,
                Err(e) => return self.triage(e, token),
            }
        }
    }

    fn dropped(&self, ep: &Endpoint, cause: String, token: &Option<String>) -> End {
        self.triage(Error::Disconnected { endpoint: ep.name.clone(), cause }, token)
    }

    /// Handles one line of the stream: `Some(end)` when the stream is over.
    fn message(
        &mut self,
        ep: &Endpoint,
        line: &[u8],
        created: &mut bool,
        failing: &mut bool,
    ) -> Result<Option<End>, Error> {
        let malformed = |reason: String| Error::Malformed { endpoint: ep.name.clone(), reason };
        let v: Value = serde_json::from_slice(line)
            .map_err(|e| malformed(format!("watch line is not JSON ({e}): {:?}", crate::error::quote_bytes(line))))?;
        if let Some((code, message)) = json::grpc_error(&v) {
            return Err(server_error(&ep.name, code, &message, self.client.inner.user()));
        }
        let result = v
            .get("result")
            .ok_or_else(|| malformed(format!("watch line without \"result\": {}", json::excerpt(&v))))?;
        json::object(result, "\"result\"").map_err(malformed)?;
        if json::boolean(result, "canceled").map_err(malformed)? {
            let compact = json::int(result, "compact_revision").map_err(malformed)?;
            if compact > 0 {
                return Ok(Some(End::Compacted(compact)));
            }
            let reason = json::string(result, "cancel_reason").map_err(malformed)?;
            return Err(cancel_error(&ep.name, reason, self.client.inner.user()));
        }
        if json::boolean(result, "created").map_err(malformed)? && !*created {
            *created = true;
            if *failing {
                *failing = false;
                let resumed_at = self.shared.next.load(Ordering::Acquire);
                if self.tx.send(WatchEvent::Reconnected { resumed_at }).is_err() {
                    return Ok(Some(End::Stopped));
                }
            }
        }
        let events = parse_events(result).map_err(malformed)?;
        let next = self.shared.next.load(Ordering::Acquire);
        // A resumed stream starts at `next`; anything older would be a duplicate.
        let events: Vec<Event> = events.into_iter().filter(|e| e.kv.mod_revision >= next).collect();
        let Some(last) = events.last().map(|e| e.kv.mod_revision) else { return Ok(None) };
        // Advanced before the hand-over, so a consumer holding the events sees the new value;
        // if the hand-over fails the watcher ends anyway.
        self.shared.next.store(last + 1, Ordering::Release);
        if self.tx.send(WatchEvent::Changes(events)).is_err() {
            return Ok(Some(End::Stopped));
        }
        Ok(None)
    }
}

/// Whether a read error is the per-read timeout (ureq wraps its own errors in `io::Error`).
fn is_idle_timeout(e: &std::io::Error) -> bool {
    let inner = e.get_ref().and_then(|x| x.downcast_ref::<ureq::Error>());
    matches!(inner, Some(ureq::Error::Timeout(ureq::Timeout::PerRead))) || e.kind() == std::io::ErrorKind::TimedOut
}

/// The events of one watch response.
fn parse_events(result: &Value) -> Result<Vec<Event>, String> {
    json::array(result, "events")?
        .iter()
        .map(|ev| {
            let kind = match ev.get("type") {
                None | Some(Value::Null) => EventKind::Put,
                Some(Value::String(s)) if s == "PUT" => EventKind::Put,
                Some(Value::String(s)) if s == "DELETE" => EventKind::Delete,
                Some(Value::Number(n)) if n.as_u64() == Some(0) => EventKind::Put,
                Some(Value::Number(n)) if n.as_u64() == Some(1) => EventKind::Delete,
                Some(other) => return Err(format!("unknown event type {}", json::excerpt(other))),
            };
            let kv = ev.get("kv").ok_or_else(|| format!("event without \"kv\": {}", json::excerpt(ev)))?;
            Ok(Event { kind, kv: json::key_value(kv)? })
        })
        .collect()
}

/// A cancel reason (`rpc error: code = X desc = ...`) as an [`Error`].
fn cancel_error(endpoint: &str, reason: &str, user: &str) -> Error {
    let code = if reason.contains("Unauthenticated") {
        16
    } else if reason.contains("PermissionDenied") {
        7
    } else {
        0
    };
    server_error(endpoint, code, reason, user)
}

fn failure_error(ep: &Endpoint, f: Failure, timeout: Duration) -> Error {
    match f {
        Failure::Connect(cause) => Error::Unreachable { endpoints: ep.name.clone(), cause },
        Failure::Timeout => Error::Timeout { endpoint: ep.name.clone(), after: timeout, outcome_unknown: false },
        Failure::Broken(cause) => Error::Disconnected { endpoint: ep.name.clone(), cause: quote(&cause) },
        Failure::Answer(e) => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_parse_and_garbage_is_refused() {
        let r = json!({"events": [
            {"kv": {"key": "YQ==", "value": "MQ==", "mod_revision": "5", "create_revision": "5", "version": "1"}},
            {"type": "DELETE", "kv": {"key": "Yg==", "mod_revision": "6"}},
        ]});
        let evs = parse_events(&r).unwrap();
        assert_eq!(evs.len(), 2);
        assert_eq!(evs[0].kind, EventKind::Put);
        assert_eq!(evs[0].kv.value, b"1");
        assert_eq!(evs[1].kind, EventKind::Delete);
        assert_eq!(evs[1].kv.mod_revision, 6);
        for bad in [
            json!({"events": [{"type": "MOVE", "kv": {}}]}),
            json!({"events": [{"type": "PUT"}]}),
            json!({"events": [{"kv": {"key": "@@"}}]}),
            json!({"events": {"kv": 1}}),
            json!({"events": [{"kv": {"mod_revision": "x"}}]}),
        ] {
            assert!(parse_events(&bad).is_err(), "{bad}");
        }
        assert!(parse_events(&json!({})).unwrap().is_empty());
    }

    #[test]
    fn cancel_reasons_map_to_auth_errors() {
        let e = cancel_error("h:1", "rpc error: code = InvalidArgument desc = etcdserver: user name is empty", "");
        assert!(matches!(e, Error::AuthRequired { .. }), "{e:?}");
        let e = cancel_error("h:1", "rpc error: code = Unauthenticated desc = etcdserver: invalid auth token", "u");
        assert!(matches!(e, Error::AuthRequired { .. }), "{e:?}");
        let e = cancel_error("h:1", "rpc error: code = PermissionDenied desc = etcdserver: permission denied", "u");
        assert!(matches!(e, Error::PermissionDenied { .. }), "{e:?}");
        assert!(matches!(cancel_error("h:1", "something else", ""), Error::Server { code: 0, .. }));
    }

    #[test]
    fn create_request_covers_the_prefix() {
        let v = create_request(b"ring/", 7);
        assert_eq!(v["create_request"]["key"], "cmluZy8=");
        assert_eq!(v["create_request"]["range_end"], "cmluZzA=");
        assert_eq!(v["create_request"]["start_revision"], "7");
    }
}

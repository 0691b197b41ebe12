//! [`RingWatcher`]: a stored ring served to readers through a [`SharedRouter`], following every
//! change on a background thread.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hashroute::fingerprint::Fingerprint;
use hashroute::shared::Snapshot;
use hashroute::SharedRouter;

use super::error::{DecodeError, RingError};
use super::router::RingRouter;
use super::store::{decode_range, RingStore};
use crate::{Error, EventKind, KeyValue, WatchEvent, WatchOptions};

/// How often the watch thread looks at its stop flag while nothing arrives. Events are handled
/// as they arrive, so this bounds only how long stopping takes.
const POLL: Duration = Duration::from_millis(50);

/// What a [`RingWatcher`] reports to [`WatchConfig::on_event`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RingEvent {
    /// A new ring is served (readers see it from now on).
    Serving {
        /// The etcd revision of the ring's last change.
        revision: i64,
        /// Its route fingerprint.
        fingerprint: Fingerprint,
    },
    /// The stored ring is valid but has no routed member (new, or only staged joins): nothing
    /// to serve yet, or the last ring is kept.
    Unroutable {
        /// The revision of that state.
        revision: i64,
    },
    /// The stored state at `revision` is not a valid ring; the last good ring is still served.
    Refused {
        /// The newest revision of the keys read.
        revision: i64,
        /// Why.
        error: DecodeError,
    },
    /// etcd cannot be reached or the watch broke; the last ring is still served and the
    /// watcher keeps trying (reported once per outage).
    Disconnected(Error),
    /// The watch is open on `endpoint` (reported when it starts and whenever it moves to another
    /// endpoint: a member that stopped answering, a reconnect after an outage).
    Following {
        /// The endpoint, as given to the client.
        endpoint: String,
        /// The revision of the ring served when it moved.
        revision: i64,
    },
    /// A read returned a ring older than the one served (etcd restored from an older backup,
    /// or a member that lost its data): it is not served, the newer ring stays. Start a new
    /// watcher to follow a store that was rolled back on purpose.
    Stale {
        /// The revision of the older ring.
        revision: i64,
        /// The revision served.
        served: i64,
    },
    /// The watcher read the ring afresh: after a reconnect (etcd may have restarted or been
    /// restored) or because the revision to resume from was compacted.
    Resynced {
        /// The store revision of the fresh read.
        store_revision: i64,
        /// Whether a compaction caused it.
        compacted: bool,
    },
}

/// A callback for every [`RingEvent`], run on the watch thread after the event took effect.
pub type EventHandler = Box<dyn FnMut(&RingEvent) + Send>;

/// Tuning of a [`RingWatcher`].
pub struct WatchConfig {
    /// The underlying etcd watch (idle reconnect, its backoff).
    pub watch: WatchOptions,
    /// First wait after a failed read (default 50 ms), doubled per failure.
    pub first_backoff: Duration,
    /// Longest wait between failed reads (default 2 s): how long after etcd is back a watcher
    /// may take to resume.
    pub max_backoff: Duration,
    on_event: Option<EventHandler>,
}

impl Default for WatchConfig {
    /// [`WatchOptions::default`] (an idle stream reopened after 5 s, which also moves it off a
    /// member that stopped answering), 50 ms to 2 s backoff between failed reads.
    fn default() -> WatchConfig {
        WatchConfig {
            watch: WatchOptions::default(),
            first_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(2),
            on_event: None,
        }
    }
}

impl fmt::Debug for WatchConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatchConfig")
            .field("watch", &self.watch)
            .field("first_backoff", &self.first_backoff)
            .field("max_backoff", &self.max_backoff)
            .field("on_event", &self.on_event.is_some())
            .finish()
    }
}

impl WatchConfig {
    /// Calls `handler` with every event, on the watch thread, after it took effect (a
    /// [`RingEvent::Serving`] ring is already what readers get). The first event (the ring read
    /// by [`RingWatcher::start`]) runs on the thread that called `start`. A slow handler delays
    /// the next swap, never a reader.
    #[must_use]
    pub fn on_event(mut self, handler: impl FnMut(&RingEvent) + Send + 'static) -> WatchConfig {
        self.on_event = Some(Box::new(handler));
        self
    }
}

/// What a watcher serves, for [`RingWatcher::status`].
#[derive(Debug, Clone, PartialEq)]
pub struct WatchStatus {
    /// The revision of the ring state applied last (0 before any).
    pub revision: i64,
    /// The fingerprint of the ring served (`None` while nothing is routable).
    pub fingerprint: Option<Fingerprint>,
    /// Whether the watch is connected (false from a failure until the next successful read).
    pub connected: bool,
    /// The last failure or refused state since the last ring served, as one line.
    pub last_error: Option<String>,
    /// The endpoint the watch stream is open on (`None` while reconnecting).
    pub endpoint: Option<String>,
}

struct Shared {
    router: OnceLock<Arc<SharedRouter<RingRouter>>>,
    status: Mutex<WatchStatus>,
    changed: Condvar,
    stopped: AtomicBool,
}

impl Shared {
    fn status(&self) -> MutexGuard<'_, WatchStatus> {
        // Nothing panics while holding it; a poisoned lock still holds a consistent status.
        self.status.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Serves a stored ring to readers and follows every change.
///
/// A background thread reads the ring, watches its prefix from the revision after the read, and
/// applies each change: it decodes the keys as of that revision, builds the router and swaps it
/// into a [`SharedRouter`] (readers never wait: a load is a few atomic operations). It reads the
/// ring afresh after a reconnect or when the revision to resume from was compacted. When etcd is
/// down, or a revision is not a valid ring (garbage written by hand), it keeps serving the last
/// good ring and reports the failure ([`RingEvent`], [`RingWatcher::status`]).
///
/// Costs a thread, one watch connection, and per change: the decode of the whole ring and the
/// build of its router (what [`hashroute::RouterSpec::build`] costs) plus its fingerprint.
/// Dropping it stops the thread (within about 50 ms plus the client's connect timeout).
pub struct RingWatcher {
    shared: Arc<Shared>,
    wake: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl fmt::Debug for RingWatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RingWatcher").field("status", &*self.shared.status()).finish()
    }
}

impl RingWatcher {
    /// Reads the ring under `store`'s prefix (on this thread, so a failure is returned here),
    /// serves it, and starts following its changes on a new thread.
    ///
    /// # Errors
    /// etcd errors of the first read; [`RingError::Decode`] when nothing valid is stored there
    /// ([`DecodeError::NoRing`], garbage). A ring without routed member is not an error:
    /// [`RingWatcher::router`] is `None` until one is routed.
    pub fn start(store: RingStore, config: WatchConfig) -> Result<RingWatcher, RingError> {
        let shared = Arc::new(Shared {
            router: OnceLock::new(),
            status: Mutex::new(WatchStatus {
                revision: 0,
                fingerprint: None,
                connected: true,
                last_error: None,
                endpoint: None,
            }),
            changed: Condvar::new(),
            stopped: AtomicBool::new(false),
        });
        let (wake, sleeper) = mpsc::sync_channel(1);
        let mut worker = Worker {
            store,
            shared: shared.clone(),
            config,
            sleeper,
            map: BTreeMap::new(),
            compacted: false,
            endpoint: None,
        };
        let range = worker.store.read_range(&worker.store.bounded_client())?;
        worker.map = range.kvs.into_iter().map(|kv| (kv.key.clone(), kv)).collect();
        decode_range(worker.store.keys(), worker.map.values())?;
        worker.apply();
        let thread = std::thread::Builder::new()
            .name("hashroute-ring-watch".into())
            .spawn(move || worker.run(range.revision + 1))
            .map_err(|e| RingError::Etcd(Error::InvalidArgument(format!("cannot start the watch thread: {e}"))))?;
        Ok(RingWatcher { shared, wake: Some(wake), thread: Some(thread) })
    }

    /// The shared router readers route with (`None` while the ring has no routed member). Clone
    /// the `Arc` into every reader thread: each `load` / `route` is lock-free and sees the
    /// newest ring the watcher applied.
    pub fn router(&self) -> Option<Arc<SharedRouter<RingRouter>>> {
        self.shared.router.get().cloned()
    }

    /// A snapshot of the ring served now: routes, revision and fingerprint that belong together.
    pub fn load(&self) -> Option<Snapshot<RingRouter>> {
        self.shared.router.get().map(|r| r.load())
    }

    /// The revision of the ring state applied last (0 before any).
    pub fn revision(&self) -> i64 {
        self.shared.status().revision
    }

    /// The fingerprint of the ring served.
    pub fn fingerprint(&self) -> Option<Fingerprint> {
        self.shared.status().fingerprint
    }

    /// Revision, fingerprint, connection and last failure.
    pub fn status(&self) -> WatchStatus {
        self.shared.status().clone()
    }

    /// Blocks until the watcher has applied a ring state of revision `revision` or later (the
    /// [`Committed::revision`](crate::Committed) of a change), or `timeout` passed. Readers are
    /// not involved: this waits on a condition variable the watch thread signals after each
    /// swap. Returns `Ok(applied revision)`, or `Err(applied revision)` on timeout.
    ///
    /// # Errors
    /// `Err(revision applied so far)` when `timeout` passed first.
    pub fn wait_for_revision(&self, revision: i64, timeout: Duration) -> Result<i64, i64> {
        let deadline = Instant::now() + timeout;
        let mut status = self.shared.status();
        while status.revision < revision {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(status.revision);
            }
            status = self.shared.changed.wait_timeout(status, left).unwrap_or_else(|p| p.into_inner()).0;
        }
        Ok(status.revision)
    }

    /// Blocks until a routable ring is served or `timeout` passed.
    pub fn wait_for_router(&self, timeout: Duration) -> Option<Arc<SharedRouter<RingRouter>>> {
        let deadline = Instant::now() + timeout;
        let mut status = self.shared.status();
        loop {
            if let Some(r) = self.shared.router.get() {
                return Some(r.clone());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            status = self.shared.changed.wait_timeout(status, left).unwrap_or_else(|p| p.into_inner()).0;
        }
    }

    /// Stops the thread; same as dropping.
    pub fn stop(self) {}
}

impl Drop for RingWatcher {
    fn drop(&mut self) {
        self.shared.stopped.store(true, Ordering::Release);
        // Dropping the sender wakes a backoff sleep.
        self.wake.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// How following a watch ended.
enum Follow {
    Stop,
    Resync { compacted: bool },
    Failed(Error),
}

struct Worker {
    store: RingStore,
    shared: Arc<Shared>,
    config: WatchConfig,
    sleeper: Receiver<()>,
    /// The keys under the prefix as of the last revision applied.
    map: BTreeMap<Vec<u8>, KeyValue>,
    /// Whether the pending fresh read follows a compaction (for its event).
    compacted: bool,
    /// The endpoint reported last in [`RingEvent::Following`].
    endpoint: Option<String>,
}

impl Worker {
    fn stopped(&self) -> bool {
        self.shared.stopped.load(Ordering::Acquire)
    }

    /// Follows from `from`, then alternates fresh reads and watches until stopped. Every turn
    /// either blocks on the watch, or sleeps a backoff after a failure: the loop never spins.
    fn run(mut self, from: i64) {
        let mut backoff = self.config.first_backoff;
        let max_backoff = self.config.max_backoff.max(self.config.first_backoff);
        let mut next = Some(from);
        while !self.stopped() {
            let from = match next.take() {
                Some(from) => Ok(from),
                None => self.resync().map(|revision| revision + 1),
            };
            let failure = match from.map(|from| self.follow(from)) {
                Ok(Follow::Stop) => return,
                Ok(Follow::Resync { compacted }) => {
                    // The watch was healthy: the next read starts with a short backoff again.
                    backoff = self.config.first_backoff;
                    self.compacted = compacted;
                    continue;
                }
                Ok(Follow::Failed(e)) | Err(e) => e,
            };
            self.disconnected(failure);
            if self.sleep(backoff) {
                return;
            }
            backoff = (backoff * 2).min(max_backoff);
        }
    }

    /// Reads the ring afresh and applies it; the store revision of the read.
    fn resync(&mut self) -> Result<i64, Error> {
        let range = self.store.client().get_prefix(self.store.keys().root())?;
        self.map = range.kvs.into_iter().map(|kv| (kv.key.clone(), kv)).collect();
        self.shared.status().connected = true;
        let compacted = std::mem::take(&mut self.compacted);
        self.emit(&RingEvent::Resynced { store_revision: range.revision, compacted });
        self.apply();
        Ok(range.revision)
    }

    /// Watches from `from`, applying each batch of changes, until the watch needs a fresh read
    /// or the watcher stops.
    fn follow(&mut self, from: i64) -> Follow {
        let keys = self.store.keys().clone();
        let watch = match self.store.client().watch_with(keys.root(), from, self.config.watch) {
            Ok(w) => w,
            Err(e) => return Follow::Failed(e),
        };
        loop {
            if self.stopped() {
                return Follow::Stop;
            }
            self.note_endpoint(watch.endpoint());
            match watch.events().recv_timeout(POLL) {
                Ok(WatchEvent::Changes(events)) => {
                    for ev in events {
                        match ev.kind {
                            EventKind::Put => {
                                self.map.insert(ev.kv.key.clone(), ev.kv);
                            }
                            EventKind::Delete => {
                                self.map.remove(&ev.kv.key);
                            }
                        }
                    }
                    self.apply();
                }
                Ok(WatchEvent::Compacted { .. }) => return Follow::Resync { compacted: true },
                Ok(WatchEvent::Disconnected(e)) => self.disconnected(e),
                // The watch resumed without loss, but etcd may have been restored from a backup
                // or replaced: a fresh read is the truth.
                Ok(WatchEvent::Reconnected { .. }) => return Follow::Resync { compacted: false },
                Ok(WatchEvent::Failed(e)) => return Follow::Failed(e),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Follow::Failed(Error::Disconnected {
                        endpoint: self.store.client().endpoints().join(","),
                        cause: "the watch ended".into(),
                    })
                }
            }
        }
    }

    /// Records the stream's endpoint in the status and reports a move to a new one.
    fn note_endpoint(&mut self, endpoint: Option<String>) {
        let revision = {
            let mut status = self.shared.status();
            if status.endpoint == endpoint {
                return;
            }
            status.endpoint.clone_from(&endpoint);
            status.revision
        };
        if let Some(e) = endpoint {
            if self.endpoint.as_ref() != Some(&e) {
                self.endpoint = Some(e.clone());
                self.emit(&RingEvent::Following { endpoint: e, revision });
            }
        }
    }

    /// Decodes the keys held and serves the ring if it is new and valid; otherwise keeps the
    /// last good one and reports why. A ring older than the one served is never served.
    fn apply(&mut self) {
        let state = match decode_range(self.store.keys(), self.map.values()) {
            Ok(state) => state,
            Err(error) => {
                let revision = self.map.values().map(|kv| kv.mod_revision).max().unwrap_or(0);
                return self.refuse(revision, error);
            }
        };
        let revision = state.revision();
        let served = {
            let mut status = self.shared.status();
            if revision == status.revision {
                // Served already (a fresh read, or garbage removed again): nothing to swap.
                status.last_error = None;
                return;
            }
            status.revision
        };
        if revision < served {
            let line = format!("revision {revision} is older than the ring served (revision {served}): not served");
            let mut status = self.shared.status();
            if status.last_error.as_deref() == Some(line.as_str()) {
                return;
            }
            status.last_error = Some(line);
            drop(status);
            return self.emit(&RingEvent::Stale { revision, served });
        }
        match state.router() {
            Ok(router) => self.serve(router),
            Err(DecodeError::Empty) if self.shared.router.get().is_none() => {
                self.shared.status().revision = revision;
                self.shared.changed.notify_all();
                self.emit(&RingEvent::Unroutable { revision });
            }
            Err(DecodeError::Empty) => self.emit(&RingEvent::Unroutable { revision }),
            Err(error) => self.refuse(revision, error),
        }
    }

    fn serve(&mut self, router: RingRouter) {
        let (revision, fingerprint) = (router.revision(), router.fingerprint());
        match self.shared.router.get() {
            Some(shared) => {
                shared.store(router);
            }
            None => {
                let _ = self.shared.router.set(Arc::new(SharedRouter::new(router)));
            }
        }
        {
            let mut status = self.shared.status();
            status.revision = revision;
            status.fingerprint = Some(fingerprint);
            status.last_error = None;
            status.connected = true;
        }
        self.shared.changed.notify_all();
        self.emit(&RingEvent::Serving { revision, fingerprint });
    }

    fn refuse(&mut self, revision: i64, error: DecodeError) {
        let line = format!("revision {revision} refused: {error}");
        {
            let mut status = self.shared.status();
            if status.last_error.as_deref() == Some(line.as_str()) {
                return;
            }
            status.last_error = Some(line);
        }
        self.emit(&RingEvent::Refused { revision, error });
    }

    fn disconnected(&mut self, error: Error) {
        {
            let mut status = self.shared.status();
            let was_connected = std::mem::replace(&mut status.connected, false);
            status.last_error = Some(error.to_string());
            if !was_connected {
                return;
            }
        }
        self.emit(&RingEvent::Disconnected(error));
    }

    fn emit(&mut self, event: &RingEvent) {
        if let Some(handler) = self.config.on_event.as_mut() {
            handler(event);
        }
    }

    /// Sleeps `d` unless stopped first; true when stopped.
    fn sleep(&self, d: Duration) -> bool {
        match self.sleeper.recv_timeout(d) {
            Err(RecvTimeoutError::Timeout) => self.stopped(),
            _ => true,
        }
    }
}

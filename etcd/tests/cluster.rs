//! Rings in a real three-member etcd cluster (scripts/install_etcd.sh) through etcd's own
//! failures: a leader killed under concurrent writers, a frozen member (SIGSTOP), a member
//! restarted with its data, a member removed and added back, quorum lost and regained. Each test
//! starts its own cluster on free loopback ports (tests/support/cluster.rs) and kills every
//! member by its pid when done. Without `etcd` the tests print `SKIPPED: etcd not installed` and
//! pass, unless `CI` is set.
//!
//! Every wait is bounded by a deadline and polls a condition; no test asserts a speed, only the
//! bounds the library promises (an operation ends within its time bound).

mod support;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hashroute::{Algorithm, Node, RouterSpec};
use hashroute_etcd::{
    ChangeId, Client, Committed, MemberState, Options, Retry, RingError, RingEvent, RingStore, RingWatcher,
    WatchConfig, WatchOptions,
};
use support::cluster::Cluster;
use support::etcd_or_skip;

/// Longest wait for something that should happen.
const DEADLINE: Duration = Duration::from_secs(30);
const PREFIX: &str = "/hashroute/cluster";

fn cluster(test: &str) -> Option<Cluster> {
    let bin = etcd_or_skip(test)?;
    Some(Cluster::start(&bin, 3).unwrap_or_else(|e| panic!("{test}: {e}")))
}

/// A store over `endpoints` in that order, with short per-endpoint timeouts (so that a member
/// that does not answer is passed over quickly) and the default 20 s time bound.
fn store_at(endpoints: &[String], prefix: &str) -> RingStore {
    let eps: Vec<&str> = endpoints.iter().map(String::as_str).collect();
    let options = Options::new().connect_timeout(Duration::from_secs(1)).request_timeout(Duration::from_secs(2));
    let client = Client::new(&eps, options).unwrap();
    RingStore::new(client, prefix).unwrap().with_retry(Retry::new(
        400,
        Duration::from_millis(1),
        Duration::from_millis(25),
    ))
}

/// The endpoints starting at member `first`.
fn rotated(c: &Cluster, first: usize) -> Vec<String> {
    let eps = c.endpoints();
    (0..eps.len()).map(|i| eps[(first + i) % eps.len()].clone()).collect()
}

/// Quick reconnection, and an idle watch reopened after 500 ms (what moves it off a frozen
/// member).
fn quick() -> WatchConfig {
    let mut config = WatchConfig::default();
    config.watch = WatchOptions {
        idle_reconnect: Duration::from_millis(500),
        first_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(200),
    };
    config.first_backoff = Duration::from_millis(20);
    config.max_backoff = Duration::from_millis(200);
    config
}

fn ring_spec() -> RouterSpec {
    RouterSpec::new(Algorithm::Ring).with_vnodes(40)
}

fn wait(w: &RingWatcher, revision: i64) {
    if let Err(at) = w.wait_for_revision(revision, DEADLINE) {
        panic!("watcher still at revision {at}, waited for {revision}: {:?}", w.status());
    }
}

/// Polls `cond` every 25 ms until it holds or the deadline passes.
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + DEADLINE;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn one_line(e: &RingError) -> String {
    let s = e.to_string();
    assert!(!s.contains('\n') && !s.is_empty(), "not one line: {s:?}");
    s
}

/// One writer's changes on the ring: joins, then a reweigh, a down, a drain, a leave and an up.
fn ring_writer(s: &RingStore, t: usize, each: usize, done: &AtomicUsize) -> Vec<Committed> {
    let mut out = Vec::new();
    let mut step = |r: Result<Committed, RingError>, what: &str| {
        out.push(r.unwrap_or_else(|e| panic!("writer {t}: {what}: {e}")));
        done.fetch_add(1, Ordering::SeqCst);
    };
    for i in 0..each {
        step(s.join(&Node::new(format!("n{t}-{i}"))), "join");
    }
    step(s.reweigh(&format!("n{t}-0"), 3.0), "reweigh");
    step(s.mark_down(&format!("n{t}-1")), "down");
    step(s.drain(&format!("n{t}-2")), "drain");
    step(s.leave(&format!("n{t}-3")), "leave");
    step(s.mark_up(&format!("n{t}-1")), "up");
    out
}

/// Token-ring joins (tokens allocated inside each transaction).
fn token_writer(s: &RingStore, t: usize, each: usize, done: &AtomicUsize) -> Vec<Committed> {
    (0..each)
        .map(|i| {
            let r = s.join(&Node::new(format!("t{t}-{i}"))).unwrap_or_else(|e| panic!("token writer {t}: {e}"));
            done.fetch_add(1, Ordering::SeqCst);
            r
        })
        .collect()
}

#[test]
fn concurrent_changes_ride_through_a_leader_kill() {
    let Some(mut c) = cluster("concurrent_changes_ride_through_a_leader_kill") else { return };
    const EACH: usize = 8;
    const TOKENS: usize = 8;
    let rings = store_at(&c.endpoints(), PREFIX);
    let tokens = store_at(&c.endpoints(), "/hashroute/tokens");
    rings.init(ring_spec()).unwrap();
    tokens.init(RouterSpec::new(Algorithm::TokenRing).with_tokens_per_node(16)).unwrap();
    tokens.join(&Node::new("seed")).unwrap();
    let watcher = store_at(&c.endpoints(), PREFIX).watch(quick()).unwrap();
    // Each writer starts at a different member, so that some talk to the leader and some to a
    // follower when it dies.
    let writers: Vec<RingStore> =
        (0..4).map(|t| store_at(&rotated(&c, t % 3), if t < 2 { PREFIX } else { "/hashroute/tokens" })).collect();
    let total = 2 * (EACH + 5) + 2 * TOKENS;
    let done = AtomicUsize::new(0);
    let leader = c.wait_leader().unwrap();
    let results: Vec<Committed> = std::thread::scope(|scope| {
        let handles: Vec<_> = writers
            .iter()
            .enumerate()
            .map(|(t, s)| {
                let done = &done;
                scope.spawn(
                    move || {
                        if t < 2 {
                            ring_writer(s, t, EACH, done)
                        } else {
                            token_writer(s, t, TOKENS, done)
                        }
                    },
                )
            })
            .collect();
        // Kill the leader once a third of the changes are in (bounded wait).
        let deadline = Instant::now() + DEADLINE;
        while done.load(Ordering::SeqCst) < total / 3 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        c.kill(leader);
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(results.len(), total, "every change returned Ok");
    let recovered = results.iter().filter(|r| r.recovered).count();
    eprintln!("leader {leader} killed; {recovered} changes found applied after a lost answer");

    // Every change is in the ring exactly once.
    let state = rings.read().unwrap();
    let names: Vec<&str> = state.members().iter().map(|m| m.name()).collect();
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(names.len(), unique.len(), "a member twice: {names:?}");
    assert_eq!(names.len(), 2 * (EACH - 1), "{names:?}");
    assert_eq!(state.serial(), 1 + 2 * (EACH as u64 + 5), "one change per call, none twice");
    for t in 0..2 {
        assert_eq!(state.member(&format!("n{t}-0")).unwrap().weight(), 3.0);
        assert_eq!(state.member(&format!("n{t}-1")).unwrap().state(), MemberState::Active);
        assert_eq!(state.member(&format!("n{t}-2")).unwrap().state(), MemberState::Draining);
        assert!(state.member(&format!("n{t}-3")).is_none());
    }
    let token_state = tokens.read().unwrap();
    assert_eq!(token_state.members().len(), 1 + 2 * TOKENS);
    assert_eq!(token_state.serial(), 2 + 2 * TOKENS as u64);
    let mut all: Vec<i64> = token_state.members().iter().flat_map(|m| m.tokens().iter().copied()).collect();
    assert_eq!(all.len(), 16 * (1 + 2 * TOKENS));
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 16 * (1 + 2 * TOKENS), "no token twice");

    // The watcher (never restarted) serves the final ring; the killed member comes back with
    // its data and serves the same ring.
    wait(&watcher, state.revision());
    assert_eq!(watcher.fingerprint(), Some(state.router().unwrap().fingerprint()));
    c.restart(leader).unwrap();
    let alone = store_at(&[c.endpoint(leader)], PREFIX);
    eventually("the restarted member to serve the ring", || alone.read().is_ok_and(|s| s == state));
}

#[test]
fn a_frozen_member_is_passed_over_by_reads_changes_and_watches() {
    let Some(mut c) = cluster("a_frozen_member_is_passed_over_by_reads_changes_and_watches") else { return };
    let s = store_at(&c.endpoints(), PREFIX);
    s.init(ring_spec()).unwrap();
    for n in ["a", "b", "c"] {
        s.join(&Node::new(n)).unwrap();
    }
    let leader = c.wait_leader().unwrap();
    let frozen = (leader + 1) % 3;
    // Clients that start at the member about to freeze.
    let writer = store_at(&rotated(&c, frozen), PREFIX);
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let w = store_at(&rotated(&c, frozen), PREFIX)
        .watch(quick().on_event(move |e: &RingEvent| seen.lock().unwrap().push(e.clone())))
        .unwrap();
    let frozen_ep = c.endpoint(frozen);
    eventually("the watch to open on the first endpoint", || w.status().endpoint.as_deref() == Some(&frozen_ep));

    c.freeze(frozen).unwrap();
    let read = s.read().unwrap();
    let t = Instant::now();
    let again = writer.read().unwrap();
    assert_eq!(again, read, "a linearizable read from another member");
    let joined = writer.join(&Node::new("d")).unwrap();
    let reweighed = writer.reweigh("a", 2.0).unwrap();
    assert!(t.elapsed() < writer.time_bound() * 2, "{:?}", t.elapsed());
    wait(&w, reweighed.revision);
    assert_eq!(w.fingerprint(), Some(reweighed.state.router().unwrap().fingerprint()));
    let following = w.status().endpoint;
    assert!(following.is_some() && following.as_deref() != Some(frozen_ep.as_str()), "{following:?}");
    assert!(
        events
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, RingEvent::Following { endpoint, .. } if *endpoint != frozen_ep)),
        "{:?}",
        events.lock().unwrap()
    );
    // Every revision served only grows.
    let served: Vec<i64> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| if let RingEvent::Serving { revision, .. } = e { Some(*revision) } else { None })
        .collect();
    assert!(served.windows(2).all(|p| p[0] < p[1]), "{served:?}");
    assert!(served.contains(&joined.revision) || served.iter().any(|&r| r > joined.revision));

    // Thawed, it catches up and serves the same ring; the buffered write it held applies nothing.
    c.thaw(frozen).unwrap();
    let alone = store_at(std::slice::from_ref(&frozen_ep), PREFIX);
    let latest = s.read().unwrap();
    assert_eq!(latest.revision(), reweighed.revision, "nothing applied twice");
    eventually("the thawed member to serve the ring", || alone.read().is_ok_and(|r| r == latest));
}

#[test]
fn members_restarted_removed_and_added_back_serve_the_same_ring() {
    let Some(mut c) = cluster("members_restarted_removed_and_added_back_serve_the_same_ring") else { return };
    let s = store_at(&c.endpoints(), PREFIX);
    s.init(ring_spec()).unwrap();
    s.join(&Node::new("a")).unwrap();
    let w = s.watch(quick()).unwrap();
    let leader = c.wait_leader().unwrap();
    let victim = (leader + 2) % 3;
    let alone = store_at(&[c.endpoint(victim)], PREFIX);

    // Killed, changed without it, restarted with its data: it serves the newer ring.
    c.kill(victim);
    let b = s.join(&Node::new("b")).unwrap();
    c.restart(victim).unwrap();
    eventually("the restarted member to catch up", || alone.read().is_ok_and(|r| r == b.state));

    // Removed (its data deleted), changed without it, added back empty: it catches up.
    c.remove(victim).unwrap();
    let d = s.join(&Node::new("d")).unwrap();
    c.add(victim).unwrap();
    eventually("the re-added member to catch up", || alone.read().is_ok_and(|r| r == d.state));
    let e = alone.join(&Node::new("e")).unwrap();
    wait(&w, e.revision);
    assert_eq!(w.fingerprint(), Some(e.state.router().unwrap().fingerprint()));
    assert_eq!(s.read().unwrap().members().len(), 4);
}

#[test]
fn quorum_lost_fails_in_one_line_and_changes_resume_when_it_returns() {
    let Some(mut c) = cluster("quorum_lost_fails_in_one_line_and_changes_resume_when_it_returns") else { return };
    let s = store_at(&c.endpoints(), PREFIX);
    s.init(ring_spec()).unwrap();
    let a = s.join(&Node::new("a")).unwrap();
    let w = s.watch(quick()).unwrap();
    wait(&w, a.revision);
    let (x, y) = (0, 1);
    c.kill(x);
    c.kill(y);

    // No quorum: a change and a read each fail within the bound, in one line, transient.
    let bound = Duration::from_secs(4);
    let bounded = s.clone().with_time_bound(bound);
    let id = ChangeId::new();
    let t = Instant::now();
    let err = bounded.change_with_id("join", &id, |st| st.with_member(&Node::new("b"), false)).unwrap_err();
    let took = t.elapsed();
    // The bound's contract (generous slack for a loaded machine), not a speed test.
    assert!(took < bound + Duration::from_secs(2), "{took:?}: {err}");
    assert!(err.is_transient(), "{err:?}");
    eprintln!("quorum lost: {} after {took:?}", one_line(&err));
    let t = Instant::now();
    let err = bounded.read().unwrap_err();
    assert!(t.elapsed() < bound + Duration::from_secs(2), "{:?}: {err}", t.elapsed());
    one_line(&err);
    assert!(w.status().revision >= a.revision, "the watcher keeps its ring");

    // Quorum back: the ring decodes whole (nothing half applied), the same change id settles
    // the unresolved join exactly once, and the watcher (never restarted) follows new changes.
    c.restart(x).unwrap();
    c.restart(y).unwrap();
    let settled = s.change_with_id("join", &id, |st| st.with_member(&Node::new("b"), false)).unwrap();
    let state = s.read().unwrap();
    assert_eq!(state.members().iter().filter(|m| m.name() == "b").count(), 1);
    assert_eq!(state.serial(), 3, "init, a, b: the join applied once");
    assert_eq!(state.change_serial(&id), Some(3));
    let next = s.join(&Node::new("c")).unwrap();
    wait(&w, next.revision);
    assert!(w.status().connected);
    assert_eq!(w.fingerprint(), Some(next.state.router().unwrap().fingerprint()));
    assert!(settled.revision <= next.revision);
}

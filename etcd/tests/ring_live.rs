//! Rings in a real etcd (scripts/install_etcd.sh): every test starts its own server on free
//! loopback ports (tests/support/mod.rs) and kills it by its pid when done. Without `etcd` the
//! tests print `SKIPPED: etcd not installed` and pass, unless `CI` is set.
//!
//! Every wait is bounded by a deadline; no test asserts a speed. The measurements behind the
//! documented propagation and read-cost figures are the `#[ignore]`d test at the end.

mod support;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hashroute::{Algorithm, Node, Router, RouterSpec, TokenRing};
use hashroute_etcd::{
    Client, Committed, DecodeError, Error, MemberState, Op, Options, Retry, RingError, RingEvent, RingRouter,
    RingStore, RingWatcher, WatchConfig, WatchOptions,
};
use support::{etcd_or_skip, Config, Etcd};

/// Longest wait for something that should happen.
const DEADLINE: Duration = Duration::from_secs(20);
const PREFIX: &str = "/hashroute/test";

fn start(test: &str) -> Option<Etcd> {
    let bin = etcd_or_skip(test)?;
    Some(Etcd::start(&bin).unwrap_or_else(|e| panic!("{test}: {e}")))
}

fn store(etcd: &Etcd) -> RingStore {
    let client = Client::connect(&[&etcd.endpoint()], Options::new()).unwrap_or_else(|e| panic!("connect: {e}"));
    RingStore::new(client, PREFIX).unwrap().with_retry(Retry::new(
        400,
        Duration::from_millis(1),
        Duration::from_millis(25),
    ))
}

/// Quick reconnection for the tests.
fn quick() -> WatchConfig {
    let mut config = WatchConfig::default();
    config.watch = WatchOptions {
        first_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(200),
        ..WatchOptions::default()
    };
    config.first_backoff = Duration::from_millis(20);
    config.max_backoff = Duration::from_millis(200);
    config
}

fn ring_spec() -> RouterSpec {
    RouterSpec::new(Algorithm::Ring).with_vnodes(40)
}

fn one_line(e: &RingError) -> String {
    let s = e.to_string();
    assert!(!s.contains('\n') && !s.is_empty(), "not one line: {s:?}");
    s
}

fn wait(w: &RingWatcher, revision: i64) {
    if let Err(at) = w.wait_for_revision(revision, DEADLINE) {
        panic!("watcher still at revision {at}, waited for {revision}: {:?}", w.status());
    }
}

/// Polls `cond` every 20 ms until it holds or the deadline passes.
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + DEADLINE;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn routes(r: &impl Router, n: u32) -> Vec<String> {
    (0..n).map(|k| r.node_name(r.route(format!("key-{k}").as_bytes())).to_owned()).collect()
}

#[test]
fn concurrent_joins_all_land_once_and_watchers_converge() {
    let Some(etcd) = start("concurrent_joins_all_land_once_and_watchers_converge") else { return };
    let s = store(&etcd);
    let init = s.init(ring_spec()).unwrap();
    let again = s.init(ring_spec()).unwrap_err();
    assert!(matches!(again, RingError::Exists { .. }), "{again:?}");
    one_line(&again);
    let watchers: Vec<RingWatcher> = (0..3).map(|_| store(&etcd).watch(quick()).unwrap()).collect();
    assert!(watchers[0].router().is_none(), "no member yet: nothing to route with");
    assert_eq!(watchers[0].revision(), init.revision);

    const THREADS: usize = 8;
    const EACH: usize = 4;
    let committed: Vec<Committed> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let s = store(&etcd);
                scope.spawn(move || {
                    (0..EACH)
                        .map(|i| s.join(&Node::new(format!("n{t}-{i}"))).unwrap_or_else(|e| panic!("join: {e}")))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let state = s.read().unwrap();
    let names: BTreeSet<&str> = state.members().iter().map(|m| m.name()).collect();
    assert_eq!(state.members().len(), THREADS * EACH, "a join was lost or applied twice");
    assert_eq!(names.len(), THREADS * EACH);
    assert_eq!(state.serial(), 1 + (THREADS * EACH) as u64, "one change per join");
    let revisions: BTreeSet<i64> = committed.iter().map(|c| c.revision).collect();
    assert_eq!(revisions.len(), THREADS * EACH, "every join is its own transaction");
    assert_eq!(*revisions.last().unwrap(), state.revision());
    let orders: BTreeSet<u64> = state.members().iter().map(|m| m.order()).collect();
    assert_eq!(orders.len(), THREADS * EACH, "one position each");

    // A second join of a present name is refused, nothing written.
    let dup = s.join(&Node::new("n0-0")).unwrap_err();
    assert!(matches!(dup, RingError::DuplicateMember { .. }), "{dup:?}");
    assert_eq!(s.read().unwrap().revision(), state.revision());

    // Every watcher converges on the stored ring; readers see the same fingerprint.
    let expected = state.router().unwrap().fingerprint();
    for w in &watchers {
        wait(w, state.revision());
        assert_eq!(w.fingerprint(), Some(expected));
        let shared = w.router().unwrap();
        assert_eq!(shared.load().fingerprint(), expected);
        assert_eq!(shared.load().revision(), state.revision());
    }
    // A down member changes the fingerprint for everyone, up restores it.
    let down = s.mark_down("n3-1").unwrap();
    let noop = s.mark_down("n3-1").unwrap();
    assert!(!noop.changed && noop.revision == down.revision);
    for w in &watchers {
        wait(w, down.revision);
        assert_ne!(w.fingerprint(), Some(expected));
        assert_eq!(w.load().unwrap().down_count(), 1);
    }
    let up = s.mark_up("n3-1").unwrap();
    for w in &watchers {
        wait(w, up.revision);
        assert_eq!(w.fingerprint(), Some(expected));
    }
}

#[test]
fn token_ring_joins_allocate_inside_their_transaction() {
    let Some(etcd) = start("token_ring_joins_allocate_inside_their_transaction") else { return };
    let s = store(&etcd);
    s.init(RouterSpec::new(Algorithm::TokenRing).with_tokens_per_node(8)).unwrap();
    s.join(&Node::new("seed").with_label("zone", "dc1").with_label("rack", "r1")).unwrap();
    const THREADS: usize = 6;
    const EACH: usize = 2;
    let mut committed: Vec<Committed> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let s = store(&etcd);
                scope.spawn(move || {
                    (0..EACH)
                        .map(|i| {
                            let node = Node::new(format!("t{t}-{i}"))
                                .with_label("zone", if t % 2 == 0 { "dc1" } else { "dc2" });
                            s.join(&node).unwrap_or_else(|e| panic!("join: {e}"))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    committed.sort_by_key(|c| c.revision);
    // The transactions are serialized: each state is the one before plus one member, whose
    // tokens the allocator chose against every token then stored; no other token moved and no
    // key moved except to the new member.
    let mut previous: Option<RingRouter> = None;
    for c in &committed {
        let router = c.state.router().unwrap();
        if let Some(prev) = &previous {
            let before: BTreeSet<&str> = prev.state().members().iter().map(|m| m.name()).collect();
            let added: Vec<&str> = c.state.members().iter().map(|m| m.name()).filter(|n| !before.contains(n)).collect();
            assert_eq!(added.len(), 1, "one join per transaction: {added:?}");
            for m in prev.state().members() {
                assert_eq!(c.state.member(m.name()).unwrap().tokens(), m.tokens(), "{} moved tokens", m.name());
            }
            for (was, now) in routes(prev, 2000).iter().zip(routes(&router, 2000)) {
                assert!(was == &now || now == added[0], "key moved {was} -> {now}, not to {}", added[0]);
            }
        }
        previous = Some(router);
    }
    let state = s.read().unwrap();
    assert_eq!(state.members().len(), 1 + THREADS * EACH);
    let mut tokens: Vec<i64> = state.members().iter().flat_map(|m| m.tokens().iter().copied()).collect();
    assert_eq!(tokens.len(), 8 * (1 + THREADS * EACH), "V tokens each");
    tokens.sort_unstable();
    tokens.dedup();
    assert_eq!(tokens.len(), 8 * (1 + THREADS * EACH), "no token twice");
    // The stored ring is exactly the kernel's token ring over the stored tokens (and labels).
    let kernel = TokenRing::from_nodes(state.members().iter().map(|m| m.node())).unwrap();
    assert_eq!(state.router().unwrap().fingerprint(), hashroute::fingerprint(&kernel));
    assert_eq!(state.member("t1-0").unwrap().labels().get("zone").map(String::as_str), Some("dc2"));
}

#[test]
fn watcher_follows_a_compaction_and_an_etcd_restart() {
    let Some(mut etcd) = start("watcher_follows_a_compaction_and_an_etcd_restart") else { return };
    let s = store(&etcd);
    s.init(ring_spec()).unwrap();
    s.join(&Node::new("a")).unwrap();
    s.join(&Node::new("b")).unwrap();
    // At the first event (the ring read by `start`, before the watch opens) two more changes
    // land and the history is compacted past them: the watch must start from a compacted
    // revision, and the watcher must read afresh.
    let events = Arc::new(Mutex::new(Vec::new()));
    let (first, seen, writer) = (Arc::new(AtomicBool::new(true)), events.clone(), store(&etcd));
    let last_change = Arc::new(Mutex::new(0));
    let last = last_change.clone();
    let config = quick().on_event(move |ev: &RingEvent| {
        if first.swap(false, Ordering::SeqCst) {
            writer.join(&Node::new("c")).unwrap();
            let c = writer.join(&Node::new("d")).unwrap();
            writer.client().compact(c.revision).unwrap();
            *last.lock().unwrap() = c.revision;
        }
        seen.lock().unwrap().push(ev.clone());
    });
    let w = s.watch(config).unwrap();
    let compacted_at = *last_change.lock().unwrap();
    wait(&w, compacted_at);
    assert!(
        events.lock().unwrap().iter().any(|e| matches!(e, RingEvent::Resynced { compacted: true, .. })),
        "{:?}",
        events.lock().unwrap()
    );
    assert_eq!(w.fingerprint(), Some(s.read().unwrap().router().unwrap().fingerprint()));

    // etcd down: the watcher keeps serving the last ring and says it is disconnected.
    let served = w.fingerprint();
    let shared = w.router().unwrap();
    let before = routes(&*shared.load(), 200);
    etcd.stop();
    eventually("the watcher to notice etcd is down", || !w.status().connected);
    assert_eq!(w.fingerprint(), served);
    assert_eq!(routes(&*shared.load(), 200), before, "readers keep the last ring");
    // Retried within the time bound (etcd may be electing a leader), then one transient error.
    let bound = Duration::from_secs(1);
    let t = Instant::now();
    let down = s.clone().with_time_bound(bound).join(&Node::new("e")).unwrap_err();
    assert!(t.elapsed() < bound + Duration::from_secs(2), "{:?}", t.elapsed());
    assert!(down.is_transient(), "{down:?}");
    one_line(&down);

    // Back up: the watcher reads afresh and follows new changes.
    etcd.restart().unwrap();
    let after = s.join(&Node::new("e")).unwrap();
    wait(&w, after.revision);
    assert!(w.status().connected);
    assert_eq!(w.fingerprint(), Some(after.state.router().unwrap().fingerprint()));
    assert!(events.lock().unwrap().iter().any(|e| matches!(e, RingEvent::Disconnected(_))));
}

#[test]
fn garbage_written_by_hand_is_refused_and_never_applied() {
    let Some(etcd) = start("garbage_written_by_hand_is_refused_and_never_applied") else { return };
    let s = store(&etcd);
    s.init(ring_spec()).unwrap();
    s.join(&Node::new("a")).unwrap();
    s.join(&Node::new("b")).unwrap();
    let last = s.join(&Node::new("c")).unwrap().revision;
    let refusals = Arc::new(Mutex::new(Vec::new()));
    let seen = refusals.clone();
    let w = s
        .watch(quick().on_event(move |ev: &RingEvent| {
            if let RingEvent::Refused { error, .. } = ev {
                seen.lock().unwrap().push(error.clone());
            }
        }))
        .unwrap();
    wait(&w, last);
    let good = w.fingerprint().unwrap();
    let c = s.client();
    let member = |name: &str| format!("{PREFIX}/members/{name}").into_bytes();

    let cases: [(Vec<u8>, Vec<u8>); 4] = [
        (member("x"), b"\x00not json".to_vec()),
        // A record that would parse, copied by hand: written outside a ring transaction.
        (member("x"), c.get(&member("a")).unwrap().unwrap().value),
        (format!("{PREFIX}/stray").into_bytes(), b"1".to_vec()),
        (format!("{PREFIX}/config").into_bytes(), b"{\"format\":\"hashroute-ring/1\"}".to_vec()),
    ];
    for (i, (key, value)) in cases.iter().enumerate() {
        let original = c.get(key).unwrap();
        c.put(key, value).unwrap();
        eventually("the watcher to refuse the garbage", || refusals.lock().unwrap().len() > i);
        assert_eq!(w.fingerprint(), Some(good), "case {i}: the last good ring is still served");
        assert!(w.status().last_error.is_some());
        // A change on top of garbage is refused, nothing written.
        let rev = c.status().unwrap().revision;
        let err = s.join(&Node::new("z")).unwrap_err();
        assert!(matches!(err, RingError::Decode(_)), "case {i}: {err:?}");
        assert!(one_line(&err).contains("nothing was changed"));
        assert_eq!(c.status().unwrap().revision, rev);
        let watcher_err = w.status().last_error.unwrap();
        assert!(!watcher_err.contains('\n'));
        // The same refusal from a fresh watcher: it does not start on garbage.
        assert!(matches!(s.watch(quick()), Err(RingError::Decode(_))));
        match original {
            Some(kv) => c.put(key, &kv.value).map(|_| ()).unwrap(),
            None => c.delete(key).map(|_| ()).unwrap(),
        }
    }
    let kinds: Vec<String> = refusals.lock().unwrap().iter().map(|e| format!("{e:?}")).collect();
    assert!(matches!(refusals.lock().unwrap()[0], DecodeError::Malformed { .. }), "{kinds:?}");
    assert!(matches!(refusals.lock().unwrap()[1], DecodeError::Inconsistent(_)), "{kinds:?}");
    assert!(matches!(refusals.lock().unwrap()[2], DecodeError::UnknownKey { .. }), "{kinds:?}");
    // Repaired: changes go through again and the watcher follows.
    let next = s.join(&Node::new("z")).unwrap();
    wait(&w, next.revision);
    assert!(w.status().last_error.is_none());
    assert_ne!(w.fingerprint(), Some(good));
}

#[test]
fn auth_without_credentials_is_refused_and_changes_nothing() {
    let Some(bin) = etcd_or_skip("auth_without_credentials_is_refused_and_changes_nothing") else { return };
    let mut etcd = Etcd::start_with(&bin, Config::default()).unwrap();
    etcd.enable_auth("rootpw", &[("nobody", "nopw")]).unwrap();
    let ep = etcd.endpoint();
    let root = Client::connect(&[&ep], Options::new().credentials("root", "rootpw")).unwrap();
    let s = RingStore::new(root, PREFIX).unwrap();
    s.init(ring_spec()).unwrap();
    let before = s.join(&Node::new("a")).unwrap();

    let anon = RingStore::new(Client::connect(&[&ep], Options::new()).unwrap(), PREFIX).unwrap();
    for e in [anon.join(&Node::new("b")).unwrap_err(), anon.read().unwrap_err(), anon.watch(quick()).unwrap_err()] {
        assert!(matches!(e, RingError::Etcd(Error::AuthRequired { .. })), "{e:?}");
        one_line(&e);
    }
    let nobody = Client::connect(&[&ep], Options::new().credentials("nobody", "nopw")).unwrap();
    let e = RingStore::new(nobody, PREFIX).unwrap().leave("a").unwrap_err();
    assert!(matches!(e, RingError::Etcd(Error::PermissionDenied { .. })), "{e:?}");
    let wrong = Client::connect(&[&ep], Options::new().credentials("root", "nope")).unwrap_err();
    assert!(matches!(wrong, Error::AuthFailed { .. }), "{wrong:?}");

    let after = s.read().unwrap();
    assert_eq!(after.revision(), before.revision, "nothing changed");
    assert_eq!(after.members().len(), 1);
    let w = s.watch(quick()).unwrap();
    assert_eq!(w.revision(), before.revision);
    let next = s.reweigh("a", 2.0).unwrap();
    wait(&w, next.revision);
}

#[test]
fn staged_scale_out_and_delayed_removal() {
    let Some(etcd) = start("staged_scale_out_and_delayed_removal") else { return };
    let s = store(&etcd);
    s.init(ring_spec()).unwrap();
    for n in ["a", "b", "c"] {
        s.join(&Node::new(n)).unwrap();
    }
    let w = s.watch(quick()).unwrap();
    let base = w.fingerprint().unwrap();
    // Scale-out staged: d is stored but not routed; the staged view routes to it.
    let staged = s.join_staged(&Node::new("d")).unwrap();
    wait(&w, staged.revision);
    assert_eq!(w.fingerprint(), Some(base), "a staged join moves no key");
    assert_eq!(staged.state.member("d").unwrap().state(), MemberState::Joining);
    let target = staged.state.target_router().unwrap();
    let plan = hashroute::migration::plan(&staged.state.router().unwrap(), &target).unwrap();
    assert!(plan.moved_fraction() > 0.0 && plan.moved_fraction() < 0.5, "{}", plan.moved_fraction());
    let live = s.mark_up("d").unwrap();
    wait(&w, live.revision);
    assert_eq!(w.fingerprint(), Some(target.fingerprint()), "activation routes as the staged view said");
    // Delayed removal: down at once (only its keys move), leave later.
    let before = routes(&*w.load().unwrap(), 2000);
    let down = s.mark_down("b").unwrap();
    wait(&w, down.revision);
    for (was, now) in before.iter().zip(routes(&*w.load().unwrap(), 2000)) {
        assert!(now != "b" && (was == "b" || was == &now));
    }
    let gone = s.leave("b").unwrap();
    wait(&w, gone.revision);
    assert!(w.load().unwrap().state().member("b").is_none());
    // A ring rebuilds the same routes a down mark gave: the leave moved nothing more.
    assert_eq!(routes(&*w.load().unwrap(), 2000), routes(&down.state.router().unwrap(), 2000));
    let err = s.mark_down("zz").unwrap_err();
    assert!(matches!(err, RingError::UnknownMember { .. }));
}

/// Figures for the documentation, printed (run with `--ignored --nocapture`): the time from a
/// committed change to a watcher's swap over 120 changes, and a reader's route cost with and
/// without swaps. Never asserted: the machine decides them.
#[test]
#[ignore]
fn measure_propagation_and_read_cost() {
    let Some(etcd) = start("measure_propagation_and_read_cost") else { return };
    let s = store(&etcd);
    s.init(RouterSpec::new(Algorithm::Ring).with_vnodes(160)).unwrap();
    for i in 0..50 {
        s.join(&Node::new(format!("cache-{i:02}"))).unwrap();
    }
    let swaps: Arc<Mutex<Vec<(i64, Instant)>>> = Arc::new(Mutex::new(Vec::new()));
    let log = swaps.clone();
    let w = s
        .watch(quick().on_event(move |ev: &RingEvent| {
            if let RingEvent::Serving { revision, .. } = ev {
                log.lock().unwrap().push((*revision, Instant::now()));
            }
        }))
        .unwrap();
    const CHANGES: usize = 120;
    let (mut from_send, mut from_ack) = (Vec::new(), Vec::new());
    for i in 0..CHANGES {
        let weight = if i.is_multiple_of(2) { 2.0 } else { 1.0 };
        let sent = Mutex::new(Instant::now());
        let c = s
            .change("measure", |st| {
                let next = st.with_weight("cache-07", weight);
                *sent.lock().unwrap() = Instant::now();
                next
            })
            .unwrap();
        let acked = Instant::now();
        // The handler stamps the swap (the watcher wakes waiters before it runs the handler).
        let deadline = Instant::now() + DEADLINE;
        let swapped = loop {
            if let Some(&(_, t)) = swaps.lock().unwrap().iter().find(|(r, _)| *r >= c.revision) {
                break t;
            }
            assert!(Instant::now() < deadline, "change {i} at revision {} never served", c.revision);
            std::thread::sleep(Duration::from_micros(200));
        };
        let sent = *sent.lock().unwrap();
        from_send.push(swapped.saturating_duration_since(sent));
        from_ack.push(
            swapped
                .checked_duration_since(acked)
                .map_or(-(acked.duration_since(swapped).as_secs_f64()), |d| d.as_secs_f64()),
        );
    }
    from_send.sort();
    from_ack.sort_by(f64::total_cmp);
    let pct = |p: f64| ((CHANGES - 1) as f64 * p).round() as usize;
    println!(
        "ring-propagation changes={CHANGES} members=50 vnodes=160 send_to_swap_p50_us={} send_to_swap_p99_us={} \
         ack_to_swap_p50_us={:.0} ack_to_swap_p99_us={:.0}",
        from_send[pct(0.5)].as_micros(),
        from_send[pct(0.99)].as_micros(),
        from_ack[pct(0.5)] * 1e6,
        from_ack[pct(0.99)] * 1e6
    );
    read_cost(&s, &w);
}

/// ns per `SharedRouter::route` on one reader thread: no swaps, swaps driven by etcd changes
/// through the watcher (a writer reweighing in a loop: etcd, the watcher's rebuilds and the
/// reader share the cores), and a local thread swapping prebuilt rings as fast as it can (the
/// swap's own cost to readers). Three interleaved repetitions, medians printed.
fn read_cost(s: &RingStore, w: &RingWatcher) {
    let shared = w.router().unwrap();
    let keys: Vec<Vec<u8>> = (0..4096).map(|k| format!("user:{k}").into_bytes()).collect();
    const ROUNDS: usize = 1000;
    let measure = |shared: &hashroute::SharedRouter<RingRouter>| {
        let t = Instant::now();
        let mut sink = 0usize;
        for round in 0..ROUNDS {
            for k in &keys {
                sink = sink.wrapping_add(shared.route(k).index() + round);
            }
        }
        std::hint::black_box(sink);
        t.elapsed().as_nanos() as f64 / (ROUNDS * keys.len()) as f64
    };
    let (a, b): (RingRouter, RingRouter) = (shared.load().clone(), s.read().unwrap().router().unwrap());
    let (mut quiet, mut etcd, mut local) = (Vec::new(), Vec::new(), Vec::new());
    let (mut etcd_swaps, mut local_swaps) = (0u64, 0u64);
    for _ in 0..3 {
        quiet.push(measure(&shared));
        let stop = AtomicBool::new(false);
        let (n, ns) = std::thread::scope(|scope| {
            let writer = scope.spawn(|| {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    s.reweigh("cache-11", if n.is_multiple_of(2) { 3.0 } else { 1.0 }).unwrap();
                    n += 1;
                }
                n
            });
            let ns = measure(&shared);
            stop.store(true, Ordering::Relaxed);
            (writer.join().unwrap(), ns)
        });
        etcd.push(ns);
        etcd_swaps += n;
        let stop = AtomicBool::new(false);
        let (n, ns) = std::thread::scope(|scope| {
            let swapper = scope.spawn(|| {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    shared.store(if n.is_multiple_of(2) { a.clone() } else { b.clone() });
                    n += 1;
                }
                n
            });
            let ns = measure(&shared);
            stop.store(true, Ordering::Relaxed);
            (swapper.join().unwrap(), ns)
        });
        local.push(ns);
        local_swaps += n;
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[1]
    };
    println!(
        "ring-read-cost keys=4096 routes_per_run={} runs=3 no_swaps_ns={:.1} etcd_swaps_ns={:.1} etcd_swaps={etcd_swaps} \
         local_storm_ns={:.1} local_swaps={local_swaps}",
        ROUNDS * keys.len(),
        median(&mut quiet),
        median(&mut etcd),
        median(&mut local)
    );
}

/// Members of the big rings measured: `HASHROUTE_BIG_RING_MEMBERS`, else 1,000 (the script's
/// quick mode sets 200).
fn big_ring_members() -> usize {
    std::env::var("HASHROUTE_BIG_RING_MEMBERS").ok().and_then(|v| v.parse().ok()).unwrap_or(1000)
}

/// Figures for results/etcd_ring.md (run with `--ignored --nocapture`, release): rings of 1,000
/// members in etcd, a token ring with 16 tokens each and a ring of 160 random (hashed) vnodes
/// each. Prints one `ring-big` line per ring: the time of one join and one leave at that size
/// (medians of 5), the record sizes, the bytes of the watch event of one join, a new watcher's
/// first full read, and commit-to-swap p50/p99 over 10 watchers and 64 joins (which also fill the
/// config's change log, so that the sizes are those of a ring in steady use). Never asserted.
#[test]
#[ignore]
fn measure_big_rings() {
    let Some(etcd) = start("measure_big_rings") else { return };
    let members = big_ring_members();
    for (name, spec) in [
        ("token-ring", RouterSpec::new(Algorithm::TokenRing).with_tokens_per_node(16)),
        ("ring", RouterSpec::new(Algorithm::Ring).with_vnodes(160)),
    ] {
        let prefix = format!("/hashroute/big-{name}");
        let s = RingStore::new(Client::connect(&[&etcd.endpoint()], Options::new()).unwrap(), &prefix).unwrap();
        let t = Instant::now();
        let state = bulk_load(&s, spec, members);
        let load_s = t.elapsed().as_secs_f64();
        let records = state.records(&prefix).unwrap();
        let member_sizes: Vec<usize> = records[1..].iter().map(|(k, v)| k.len() + v.len()).collect();
        let member_avg = member_sizes.iter().sum::<usize>() / member_sizes.len().max(1);

        // A new watcher's first read: range read, decode, router build, fingerprint.
        let mut first_reads: Vec<Duration> = (0..3)
            .map(|_| {
                let t = Instant::now();
                let w = s.watch(quick()).unwrap();
                let took = t.elapsed();
                drop(w);
                took
            })
            .collect();
        first_reads.sort();
        // Commit-to-swap over 10 watchers and 64 joins, which also fill the config's change log, so
        // that the sizes below are those of a ring in steady use.
        let (p50, p99, samples) = swap_latency(&s, 10, 64);

        // One join: time, and the bytes its watch event carries (keys and values as stored;
        // the gateway sends them in base64, a third more).
        let from = s.read().unwrap().revision() + 1;
        let probe = s.client().watch(s.prefix().as_bytes(), from).unwrap();
        let mut joins = Vec::new();
        for i in 0..5 {
            let t = Instant::now();
            s.join(&Node::new(format!("extra-{i}"))).unwrap();
            joins.push(t.elapsed());
        }
        let event_bytes = first_event_bytes(&probe);
        drop(probe);
        let mut leaves = Vec::new();
        let mut leave_writes = 0;
        for i in 0..5 {
            let before = s.read().unwrap();
            let t = Instant::now();
            let c = s.leave(&format!("extra-{i}")).unwrap();
            leaves.push(t.elapsed());
            leave_writes = leave_writes.max(changed_members(&before, &c.state));
        }
        joins.sort();
        leaves.sort();
        let config_bytes = s.client().get(format!("{prefix}/config").as_bytes()).unwrap().unwrap().value.len();
        let ring_bytes: usize = s
            .client()
            .get_prefix(s.prefix().as_bytes())
            .unwrap()
            .kvs
            .iter()
            .map(|kv| kv.key.len() + kv.value.len())
            .sum();
        println!(
            "ring-big algo={name} members={members} points_per_member={} bulk_load_s={load_s:.1} \
             join_ms={:.1} leave_ms={:.1} leave_members_rewritten={leave_writes} config_bytes={config_bytes} \
             member_bytes_avg={member_avg} member_bytes_max={} ring_bytes={ring_bytes} join_event_bytes={event_bytes} \
             first_read_ms={:.1} watchers=10 swaps={samples} ack_to_swap_p50_ms={:.1} ack_to_swap_p99_ms={:.1}",
            if name == "ring" { 160 } else { 16 },
            joins[2].as_secs_f64() * 1e3,
            leaves[2].as_secs_f64() * 1e3,
            member_sizes.iter().max().unwrap_or(&0),
            first_reads[1].as_secs_f64() * 1e3,
            p50 * 1e3,
            p99 * 1e3,
        );
    }
}

/// A ring of `members` members built with the library's own changes (a token ring allocates
/// every member's tokens), written into etcd member records first, in transactions of 100, and
/// the config last (so that it is the newest key, as the decoder requires). Returns the state as
/// read back.
fn bulk_load(s: &RingStore, spec: RouterSpec, members: usize) -> hashroute_etcd::RingState {
    let mut state = hashroute_etcd::RingState::new(spec).unwrap();
    for i in 0..members {
        state = state.with_member(&Node::new(format!("cache-{i:04}")), false).unwrap();
    }
    let records = state.records(s.prefix()).unwrap();
    let (config, rest) = records.split_first().unwrap();
    for chunk in rest.chunks(100) {
        let ops: Vec<Op> = chunk.iter().map(|(k, v)| Op::put(k.clone(), v.clone())).collect();
        assert!(s.client().txn(&[], &ops).unwrap().succeeded);
    }
    s.client().put(&config.0, &config.1).unwrap();
    let back = s.read().unwrap();
    assert_eq!(back.members().len(), members);
    back
}

/// Keys and values (bytes as stored) of the first revision a watch delivers.
fn first_event_bytes(watch: &hashroute_etcd::Watcher) -> usize {
    let deadline = Instant::now() + DEADLINE;
    while Instant::now() < deadline {
        if let Ok(hashroute_etcd::WatchEvent::Changes(events)) = watch.events().recv_timeout(Duration::from_millis(100))
        {
            let first = events[0].kv.mod_revision;
            return events
                .iter()
                .filter(|e| e.kv.mod_revision == first)
                .map(|e| e.kv.key.len() + e.kv.value.len())
                .sum();
        }
    }
    panic!("no watch event");
}

/// Members whose record differs between two states (added, removed or rewritten).
fn changed_members(a: &hashroute_etcd::RingState, b: &hashroute_etcd::RingState) -> usize {
    let differs = |x: &hashroute_etcd::RingState, y: &hashroute_etcd::RingState| {
        x.members().iter().filter(|m| y.member(m.name()) != Some(*m)).count()
    };
    differs(a, b).max(differs(b, a))
}

/// `watchers` watchers follow `changes` joins; the time from each join's acknowledgement to each
/// watcher's swap: (p50 s, p99 s, samples).
fn swap_latency(s: &RingStore, watchers: usize, changes: usize) -> (f64, f64, usize) {
    let swaps: Arc<Mutex<Vec<(i64, Instant)>>> = Arc::new(Mutex::new(Vec::new()));
    let ws: Vec<RingWatcher> = (0..watchers)
        .map(|_| {
            let log = swaps.clone();
            s.watch(quick().on_event(move |ev: &RingEvent| {
                if let RingEvent::Serving { revision, .. } = ev {
                    log.lock().unwrap().push((*revision, Instant::now()));
                }
            }))
            .unwrap()
        })
        .collect();
    let mut samples = Vec::new();
    for i in 0..changes {
        let c = s.join(&Node::new(format!("swap-{i}"))).unwrap();
        let acked = Instant::now();
        // The handler stamps each swap (after the watcher woke its waiters): poll its log.
        let deadline = Instant::now() + DEADLINE;
        let at = loop {
            let at: Vec<Instant> =
                swaps.lock().unwrap().iter().filter(|(r, _)| *r == c.revision).map(|&(_, t)| t).collect();
            if at.len() == watchers {
                break at;
            }
            assert!(Instant::now() < deadline, "{} of {watchers} watchers swapped to {}", at.len(), c.revision);
            std::thread::sleep(Duration::from_micros(200));
        };
        samples.extend(at.iter().map(|t| t.checked_duration_since(acked).map_or(0.0, |d| d.as_secs_f64())));
    }
    drop(ws);
    samples.sort_by(f64::total_cmp);
    let pct = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    (pct(0.5), pct(0.99), samples.len())
}

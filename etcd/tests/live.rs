//! The client against a real etcd (Debian's `etcd-server`, scripts/install_etcd.sh): every test
//! starts its own server on free loopback ports with a temporary data directory
//! (tests/support/mod.rs) and kills it by its pid when done. Without `etcd` the tests print
//! `SKIPPED: etcd not installed` and pass, unless the `CI` environment variable is set: CI
//! installs etcd, so there a missing binary fails.
//!
//! Waits for events are bounded (a missing event fails the test after a generous deadline);
//! no test asserts a speed.

mod support;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hashroute_etcd::{
    Client, CmpOp, Compare, Error, Event, EventKind, Op, Options, Retry, WatchEvent, WatchOptions, Watcher,
};
use support::{etcd_or_skip, Config, Etcd};

/// Longest wait for an event that should come.
const EVENT_DEADLINE: Duration = Duration::from_secs(15);

fn start(test: &str) -> Option<Etcd> {
    let bin = etcd_or_skip(test)?;
    Some(Etcd::start(&bin).unwrap_or_else(|e| panic!("{test}: {e}")))
}

fn connect(etcd: &Etcd) -> Client {
    Client::connect(&[&etcd.endpoint()], Options::new()).unwrap_or_else(|e| panic!("connect: {e}"))
}

/// Fast reconnection for the tests.
fn quick() -> WatchOptions {
    WatchOptions {
        first_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(200),
        ..WatchOptions::default()
    }
}

/// Receives until `n` change events arrived; returns them and the other reports seen meanwhile.
fn changes(w: &Watcher, n: usize) -> (Vec<Event>, Vec<WatchEvent>) {
    let deadline = Instant::now() + EVENT_DEADLINE;
    let (mut got, mut other) = (Vec::new(), Vec::new());
    while got.len() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        match w.events().recv_timeout(left) {
            Ok(WatchEvent::Changes(evs)) => got.extend(evs),
            Ok(ev) => other.push(ev),
            Err(e) => panic!("waited for {n} events, got {} ({e}); other reports: {other:?}", got.len()),
        }
    }
    assert_eq!(got.len(), n, "more events than written: {got:?}");
    (got, other)
}

fn next_report(w: &Watcher) -> WatchEvent {
    w.events().recv_timeout(EVENT_DEADLINE).unwrap_or_else(|e| panic!("no watch report within the deadline: {e}"))
}

fn keys(evs: &[Event]) -> Vec<(EventKind, String)> {
    evs.iter().map(|e| (e.kind, String::from_utf8_lossy(&e.kv.key).into_owned())).collect()
}

fn one_line(e: &Error) -> String {
    let s = e.to_string();
    assert!(!s.contains('\n') && !s.is_empty(), "not one line: {s:?}");
    s
}

#[test]
fn put_get_prefix_delete() {
    let Some(etcd) = start("put_get_prefix_delete") else { return };
    let c = connect(&etcd);
    let status = c.status().unwrap();
    assert!(status.version.starts_with("3."), "{status:?}");
    assert!(status.has_leader);

    assert_eq!(c.get(b"p/missing").unwrap(), None);
    let r1 = c.put(b"p/b", b"2").unwrap();
    let r2 = c.put(b"p/a", b"\x00\xffbinary").unwrap();
    c.put(b"q/outside", b"x").unwrap();
    let r3 = c.put(b"p/b", b"22").unwrap();
    assert!(r1 < r2 && r2 < r3);

    let a = c.get(b"p/a").unwrap().unwrap();
    assert_eq!((a.value.as_slice(), a.mod_revision, a.create_revision, a.version), (&b"\x00\xffbinary"[..], r2, r2, 1));
    let b = c.get(b"p/b").unwrap().unwrap();
    assert_eq!((b.value.as_slice(), b.mod_revision, b.create_revision, b.version), (&b"22"[..], r3, r1, 2));

    let range = c.get_prefix(b"p/").unwrap();
    let names: Vec<&[u8]> = range.kvs.iter().map(|kv| kv.key.as_slice()).collect();
    assert_eq!(names, [&b"p/a"[..], b"p/b"], "key order, nothing outside the prefix");
    assert_eq!(range.revision, r3, "the read's revision is the store's current one");
    assert_eq!(c.get_prefix(b"").unwrap().kvs.len(), 3, "the empty prefix is every key");

    let d = c.delete(b"p/a").unwrap();
    assert_eq!(d.count, 1);
    assert_eq!(c.delete(b"p/a").unwrap().count, 0);
    assert_eq!(c.delete_prefix(b"p/").unwrap().count, 1);
    assert!(c.get_prefix(b"p/").unwrap().kvs.is_empty());
    assert_eq!(c.get(b"q/outside").unwrap().map(|kv| kv.value), Some(b"x".to_vec()));

    // Credentials for a store with auth off are not an error: no token is needed.
    let with_user = Client::connect(&[&etcd.endpoint()], Options::new().credentials("root", "any")).unwrap();
    assert_eq!(with_user.get(b"q/outside").unwrap().map(|kv| kv.value), Some(b"x".to_vec()));

    assert!(matches!(c.get(b""), Err(Error::InvalidArgument(_))));
    assert!(matches!(c.put(b"", b"v"), Err(Error::InvalidArgument(_))));
    // A value over etcd's request limit (1.5 MiB) is etcd's error, typed, not a panic.
    let big = vec![b'x'; 2 << 20];
    let err = c.put(b"p/big", &big).unwrap_err();
    assert!(matches!(err, Error::Server { .. }), "{err:?}");
    one_line(&err);
}

#[test]
fn compare_and_swap_success_and_conflict() {
    let Some(etcd) = start("compare_and_swap_success_and_conflict") else { return };
    let c = connect(&etcd);

    let created = c.txn(&[Compare::absent(b"cas/k".to_vec())], &[Op::put(b"cas/k".to_vec(), b"v1".to_vec())]).unwrap();
    assert!(created.succeeded);
    let again = c.txn(&[Compare::absent(b"cas/k".to_vec())], &[Op::put(b"cas/k".to_vec(), b"v2".to_vec())]).unwrap();
    assert!(!again.succeeded, "the key exists now");
    assert_eq!(again.revision, created.revision, "a failed txn changes nothing");
    assert_eq!(c.get(b"cas/k").unwrap().unwrap().value, b"v1");

    // Swap against the revision read; a concurrent write in between makes it fail.
    let read = c.get(b"cas/k").unwrap().unwrap();
    let other = c.put(b"cas/k", b"other").unwrap();
    let stale = c.txn(
        &[Compare::unchanged_since(b"cas/k".to_vec(), read.mod_revision)],
        &[Op::put(b"cas/k".to_vec(), b"mine".to_vec())],
    );
    assert!(!stale.unwrap().succeeded);
    let fresh =
        c.txn(&[Compare::unchanged_since(b"cas/k".to_vec(), other)], &[Op::put(b"cas/k".to_vec(), b"mine".to_vec())]);
    let fresh = fresh.unwrap();
    assert!(fresh.succeeded && fresh.revision == other + 1);

    // Several keys at once: all comparisons must hold, and all writes land in one revision.
    c.put(b"cas/a", b"1").unwrap();
    let a = c.get(b"cas/a").unwrap().unwrap();
    let both = [Compare::unchanged_since(b"cas/a".to_vec(), a.mod_revision), Compare::absent(b"cas/b".to_vec())];
    let ops = [Op::put(b"cas/b".to_vec(), b"2".to_vec()), Op::delete(b"cas/a".to_vec())];
    let r = c.txn(&both, &ops).unwrap();
    assert!(r.succeeded);
    assert_eq!(c.get(b"cas/b").unwrap().unwrap().mod_revision, r.revision);
    assert_eq!(c.get(b"cas/a").unwrap(), None);
    // Now `cas/b` exists, so the same transaction fails as a whole.
    c.put(b"cas/a", b"1").unwrap();
    let a = c.get(b"cas/a").unwrap().unwrap();
    let both = [Compare::unchanged_since(b"cas/a".to_vec(), a.mod_revision), Compare::absent(b"cas/b".to_vec())];
    assert!(!c.txn(&both, &ops).unwrap().succeeded);
    assert!(c.get(b"cas/a").unwrap().is_some(), "nothing of a failed txn is applied");

    // Revision comparisons other than equality.
    let b = c.get(b"cas/b").unwrap().unwrap();
    let newer = Compare::mod_revision(b"cas/b".to_vec(), CmpOp::Greater, b.mod_revision - 1);
    assert!(c.txn(&[newer], &[]).unwrap().succeeded);
    let created_before = Compare::create_revision(b"cas/b".to_vec(), CmpOp::Less, b.create_revision);
    assert!(!c.txn(&[created_before], &[]).unwrap().succeeded);
}

#[test]
fn concurrent_writers_lose_and_double_nothing() {
    let Some(etcd) = start("concurrent_writers_lose_and_double_nothing") else { return };
    let c = connect(&etcd);
    const THREADS: usize = 8;
    const EACH: usize = 20;
    let retry = Retry::new(400, Duration::from_millis(1), Duration::from_millis(20));
    let attempts = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (c, attempts) = (c.clone(), attempts.clone());
            s.spawn(move || {
                for i in 0..EACH {
                    let line = format!("{t}-{i}");
                    let r = c.update(b"conc/set", &retry, |cur| {
                        attempts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let mut text =
                            cur.map(|kv| String::from_utf8_lossy(&kv.value).into_owned()).unwrap_or_default();
                        text.push_str(&line);
                        text.push('\n');
                        Some(text.into_bytes())
                    });
                    r.unwrap_or_else(|e| panic!("writer {t}: {e}"));
                }
            });
        }
    });
    let value = c.get(b"conc/set").unwrap().unwrap();
    let lines: Vec<String> = String::from_utf8(value.value).unwrap().lines().map(str::to_owned).collect();
    let unique: BTreeSet<&String> = lines.iter().collect();
    assert_eq!(lines.len(), THREADS * EACH, "a change was lost or applied twice");
    assert_eq!(unique.len(), THREADS * EACH, "a change was applied twice");
    assert_eq!(value.version as usize, THREADS * EACH, "one write per change");
    // Each writer's own lines are in its order.
    for t in 0..THREADS {
        let mine: Vec<&String> = lines.iter().filter(|l| l.starts_with(&format!("{t}-"))).collect();
        let expected: Vec<String> = (0..EACH).map(|i| format!("{t}-{i}")).collect();
        assert_eq!(mine, expected.iter().collect::<Vec<_>>());
    }
    // `update` declining leaves the key alone.
    assert_eq!(c.update(b"conc/set", &retry, |_| None).unwrap(), None);
    eprintln!(
        "concurrent_writers: {} changes from {THREADS} threads took {} read-compute-swap attempts",
        THREADS * EACH,
        attempts.load(std::sync::atomic::Ordering::Relaxed)
    );
}

#[test]
fn watch_follows_changes_in_order() {
    let Some(etcd) = start("watch_follows_changes_in_order") else { return };
    let c = connect(&etcd);
    let start_rev = c.put(b"before", b"x").unwrap() + 1;
    let w = c.watch(b"w/", start_rev).unwrap();
    c.put(b"w/a", b"1").unwrap();
    c.put(b"elsewhere", b"x").unwrap();
    c.put(b"w/b", b"2").unwrap();
    c.delete(b"w/a").unwrap();
    let txn = c.txn(&[], &[Op::put(b"w/c".to_vec(), b"3".to_vec()), Op::put(b"w/d".to_vec(), b"4".to_vec())]).unwrap();
    let (evs, other) = changes(&w, 5);
    assert!(other.is_empty(), "{other:?}");
    assert_eq!(
        keys(&evs),
        [
            (EventKind::Put, "w/a"),
            (EventKind::Put, "w/b"),
            (EventKind::Delete, "w/a"),
            (EventKind::Put, "w/c"),
            (EventKind::Put, "w/d")
        ]
        .map(|(k, s)| (k, s.to_owned()))
    );
    assert_eq!(evs[1].kv.value, b"2");
    assert!(evs[2].kv.value.is_empty());
    assert_eq!((evs[3].kv.mod_revision, evs[4].kv.mod_revision), (txn.revision, txn.revision), "one txn, one revision");
    assert_eq!(w.next_revision(), txn.revision + 1);

    // Start 0 is "after now": earlier changes are not replayed.
    let now = c.watch(b"w/", 0).unwrap();
    c.put(b"w/e", b"5").unwrap();
    let (evs, _) = changes(&now, 1);
    assert_eq!(keys(&evs), [(EventKind::Put, "w/e".to_owned())]);
    // A watch from an old revision replays history.
    let replay = c.watch(b"w/", start_rev).unwrap();
    let (evs, _) = changes(&replay, 6);
    assert_eq!(keys(&evs)[5], (EventKind::Put, "w/e".to_owned()));
    drop(replay);
    now.stop();

    // Put → event latency on loopback, reported (not asserted): from sending the put to
    // receiving its event, next to the put's own round trip.
    let (mut lat, mut rtt) = (Vec::new(), Vec::new());
    for i in 0..100 {
        let t0 = Instant::now();
        c.put(b"w/lat", format!("{i}").as_bytes()).unwrap();
        rtt.push(t0.elapsed());
        let _ = changes(&w, 1);
        lat.push(t0.elapsed());
    }
    lat.sort();
    rtt.sort();
    eprintln!(
        "put→watch event, 100 puts: p50 {:?}, p90 {:?}, max {:?} (put round trip p50 {:?}, max {:?})",
        lat[50], lat[90], lat[99], rtt[50], rtt[99]
    );
    assert!(matches!(c.watch(b"w/", -1), Err(Error::InvalidArgument(_))));
}

#[test]
fn watch_survives_an_etcd_restart() {
    let Some(mut etcd) = start("watch_survives_an_etcd_restart") else { return };
    let c = Client::connect(&[&etcd.endpoint()], Options::new().request_timeout(Duration::from_secs(2))).unwrap();
    let from = c.put(b"x", b"x").unwrap() + 1;
    let w = c.watch_with(b"r/", from, quick()).unwrap();
    c.put(b"r/a", b"1").unwrap();
    c.put(b"r/b", b"2").unwrap();
    let (before, _) = changes(&w, 2);

    etcd.stop();
    match next_report(&w) {
        WatchEvent::Disconnected(e) => {
            one_line(&e);
        }
        other => panic!("expected a disconnection report, got {other:?}"),
    }
    let down = c.put(b"r/never", b"x").unwrap_err();
    assert!(matches!(down, Error::Unreachable { .. }), "{down:?}");
    assert!(one_line(&down).contains(&etcd.endpoint()));

    etcd.restart().unwrap();
    // Written right away, possibly before the watcher is back: it must still see them.
    c.put(b"r/c", b"3").unwrap();
    c.delete(b"r/a").unwrap();
    c.put(b"r/d", b"4").unwrap();
    let (after, other) = changes(&w, 3);
    assert!(
        other.iter().any(
            |e| matches!(e, WatchEvent::Reconnected { resumed_at } if *resumed_at == before[1].kv.mod_revision + 1)
        ),
        "{other:?}"
    );
    let all: Vec<Event> = before.into_iter().chain(after).collect();
    assert_eq!(
        keys(&all),
        [
            (EventKind::Put, "r/a"),
            (EventKind::Put, "r/b"),
            (EventKind::Put, "r/c"),
            (EventKind::Delete, "r/a"),
            (EventKind::Put, "r/d")
        ]
        .map(|(k, s)| (k, s.to_owned()))
    );
    assert!(all.windows(2).all(|p| p[0].kv.mod_revision < p[1].kv.mod_revision), "no duplicate, in order");
    assert_eq!(c.get(b"r/never").unwrap(), None, "the write while down did not happen");
    let t0 = Instant::now();
    w.stop();
    eprintln!("watch stop: joined in {:?}", t0.elapsed());
}

#[test]
fn watch_from_a_compacted_revision_reports_it() {
    let Some(etcd) = start("watch_from_a_compacted_revision_reports_it") else { return };
    let c = connect(&etcd);
    let first = c.put(b"cmp/k", b"0").unwrap();
    let mut last = first;
    for i in 1..5 {
        last = c.put(b"cmp/k", format!("{i}").as_bytes()).unwrap();
    }
    c.compact(last).unwrap();
    let w = c.watch(b"cmp/", first).unwrap();
    assert_eq!(next_report(&w), WatchEvent::Compacted { compact_revision: last });
    assert!(w.events().recv_timeout(EVENT_DEADLINE).is_err(), "the watcher ends after a compaction report");

    // The compaction revision itself is kept: resync from a fresh read works.
    let state = c.get_prefix(b"cmp/").unwrap();
    assert_eq!(state.kvs[0].value, b"4");
    let w = c.watch(b"cmp/", state.revision + 1).unwrap();
    c.put(b"cmp/k", b"5").unwrap();
    assert_eq!(keys(&changes(&w, 1).0), [(EventKind::Put, "cmp/k".to_owned())]);

    let again = c.compact(first).unwrap_err();
    assert_eq!(again, Error::Compacted { requested: first, compact_revision: None });
    one_line(&again);
}

#[test]
fn auth_refuses_without_or_with_wrong_credentials() {
    let Some(bin) = etcd_or_skip("auth_refuses_without_or_with_wrong_credentials") else { return };
    let mut etcd = Etcd::start_with(&bin, Config { auth_token_ttl: Some(1), ..Config::default() }).unwrap();
    etcd.enable_auth("rootpw", &[("nobody", "nopw")]).unwrap();
    let ep = etcd.endpoint();

    // No credentials: status answers, key calls are refused in one line.
    let anon = Client::connect(&[&ep], Options::new()).unwrap();
    for e in [anon.get(b"a/k").unwrap_err(), anon.put(b"a/k", b"v").unwrap_err()] {
        assert!(matches!(e, Error::AuthRequired { .. }), "{e:?}");
        one_line(&e);
    }
    let w = anon.watch_with(b"a/", 1, quick()).unwrap();
    assert!(matches!(next_report(&w), WatchEvent::Failed(Error::AuthRequired { .. })));

    // Wrong password: refused at connect, one line naming the user.
    let wrong = Client::connect(&[&ep], Options::new().credentials("root", "bad")).unwrap_err();
    assert!(matches!(wrong, Error::AuthFailed { ref user, .. } if user == "root"), "{wrong:?}");
    assert!(one_line(&wrong).contains("root"));

    // A user without a role: authenticated, but denied.
    let nobody = Client::connect(&[&ep], Options::new().credentials("nobody", "nopw")).unwrap();
    let denied = nobody.get(b"a/k").unwrap_err();
    assert!(matches!(denied, Error::PermissionDenied { .. }), "{denied:?}");
    one_line(&denied);

    // Right credentials work, also for a watch.
    let root = Client::connect(&[&ep], Options::new().credentials("root", "rootpw")).unwrap();
    let from = root.put(b"a/k", b"v").unwrap();
    assert_eq!(root.get(b"a/k").unwrap().unwrap().value, b"v");
    let w = root.watch_with(b"a/", from, quick()).unwrap();
    assert_eq!(keys(&changes(&w, 1).0), [(EventKind::Put, "a/k".to_owned())]);
    drop(w);

    // The token expires (TTL 1 s): the client authenticates again by itself.
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(root.get(b"a/k").unwrap().unwrap().value, b"v");
    // A restart forgets every token, too.
    etcd.restart().unwrap();
    root.put(b"a/k", b"w").unwrap();
    assert_eq!(root.get(b"a/k").unwrap().unwrap().value, b"w");
    assert!(matches!(anon.get(b"a/k"), Err(Error::AuthRequired { .. })), "still refused without credentials");
}

#[test]
fn etcd_down_fails_within_the_bound_and_failover_works() {
    let Some(mut etcd) = start("etcd_down_fails_within_the_bound_and_failover_works") else { return };
    let closed = format!("127.0.0.1:{}", support::free_loopback_port().unwrap());
    let ep = etcd.endpoint();
    let options = Options::new().connect_timeout(Duration::from_millis(500)).request_timeout(Duration::from_secs(2));
    // The first endpoint refuses connections: calls move on to the live one, writes included.
    let c = Client::connect(&[&closed, &ep], options.clone()).unwrap();
    c.put(b"d/k", b"v").unwrap();
    assert_eq!(c.get(b"d/k").unwrap().unwrap().value, b"v");

    etcd.stop();
    // The CLI's contract is a one-line error within 20 s; this is that bound, not a speed test.
    let t0 = Instant::now();
    let e = c.get(b"d/k").unwrap_err();
    let took = t0.elapsed();
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert!(matches!(e, Error::Unreachable { .. }), "{e:?}");
    let msg = one_line(&e);
    assert!(msg.contains(&closed) && msg.contains(&ep), "{msg}");
    let t0 = Instant::now();
    let e = Client::connect(&[&ep], options).unwrap_err();
    assert!(matches!(e, Error::Unreachable { .. }), "{e:?}");
    eprintln!("etcd down: get failed in {took:?}, connect in {:?}: {msg}", t0.elapsed());
}

#[cfg(feature = "tls")]
#[test]
fn tls_with_a_ca_file() {
    let Some(bin) = etcd_or_skip("tls_with_a_ca_file") else { return };
    if std::process::Command::new("openssl").arg("version").output().is_err() {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: openssl not installed (tls_with_a_ca_file makes its certificates with it)"
        );
        return;
    }
    let etcd = Etcd::start_with(&bin, Config { tls: true, ..Config::default() }).unwrap();
    let tls_ep = etcd.tls_endpoint().unwrap();
    let c = Client::connect(&[&tls_ep], Options::new().ca_file(etcd.ca_file())).unwrap();
    let from = c.put(b"t/k", b"v").unwrap();
    assert_eq!(c.get(b"t/k").unwrap().unwrap().value, b"v");
    let w = c.watch(b"t/", from).unwrap();
    assert_eq!(keys(&changes(&w, 1).0), [(EventKind::Put, "t/k".to_owned())]);

    // Plain http to the https port, and a CA that did not sign the server: errors, not panics.
    let plain = Client::connect(&[&format!("http://{tls_ep}")], Options::new()).unwrap_err();
    one_line(&plain);
    let wrong_ca = Client::connect(&[&tls_ep], Options::new().ca_file(etcd.dir().join("server.pem"))).unwrap_err();
    assert!(one_line(&wrong_ca).contains("TLS"), "{wrong_ca}");
    eprintln!("tls: plain http to https: {plain}; wrong CA: {wrong_ca}");
    let missing = Client::new(&[&tls_ep], Options::new().ca_file(etcd.dir().join("none.pem"))).unwrap_err();
    assert!(matches!(missing, Error::Tls(_)), "{missing:?}");
}

#[test]
fn an_idle_watch_reconnects_quietly_and_loses_nothing() {
    let Some(etcd) = start("an_idle_watch_reconnects_quietly_and_loses_nothing") else { return };
    let c = connect(&etcd);
    let from = c.put(b"i/a", b"1").unwrap();
    let options = WatchOptions { idle_reconnect: Duration::from_millis(200), ..quick() };
    let w = c.watch_with(b"i/", from, options).unwrap();
    assert_eq!(keys(&changes(&w, 1).0), [(EventKind::Put, "i/a".to_owned())]);
    // Several idle periods pass: each reopens the stream from the next revision, silently.
    std::thread::sleep(Duration::from_millis(1000));
    c.put(b"i/b", b"2").unwrap();
    std::thread::sleep(Duration::from_millis(500));
    c.put(b"i/c", b"3").unwrap();
    let (evs, other) = changes(&w, 2);
    assert_eq!(keys(&evs), [(EventKind::Put, "i/b".to_owned()), (EventKind::Put, "i/c".to_owned())]);
    assert!(other.is_empty(), "idle reconnects are not outages: {other:?}");
    assert!(w.events().try_recv().is_err(), "nothing delivered twice");
}

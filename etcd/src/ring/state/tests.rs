//! The stored state without etcd: round trips, the decoder's refusals, the changes' rules.

use super::*;
use hashroute::{AnyRouter, Router};
use proptest::prelude::*;

const P: &str = "/hr/test";

fn keys() -> Keys {
    Keys::new(P).unwrap()
}

fn ring_spec() -> RouterSpec {
    RouterSpec::new(Algorithm::Ring).with_vnodes(40)
}

fn token_spec() -> RouterSpec {
    RouterSpec::new(Algorithm::TokenRing).with_tokens_per_node(8)
}

fn node(name: &str) -> Node {
    Node::new(name)
}

fn joined(spec: RouterSpec, names: &[&str]) -> RingState {
    let mut s = RingState::new(spec).unwrap();
    for n in names {
        s = s.with_member(&node(n), false).unwrap();
    }
    s
}

fn roundtrip(s: &RingState) -> RingState {
    let entries = s.encode(&keys()).unwrap();
    RingState::decode(P, entries).unwrap()
}

fn decode_err(entries: &[(&[u8], &[u8])]) -> DecodeError {
    let e = RingState::decode(P, entries.iter().copied()).unwrap_err();
    assert!(!e.to_string().contains('\n'), "{e}");
    e
}

fn routes(r: &impl Router, n: u32) -> Vec<String> {
    (0..n).map(|k| r.node_name(r.route(format!("key-{k}").as_bytes())).to_owned()).collect()
}

#[test]
fn encode_decode_round_trips_and_routes_as_the_kernel() {
    let mut s = joined(ring_spec(), &["a", "b", "c"]);
    s = s.with_member(&node("d").with_weight(2.5).with_label("zone", "z1").with_label("rack", "r2"), false).unwrap();
    let back = roundtrip(&s);
    assert_eq!(back, s);
    assert_eq!(back.members().iter().map(Member::name).collect::<Vec<_>>(), ["a", "b", "c", "d"]);
    let nodes = NodeSet::new([node("a"), node("b"), node("c"), node("d").with_weight(2.5)]).unwrap();
    let kernel = ring_spec().build(nodes).unwrap();
    let router = back.router().unwrap();
    assert_eq!(router.fingerprint(), hashroute::fingerprint(&kernel), "labels do not change routes");
    assert_eq!(routes(&router, 500), routes(&kernel, 500));
    assert_eq!(back.serial(), 5, "init and four joins");
}

#[test]
fn weights_come_back_bit_for_bit() {
    let weights = [1.0 / 3.0, 0.1 + 0.2, 1e-300, 7.0e15 + 1.0, f64::MAX / 4.0, 5e-324];
    let mut s = RingState::new(RouterSpec::new(Algorithm::Rendezvous)).unwrap();
    for (i, w) in weights.iter().enumerate() {
        s = s.with_member(&node(&format!("n{i}")).with_weight(*w), false).unwrap();
    }
    let back = roundtrip(&s);
    for (m, w) in back.members().iter().zip(weights) {
        assert_eq!(m.weight().to_bits(), w.to_bits(), "{}", m.name());
    }
}

#[test]
fn garbage_is_refused_with_a_clear_error() {
    let s = joined(ring_spec(), &["a", "b"]);
    let good = s.encode(&keys()).unwrap();
    let (ck, cv) = (&good[0].0, &good[0].1);
    let (ak, av) = (&good[1].0, &good[1].1);
    assert!(matches!(RingState::decode(P, Vec::<(Vec<u8>, Vec<u8>)>::new()), Err(DecodeError::NoRing { .. })));
    assert!(matches!(decode_err(&[(ck, b"\xff\x00garbage")]), DecodeError::Malformed { .. }));
    assert!(matches!(decode_err(&[(ck, cv), (b"/hr/test/other", b"x")]), DecodeError::UnknownKey { .. }));
    assert!(matches!(decode_err(&[(ck, cv), (b"/elsewhere", b"x")]), DecodeError::UnknownKey { .. }));
    assert!(matches!(decode_err(&[(ck, cv), (b"/hr/test/members/", av)]), DecodeError::UnknownKey { .. }));
    assert!(matches!(decode_err(&[(ck, cv), (b"/hr/test/members/a b", av)]), DecodeError::UnknownKey { .. }));
    assert!(matches!(decode_err(&[(ak, av)]), DecodeError::Inconsistent(_)), "a member without its config");
    assert!(matches!(decode_err(&[(ck, cv), (ak, av)]), DecodeError::Inconsistent(_)), "count mismatch");
    assert!(matches!(decode_err(&[(ck, cv), (ck, cv)]), DecodeError::Inconsistent(_)));
    let cfg = String::from_utf8(cv.clone()).unwrap();
    let member = String::from_utf8(av.clone()).unwrap();
    let with = |c: &str, m: &str| {
        let b = good[2].clone();
        decode_err(&[(ck, c.as_bytes()), (ak, m.as_bytes()), (&b.0, &b.1)])
    };
    let bad_configs = [
        cfg.replace(FORMAT, "hashroute-ring/9"),
        cfg.replace("\"ring\"", "\"no-such-algo\""),
        cfg.replace("\"ring\"", "\"memento\"").replace(",\"vnodes\":40", ""),
        cfg.replace("\"vnodes\":40", "\"vnodes\":0"),
        cfg.replace("\"serial\":3", "\"serial\":0"),
        cfg.replace("{", "{\"extra\":1,"),
        cfg.replace("\"members\":2", "\"members\":-2"),
    ];
    for c in &bad_configs {
        assert_ne!(c, &cfg);
        with(c, &member);
    }
    let bad_members = [
        member.replace("\"weight\":1.0", "\"weight\":\"1\""),
        member.replace("\"weight\":1.0", "\"weight\":0"),
        member.replace("\"weight\":1.0", "\"weight\":-1"),
        member.replace("\"weight\":1.0", "\"weight\":1e400"),
        member.replace("\"state\":\"active\"", "\"state\":\"gone\""),
        member.replace("\"serial\":2", "\"serial\":9"),
        member.replace("\"order\":0", "\"order\":1"),
        member.replace("\"order\":0", "\"order\":99"),
        member.replace("}", ",\"tokens\":[1,2]}"),
        member.replace("}", ",\"labels\":{\"zone\":\"a b\"}}"),
        member.replace("}", ",\"surprise\":true}"),
        member.replace("\"order\":0", "\"order\":0,\"order\":0"),
    ];
    for m in &bad_members {
        assert_ne!(m, &member);
        with(&cfg, m);
    }
}

#[test]
fn decoding_arbitrary_bytes_never_panics() {
    let s = joined(token_spec(), &["a", "b", "c"]);
    let good = s.encode(&keys()).unwrap();
    proptest!(ProptestConfig::with_cases(300), |(which in 0usize..4, at in any::<prop::sample::Index>(), byte in any::<u8>(), cut in any::<bool>())| {
        let mut entries = good.clone();
        let (_, v) = &mut entries[which];
        let i = at.index(v.len());
        if cut { v.truncate(i) } else { v[i] = byte }
        if let Ok(state) = RingState::decode(P, entries) {
            // A state that decodes builds or refuses, never panics.
            let _ = state.router().map(|r| r.fingerprint());
        }
    });
    proptest!(ProptestConfig::with_cases(300), |(key in prop::collection::vec(any::<u8>(), 0..40), value in prop::collection::vec(any::<u8>(), 0..200))| {
        let _ = RingState::decode(P, [(key.clone(), value.clone())]);
        let _ = RingState::decode(P, [(good[0].0.clone(), value)]);
    });
}

#[test]
fn down_routes_around_and_up_restores() {
    let s = joined(ring_spec(), &["a", "b", "c", "d"]);
    let before = s.router().unwrap();
    let down = s.with_member_state("b", MemberState::Down).unwrap();
    let r = roundtrip(&down).router().unwrap();
    assert_ne!(r.fingerprint(), before.fingerprint(), "a member down changes the fingerprint");
    assert_eq!(r.down_count(), 1);
    for (k, (was, now)) in routes(&before, 2000).iter().zip(routes(&r, 2000)).enumerate() {
        assert_ne!(now, "b", "key {k}");
        if was != "b" {
            assert_eq!(was, &now, "key {k} moved although its node is up");
        }
    }
    let up = down.with_member_state("b", MemberState::Active).unwrap();
    assert_eq!(up.router().unwrap().fingerprint(), before.fingerprint());
    assert_eq!(down.with_member_state("b", MemberState::Down).unwrap().serial(), down.serial(), "no-op");
    // The last live member cannot go down.
    let mut all = s.clone();
    for n in ["a", "b", "c"] {
        all = all.with_member_state(n, MemberState::Down).unwrap();
    }
    assert!(matches!(all.with_member_state("d", MemberState::Down), Err(RingError::Refused(_))));
    assert!(matches!(s.with_member_state("zz", MemberState::Down), Err(RingError::UnknownMember { .. })));
}

#[test]
fn staged_joins_and_drains() {
    let s = joined(ring_spec(), &["a", "b", "c"]);
    let fp = s.router().unwrap().fingerprint();
    let staged = s.with_member(&node("d"), true).unwrap().with_member_state("a", MemberState::Draining).unwrap();
    assert!(staged.has_staged_changes());
    assert_eq!(staged.router().unwrap().fingerprint(), fp, "staged changes do not move a key");
    let target = staged.target_router().unwrap();
    let expected = joined(ring_spec(), &["b", "c", "d"]).router().unwrap();
    assert_eq!(target.fingerprint(), expected.fingerprint());
    let done = staged.with_member_state("d", MemberState::Active).unwrap().without_member("a").unwrap();
    assert_eq!(done.router().unwrap().fingerprint(), expected.fingerprint());
    assert!(!done.has_staged_changes());
    assert_eq!(done.member("d").unwrap().order(), 4, "activation appends");
    assert!(matches!(
        staged.with_member_state("d", MemberState::Down),
        Err(RingError::InvalidTransition { state: MemberState::Joining, .. })
    ));
    // Staged joins into an empty ring: nothing routable until one is up.
    let empty = RingState::new(ring_spec()).unwrap().with_member(&node("x"), true).unwrap();
    assert_eq!(empty.router().unwrap_err(), DecodeError::Empty);
    assert!(empty.with_member_state("x", MemberState::Active).unwrap().router().is_ok());
    // The last routed member cannot leave, nor can every member drain.
    let one = joined(ring_spec(), &["a"]);
    assert!(matches!(one.without_member("a"), Err(RingError::Refused(_))));
    assert!(matches!(one.with_member_state("a", MemberState::Draining), Err(RingError::Refused(_))));
}

#[test]
fn member_checks() {
    let s = joined(ring_spec(), &["a"]);
    for bad in ["", "a b", "tab\there", "new\nline", &"x".repeat(MAX_NAME_BYTES + 1)] {
        assert!(matches!(s.with_member(&node(bad), false), Err(RingError::InvalidMember { .. })), "{bad:?}");
    }
    assert!(matches!(s.with_member(&node("a"), false), Err(RingError::DuplicateMember { .. })));
    assert!(matches!(s.with_member(&node("b").with_weight(0.0), false), Err(RingError::InvalidMember { .. })));
    assert!(matches!(s.with_member(&node("b").with_label("zone", "a=b"), false), Err(RingError::InvalidMember { .. })));
    assert!(matches!(s.with_member(&node("b").with_tokens([1]), false), Err(RingError::InvalidMember { .. })));
    assert!(matches!(s.with_weight("a", f64::NAN), Err(RingError::InvalidMember { .. })));
    let jump = joined(RouterSpec::new(Algorithm::Jump), &["a", "b"]);
    assert!(matches!(jump.with_weight("a", 2.0), Err(RingError::Refused(_))), "jump has no weights");
    assert!(matches!(jump.without_member("a"), Err(RingError::Refused(_))), "jump removes only its last node");
    assert!(jump.without_member("b").is_ok());
    for algo in HISTORY_DEPENDENT {
        assert!(matches!(RingState::new(RouterSpec::new(algo)), Err(RingError::Unstorable(_))), "{algo}");
    }
}

#[test]
fn token_ring_joins_allocate_and_move_keys_only_to_the_new_member() {
    let mut s = RingState::new(token_spec()).unwrap();
    let mut previous: Option<RingRouter> = None;
    for (i, name) in ["a", "b", "c", "d", "e"].iter().enumerate() {
        let zone = if i % 2 == 0 { "dc1" } else { "dc2" };
        s = roundtrip(&s.with_member(&node(name).with_label("zone", zone), false).unwrap());
        let m = s.member(name).unwrap();
        assert_eq!(m.tokens().len(), 8, "{name} got V tokens");
        let r = s.router().unwrap();
        if let Some(prev) = &previous {
            for (was, now) in routes(prev, 3000).iter().zip(routes(&r, 3000)) {
                assert!(was == &now || now == *name, "a key moved from {was} to {now}, not to {name}");
            }
            for old in prev.state().members() {
                assert_eq!(s.member(old.name()).unwrap().tokens(), old.tokens(), "a join keeps other tokens");
            }
        }
        previous = Some(r);
    }
    let all: Vec<i64> = s.members().iter().flat_map(|m| m.tokens().iter().copied()).collect();
    let mut unique = all.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), all.len(), "no token twice");
    // The stored tokens are the ring: the kernel's token ring over them routes the same.
    let kernel = hashroute::TokenRing::from_nodes(s.members().iter().map(Member::node)).unwrap();
    assert_eq!(s.router().unwrap().fingerprint(), hashroute::fingerprint(&kernel));
    // A leave hands ranges to others through the allocator: only the leaver's keys move.
    let before = s.router().unwrap();
    let left = roundtrip(&s.without_member("c").unwrap());
    for (was, now) in routes(&before, 3000).iter().zip(routes(&left.router().unwrap(), 3000)) {
        assert!(was == &now || was == "c", "{was} -> {now}");
    }
    // Explicit tokens are kept; a clash is refused.
    let clash = s.member("a").unwrap().tokens()[0];
    assert!(matches!(s.with_member(&node("x").with_tokens([clash]), false), Err(RingError::Refused(_))));
    let own = s.with_member(&node("y").with_tokens([12345, -9]), false).unwrap();
    assert_eq!(own.member("y").unwrap().tokens(), [-9, 12345]);
}

/// Which algorithms a member list determines: a rebuild from the members must route as the
/// kernel's incremental change does, or a change would move other keys than the kernel's change
/// moves. The history-dependent ones are refused at init.
#[test]
fn stored_algorithms_rebuild_to_their_incremental_changes() {
    for &algo in Algorithm::ALL {
        let spec = RouterSpec::new(algo);
        if RingState::new(spec.clone()).is_err() || algo == Algorithm::TokenRing {
            continue;
        }
        let names = ["n0", "n1", "n2", "n3", "n4"];
        let s = joined(spec.clone(), &names);
        let full = s.router().unwrap();
        let incremental: AnyRouter = full.configured().with_node(node("n5")).unwrap();
        let rebuilt = s.with_member(&node("n5"), false).unwrap().router().unwrap();
        assert_eq!(hashroute::fingerprint(&incremental), rebuilt.fingerprint(), "{algo}: join");
        for leaving in ["n4", "n1"] {
            // Jump and its family remove only their last node; the store refuses the rest too.
            let Ok(incremental) = full.configured().without_node(leaving) else {
                assert!(s.without_member(leaving).is_err(), "{algo}: leave {leaving}");
                continue;
            };
            let rebuilt = s.without_member(leaving).unwrap().router().unwrap();
            assert_eq!(hashroute::fingerprint(&incremental), rebuilt.fingerprint(), "{algo}: leave {leaving}");
        }
        if algo.supports_weights() {
            let incremental = full.configured().with_weight("n2", 3.0).unwrap();
            let rebuilt = s.with_weight("n2", 3.0).unwrap().router().unwrap();
            assert_eq!(hashroute::fingerprint(&incremental), rebuilt.fingerprint(), "{algo}: weight");
        }
    }
}

/// The refused algorithms do depend on their history: a rebuild differs from their incremental
/// change (the reason they are refused, checked so that the list stays honest).
#[test]
fn refused_algorithms_differ_from_a_rebuild() {
    for algo in HISTORY_DEPENDENT {
        let spec = RouterSpec::new(algo);
        let names = ["n0", "n1", "n2", "n3", "n4"];
        let full = spec.build(NodeSet::from_names(names).unwrap()).unwrap();
        let differs = |incremental: &AnyRouter, names: &[&str]| {
            let rebuilt = spec.build(NodeSet::from_names(names).unwrap()).unwrap();
            hashroute::fingerprint(incremental) != hashroute::fingerprint(&rebuilt)
        };
        let joined = full.with_node(node("n5")).map(|r| differs(&r, &["n0", "n1", "n2", "n3", "n4", "n5"]));
        let left = full.without_node("n1").map(|r| differs(&r, &["n0", "n2", "n3", "n4"]));
        assert!(joined == Ok(true) || left == Ok(true), "{algo}: {joined:?} {left:?}");
    }
}

#[test]
fn change_ids_round_trip_and_the_log_keeps_the_newest() {
    let mut s = joined(ring_spec(), &["a"]);
    let ids: Vec<ChangeId> = (0..3).map(|_| ChangeId::new()).collect();
    assert_ne!(ids[0], ids[1]);
    assert_eq!(ids[0].as_str().len(), 32);
    for (i, id) in ids.iter().enumerate() {
        s = s.with_member(&node(&format!("m{i}")), false).unwrap().with_change_id(id);
    }
    let back = roundtrip(&s);
    assert_eq!(back, s);
    assert_eq!(back.change_serial(&ids[2]), Some(s.serial()));
    assert_eq!(back.change_serial(&ids[0]), Some(s.serial() - 2));
    assert_eq!(back.change_serial(&ChangeId::new()), None);
    assert!(back.change_log_covers(2), "a log that is not full covers everything");
    // Full: the oldest ids drop out, and absence no longer proves anything for them.
    let first = ChangeId::new();
    let mut t = joined(ring_spec(), &["a"]).with_weight("a", 2.0).unwrap().with_change_id(&first);
    let first_serial = t.serial();
    for i in 0..CHANGE_LOG {
        t = t.with_weight("a", if i % 2 == 0 { 3.0 } else { 2.0 }).unwrap().with_change_id(&ChangeId::new());
    }
    assert_eq!(t.changes.len(), CHANGE_LOG);
    assert_eq!(t.change_serial(&first), None);
    assert!(!t.change_log_covers(first_serial));
    assert!(t.change_log_covers(first_serial + 1));
    assert_eq!(roundtrip(&t), t);
    assert!("abc-_9".parse::<ChangeId>().is_ok());
    for bad in ["", "a b", "é", "a/b", &"x".repeat(MAX_CHANGE_ID_BYTES + 1)] {
        let e = bad.parse::<ChangeId>().unwrap_err();
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn a_bad_change_log_is_refused() {
    let s = joined(ring_spec(), &["a", "b"]);
    assert_eq!(s.serial(), 3);
    let entries = s.encode(&keys()).unwrap();
    let config = String::from_utf8(entries[0].1.clone()).unwrap();
    let with_log = |log: &str| {
        let mut e = entries.clone();
        e[0].1 = format!("{},\"changes\":{log}}}", &config[..config.len() - 1]).into_bytes();
        e
    };
    assert!(RingState::decode(P, with_log(r#"[{"id":"x","serial":2},{"id":"y","serial":3}]"#)).is_ok());
    let too_many: Vec<String> = (0..=CHANGE_LOG).map(|i| format!(r#"{{"id":"i{i}","serial":3}}"#)).collect();
    let too_many = format!("[{}]", too_many.join(","));
    for log in [
        r#"[{"id":"x","serial":1}]"#,
        r#"[{"id":"x","serial":4}]"#,
        r#"[{"id":"x","serial":3},{"id":"y","serial":2}]"#,
        r#"[{"id":"x","serial":2},{"id":"x","serial":3}]"#,
        r#"[{"id":"a b","serial":2}]"#,
        r#"[{"id":"x","serial":2,"extra":1}]"#,
        r#"[{"id":"x"}]"#,
        r#"{"id":"x"}"#,
        too_many.as_str(),
    ] {
        let e = RingState::decode(P, with_log(log)).unwrap_err();
        assert!(matches!(e, DecodeError::Malformed { .. }), "{log}: {e:?}");
        assert!(!e.to_string().contains('\n'), "{e}");
    }
}

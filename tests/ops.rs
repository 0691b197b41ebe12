//! Operating a cluster: live swaps under concurrent readers, migration plans against sampling,
//! topology placement over several routers, frozen fingerprints.

use hashroute::migration::{plan, plan_sampled, sampled_fraction, KeySpace};
use hashroute::placement::replicas_with_policy;
use hashroute::placement::PlacementPolicy;
use hashroute::{
    fingerprint, Error, Jump, Ketama, KetamaVariant, KeyHasher, Modulo, Node, NodeSet, RedisSlots, Ring, Router,
};
use proptest::prelude::*;

fn keys(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| format!("user:{i}").into_bytes()).collect()
}

/// The plan between two routers that must be exact (both with arcs placing keys alike).
fn exact_plan(before: &dyn Router, after: &dyn Router) -> Result<hashroute::MigrationPlan, Error> {
    let p = plan(before, after)?;
    assert!(p.is_exact(), "{} -> {}: expected an exact plan", before.algorithm(), after.algorithm());
    Ok(p)
}

fn refs(keys: &[Vec<u8>]) -> Vec<&[u8]> {
    keys.iter().map(Vec::as_slice).collect()
}

// ---------------------------------------------------------------- SharedRouter

#[cfg(feature = "shared")]
#[test]
fn readers_see_consistent_generations_through_many_swaps() {
    use hashroute::SharedRouter;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    const CONFIGS: usize = 7;
    const SWAPS: u64 = 1500;
    const READERS: usize = 3;
    let probe = keys(64);
    // Seven different memberships; generation g is configuration g % 7.
    let configs: Vec<Ring> = (0..CONFIGS)
        .map(|c| {
            let names: Vec<String> = (0..6 + c).map(|i| format!("n{}", i * (c + 1))).collect();
            Ring::builder().vnodes(20).nodes(&names).build().unwrap()
        })
        .collect();
    let expected: Vec<Vec<String>> =
        configs.iter().map(|r| probe.iter().map(|k| r.node_name(r.route(k)).to_owned()).collect()).collect();
    let shared = SharedRouter::new(configs[0].clone());
    let done = AtomicBool::new(false);
    let checked = AtomicU64::new(0);
    let max_gen_seen = AtomicU64::new(0);
    std::thread::scope(|s| {
        for t in 0..READERS {
            let (shared, done, checked, max_gen_seen, expected, probe) =
                (&shared, &done, &checked, &max_gen_seen, &expected, &probe);
            s.spawn(move || {
                let mut i = t;
                let mut local = 0u64;
                while !done.load(Ordering::Acquire) || local == 0 {
                    let snap = shared.load();
                    let generation = snap.generation();
                    let table = &expected[(generation % CONFIGS as u64) as usize];
                    let k = i % probe.len();
                    assert_eq!(snap.node_name(snap.route(&probe[k])), table[k], "generation {generation}, key {k}");
                    max_gen_seen.fetch_max(generation, Ordering::Relaxed);
                    local += 1;
                    i += 7;
                }
                checked.fetch_add(local, Ordering::Relaxed);
            });
        }
        for g in 1..=SWAPS {
            let published = shared.store(configs[(g % CONFIGS as u64) as usize].clone());
            assert_eq!(published, g);
            if g % 64 == 0 {
                std::thread::yield_now();
            }
        }
        done.store(true, Ordering::Release);
    });
    assert_eq!(shared.generation(), SWAPS);
    assert!(checked.load(Ordering::Relaxed) >= READERS as u64);
    assert!(max_gen_seen.load(Ordering::Relaxed) > 0, "readers never saw a swap");
}

// ---------------------------------------------------------------- migration

fn ring(names: &[String], v: u64) -> Ring {
    Ring::builder().vnodes(v).nodes(names).build().unwrap()
}

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("cache-{i}")).collect()
}

#[test]
fn adding_a_node_moves_ranges_only_to_it() {
    let before = ring(&names(10), 100);
    let after = before.with_node(Node::new("cache-new")).unwrap();
    let p = exact_plan(&before, &after).unwrap();
    assert!(p.moves().len() > 0);
    assert!(p.moves().all(|m| m.to == "cache-new"));
    // About 1/11 of keys move; exact value from arc lengths.
    assert!((p.moved_fraction() - 1.0 / 11.0).abs() < 0.03, "{}", p.moved_fraction());
    assert!((p.share("cache-new").unwrap().moved_in - p.moved_fraction()).abs() < 1e-12);
    // Removing it again is the exact inverse.
    let back = exact_plan(&after, &before).unwrap();
    assert!(back.moves().all(|m| m.from == "cache-new"));
    assert_eq!(back.moved_units(), p.moved_units());
}

#[test]
fn exact_fraction_matches_sampled_fraction() {
    let before = ring(&names(20), 50);
    let after = before.without_node("cache-3").unwrap().with_weight("cache-7", 3.0).unwrap();
    let p = exact_plan(&before, &after).unwrap();
    let sample = keys(200_000);
    let sampled = sampled_fraction(&before, &after, &refs(&sample));
    let f = p.moved_fraction();
    // Binomial standard error; 5 sigma.
    let sigma = (f * (1.0 - f) / sample.len() as f64).sqrt();
    assert!((sampled - f).abs() < 5.0 * sigma + 1e-9, "exact {f} sampled {sampled} sigma {sigma}");
    let est = plan_sampled(&before, &after, &refs(&sample)).unwrap();
    for share in p.shares() {
        let s = est.share(&share.name).unwrap();
        assert!((s.moved_out - share.moved_out).abs() < 0.01, "{}: {} vs {}", share.name, s.moved_out, share.moved_out);
        assert!((s.after - share.after).abs() < 0.01);
    }
}

#[test]
fn plan_on_identical_routers_moves_nothing() {
    let r = ring(&names(8), 40);
    let shuffled: Vec<String> = names(8).into_iter().rev().collect();
    assert_eq!(plan(&r, &ring(&shuffled, 40)).unwrap().moved_units(), 0);
    let m = Modulo::from_names(names(5)).unwrap();
    let p = plan(&m, &m.clone()).unwrap();
    assert!(!p.is_exact());
    assert_eq!(p.moved_fraction(), 0.0);
    let boxed: Box<dyn Router> = Box::new(r.clone());
    assert_eq!(plan(&*boxed, &r).unwrap().moved_fraction(), 0.0);
}

#[test]
fn modulo_growth_moves_most_keys_jump_few() {
    let h = KeyHasher::default();
    let m10 = Modulo::builder().node_set(NodeSet::from_names(names(10)).unwrap()).hasher(h).build().unwrap();
    let m11 = Modulo::builder().node_set(NodeSet::from_names(names(11)).unwrap()).hasher(h).build().unwrap();
    assert!(plan(&m10, &m11).unwrap().moved_fraction() > 0.85);
    let j10 = Jump::builder().node_set(NodeSet::from_names(names(10)).unwrap()).hasher(h).build().unwrap();
    let j11 = Jump::builder().node_set(NodeSet::from_names(names(11)).unwrap()).hasher(h).build().unwrap();
    let p = plan(&j10, &j11).unwrap();
    assert!((p.moved_fraction() - 1.0 / 11.0).abs() < 0.01);
    assert!(p.shares().iter().filter(|s| s.moved_in > 0.0).all(|s| s.name == "cache-10"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// A hash moves exactly when it lies in one of the plan's ranges, with the plan's owners.
    #[test]
    fn ranges_agree_with_route_hash(
        n in 1usize..6,
        v in 1u64..20,
        change in 0u8..3,
        hashes in proptest::collection::vec(any::<u64>(), 64),
    ) {
        let before = ring(&names(n), v);
        let after = match change {
            0 => before.with_node(Node::new("x")).unwrap(),
            1 if n > 1 => before.without_node("cache-0").unwrap(),
            _ => before.with_weight("cache-0", 2.5).unwrap(),
        };
        let p = exact_plan(&before, &after).unwrap();
        let moves: Vec<_> = p.moves().collect();
        // Probe the range edges too (adversarial inputs).
        let mut probes = hashes.clone();
        for m in &moves {
            probes.extend([m.start, m.end, m.start.wrapping_sub(1), m.end.wrapping_add(1)]);
        }
        probes.extend(before.points().iter().chain(after.points()).flat_map(|&p| [p, p.wrapping_add(1)]));
        for h in probes {
            let old = before.node_name(before.route_hash(h).unwrap());
            let new = after.node_name(after.route_hash(h).unwrap());
            let hit = moves.iter().find(|m| m.start <= h && h <= m.end);
            match hit {
                Some(m) => {
                    prop_assert_eq!((m.from, m.to), (old, new));
                }
                None => prop_assert_eq!(old, new, "hash {:#x} moved outside every range", h),
            }
        }
        let total: u128 = moves.iter().map(|m| m.len()).sum();
        prop_assert_eq!(total, p.moved_units());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    /// Ketama plans (both lookup rules) agree with `route_hash32` on random and edge hashes.
    #[test]
    fn ketama_ranges_agree_with_route_hash32(
        n in 1usize..5,
        variant in 0usize..5,
        other in 0usize..5,
        grow in any::<bool>(),
        hashes in proptest::collection::vec(any::<u32>(), 64),
    ) {
        let set = NodeSet::from_names(names(n)).unwrap();
        let before = Ketama::builder().node_set(set).variant(KetamaVariant::ALL[variant]).build().unwrap();
        let after = if grow {
            before.with_node(Node::new("x")).unwrap()
        } else {
            Ketama::builder().node_set(before.nodes().clone()).variant(KetamaVariant::ALL[other]).build().unwrap()
        };
        let p = exact_plan(&before, &after).unwrap();
        prop_assert_eq!(p.space(), KeySpace::Hash32);
        let moves: Vec<_> = p.moves().collect();
        let mut probes = hashes.clone();
        for m in &moves {
            let (s, e) = (m.start as u32, m.end as u32);
            probes.extend([s, e, s.wrapping_sub(1), e.wrapping_add(1)]);
        }
        probes.extend(before.points().iter().chain(after.points()).flat_map(|&p| [p, p.wrapping_add(1), p.wrapping_sub(1)]));
        probes.extend([0, u32::MAX]);
        for h in probes {
            let old = before.node_name(before.route_hash32(h));
            let new = after.node_name(after.route_hash32(h));
            match moves.iter().find(|m| m.start <= u64::from(h) && u64::from(h) <= m.end) {
                Some(m) => prop_assert_eq!((m.from, m.to), (old, new)),
                None => prop_assert_eq!(old, new, "hash {:#x} moved outside every range", h),
            }
        }
    }
}

#[test]
fn ketama_and_slots_dispatch_exactly() {
    let set = NodeSet::from_names(["a:11211", "b:11211", "c:11211"]).unwrap();
    let k1 = Ketama::builder().node_set(set.clone()).variant(KetamaVariant::Libketama).build().unwrap();
    let k2 = k1.with_node(Node::new("d:11211")).unwrap();
    let p = plan(&k1, &k2).unwrap();
    assert!(p.is_exact());
    assert!(p.moves().all(|m| m.to == "d:11211"));
    let sample = keys(100_000);
    let sampled = sampled_fraction(&k1, &k2, &refs(&sample));
    assert!((sampled - p.moved_fraction()).abs() < 0.01, "{sampled} vs {}", p.moved_fraction());

    let s1 = RedisSlots::builder().node_set(set).build().unwrap();
    let s2 = s1.move_slots(100..=199, "c:11211").unwrap();
    let p = exact_plan(&s1, &s2).unwrap();
    let moves: Vec<_> = p.moves().map(|m| (m.start, m.end, m.from, m.to)).collect();
    assert_eq!(moves, [(100, 199, "a:11211", "c:11211")]);
    assert_eq!(p.moved_units(), 100);
    assert_eq!(plan(&s1, &s2).unwrap().moved_units(), 100);
    assert!(p.to_string().contains("100..=199 a:11211 -> c:11211"));
    assert_eq!(exact_plan(&s1, &s1).unwrap().moved_units(), 0);
}

// ---------------------------------------------------------------- placement

fn zoned_nodes(zones: &[&str], per_zone: usize) -> NodeSet {
    NodeSet::new(zones.iter().flat_map(|z| {
        (0..per_zone).map(move |i| {
            Node::new(format!("{z}-{i}")).with_label("zone", *z).with_label("host", format!("h{}", i / 2))
        })
    }))
    .unwrap()
}

#[test]
fn placement_works_over_every_router_with_a_preference_list() {
    let set = zoned_nodes(&["a", "b", "c"], 4);
    let routers: Vec<Box<dyn Router>> = vec![
        Box::new(Ring::builder().node_set(set.clone()).build().unwrap()),
        Box::new(Modulo::builder().node_set(set.clone()).hasher(KeyHasher::default()).build().unwrap()),
        Box::new(Jump::builder().node_set(set.clone()).hasher(KeyHasher::default()).build().unwrap()),
    ];
    let policy = PlacementPolicy::strict(["zone"]);
    for r in &routers {
        for k in keys(300) {
            let reps = replicas_with_policy(&**r, &k, 3, &policy).unwrap();
            assert_eq!(reps[0], r.route(&k), "{}", r.algorithm());
            let mut zones: Vec<&str> = reps.iter().map(|&id| r.nodes().get(id).label("zone").unwrap()).collect();
            zones.sort();
            assert_eq!(zones, ["a", "b", "c"], "{}", r.algorithm());
        }
        let err = replicas_with_policy(&**r, b"k", 4, &policy).unwrap_err();
        assert!(matches!(err, Error::Placement(_)), "{err}");
    }
}

#[test]
fn placement_is_deterministic_and_order_independent_for_rings() {
    let set = zoned_nodes(&["a", "b"], 6);
    let reversed = NodeSet::new(set.as_slice().iter().rev().cloned()).unwrap();
    let r1 = Ring::builder().node_set(set).build().unwrap();
    let r2 = Ring::builder().node_set(reversed).build().unwrap();
    let policy = PlacementPolicy::best_effort(["zone", "host"]);
    for k in keys(300) {
        let a: Vec<&str> =
            replicas_with_policy(&r1, &k, 5, &policy).unwrap().iter().map(|&i| r1.node_name(i)).collect();
        let b: Vec<&str> =
            replicas_with_policy(&r2, &k, 5, &policy).unwrap().iter().map(|&i| r2.node_name(i)).collect();
        assert_eq!(a, b);
    }
}

// ---------------------------------------------------------------- fingerprints

/// Frozen values: a change here means routes changed (or the encoding's version did).
#[test]
fn golden_fingerprints() {
    let ring = Ring::builder().vnodes(160).nodes(["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"]).build();
    let jump = Jump::builder()
        .node_set(NodeSet::from_names(["s0", "s1", "s2", "s3"]).unwrap())
        .hasher(KeyHasher::default())
        .build()
        .unwrap();
    let modulo = Modulo::builder()
        .node_set(NodeSet::from_names(["s0", "s1"]).unwrap())
        .hasher(KeyHasher::Murmur3X64 { seed: 7 })
        .build()
        .unwrap();
    let got =
        [fingerprint(&ring.unwrap()).to_string(), fingerprint(&jump).to_string(), fingerprint(&modulo).to_string()];
    assert_eq!(got, GOLDEN);
}

const GOLDEN: [&str; 3] =
    ["aba4c3ea365610407903d2230fe2f1bb", "8fa8fe4423a0bfbfc3a1db20b0a16951", "fbcd78fe292646f2320a0c0cbe072aa8"];

#[test]
fn golden_fingerprints_ketama_and_slots() {
    let set = NodeSet::from_names(["10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"]).unwrap();
    let ketama = Ketama::builder().node_set(set.clone()).variant(KetamaVariant::Libketama).build().unwrap();
    let slots = RedisSlots::builder().node_set(set.clone()).build().unwrap();
    let got = [fingerprint(&ketama).to_string(), fingerprint(&slots).to_string()];
    assert_eq!(got, GOLDEN_KS);
    // Ketama ignores node order; slots do not.
    let reversed = NodeSet::new(set.as_slice().iter().rev().cloned()).unwrap();
    assert_eq!(
        fingerprint(&Ketama::builder().node_set(reversed.clone()).variant(KetamaVariant::Libketama).build().unwrap()),
        fingerprint(&ketama)
    );
    assert_ne!(fingerprint(&RedisSlots::builder().node_set(reversed).build().unwrap()), fingerprint(&slots));
    assert_ne!(
        fingerprint(&Ketama::builder().node_set(set).variant(KetamaVariant::Uhashring).build().unwrap()),
        fingerprint(&ketama)
    );
}

const GOLDEN_KS: [&str; 2] = ["2fdb7608c4774b2a718beb5e29d09cf8", "ea5fafb167b04c6824b1c2cad2c5dd3b"];

#[test]
fn fingerprint_encoding_starts_with_version_and_algorithm() {
    let r = Ring::builder().vnodes(1).nodes(["a"]).build().unwrap();
    let bytes = r.canonical_bytes();
    assert_eq!(&bytes[8..32], b"hashroute.fingerprint.v1");
    assert_eq!(&bytes[40..44], b"ring");
}

/// The migration plan's sampled path over the jump family: growth moves about 1/(N+1) of
/// the keys, all to the new node; a JumpBackAnchor removal moves only the removed node's share.
#[test]
fn jump_family_plans_are_sampled_and_minimal() {
    let h = KeyHasher::default();
    let grow = |b: fn(NodeSet) -> Box<dyn Router>| {
        let p =
            plan(&*b(NodeSet::from_names(names(10)).unwrap()), &*b(NodeSet::from_names(names(11)).unwrap())).unwrap();
        assert!(!p.is_exact());
        assert!((p.moved_fraction() - 1.0 / 11.0).abs() < 0.015, "{}", p.moved_fraction());
        assert!(p.shares().iter().filter(|s| s.moved_in > 0.0).all(|s| s.name == "cache-10"));
    };
    grow(|s| Box::new(hashroute::JumpBack::builder().node_set(s).hasher(KeyHasher::default()).build().unwrap()));
    grow(|s| Box::new(hashroute::FlipHash::builder().node_set(s).build().unwrap()));
    grow(|s| Box::new(hashroute::PowerCh::builder().node_set(s).build().unwrap()));
    grow(|s| Box::new(hashroute::BinomialHash::builder().node_set(s).build().unwrap()));
    grow(|s| Box::new(hashroute::JumpBackAnchor::builder().node_set(s).build().unwrap()));
    let a = hashroute::JumpBackAnchor::builder()
        .node_set(NodeSet::from_names(names(10)).unwrap())
        .hasher(h)
        .build()
        .unwrap();
    let b = a.without_node("cache-4").unwrap();
    let p = plan(&a, &b).unwrap();
    assert!((p.moved_fraction() - 0.1).abs() < 0.015, "{}", p.moved_fraction());
    assert!(p.shares().iter().filter(|s| s.moved_out > 0.0).all(|s| s.name == "cache-4"));
}

/// The `migration` fuzz target's failure at 17d1b69 (base64
/// `FQAAAEUeuLYAAEMAJQP/2hIgAEMxEREBCD0mp/M=`): a `libmemcached-oaat` continuum over one node
/// against the same plus a second node, key `k2`. The target looked the key up at its MD5
/// position (1460232801), where the plan rightly says the range moves; this variant hashes keys
/// with one-at-a-time, and at that position the plan and both routers agree. The target was
/// wrong, not the plan.
#[test]
fn regression_migration_fuzz_oaat_key_position() {
    let one = NodeSet::from_names(["\0%\u{3}"]).unwrap();
    let before = Ketama::builder().node_set(one).variant(KetamaVariant::LibmemcachedOaat).build().unwrap();
    let after = before.with_node(Node::new("\u{8}=&")).unwrap();
    let key: &[u8] = &[107, 50];
    let p = exact_plan(&before, &after).unwrap();
    let at = |h: u32| p.moves().find(|m| m.start <= u64::from(h) && u64::from(h) <= m.end);
    // The fuzz target's reading: the key's MD5 position lies in a range that moves to the new
    // node, although the routers keep the key where it was.
    let md5 = Ketama::key_hash(key);
    assert_eq!(md5, 1_460_232_801);
    assert_eq!(at(md5).map(|m| (m.from, m.to)), Some(("\0%\u{3}", "\u{8}=&")));
    // The key's real position: the variant's one-at-a-time hash.
    let oaat = before.variant_key_hash(key);
    assert_eq!(oaat, after.variant_key_hash(key));
    assert_ne!(oaat, md5);
    let (old, new) = (before.node_name(before.route(key)), after.node_name(after.route(key)));
    assert_eq!((old, new), ("\0%\u{3}", "\0%\u{3}"));
    assert!(at(oaat).is_none(), "the plan moves a key the routers keep: {:?}", at(oaat).map(|m| (m.from, m.to)));
    // `plan` chooses the exact plan for these two and agrees with the routers on this key.
    let exact = plan(&before, &after).unwrap();
    assert!(exact.is_exact());
    assert!(exact.moves().all(|m| !(m.start <= u64::from(oaat) && u64::from(oaat) <= m.end)));
}

/// twemproxy hashes the empty key to 0 while the other MD5 variants MD5 it: `plan` must not
/// treat the two continuums as one key space (it samples instead).
#[test]
fn plan_samples_between_twemproxy_and_md5_variants() {
    let set = NodeSet::from_names(["a:11211", "b:11211", "c:11211"]).unwrap();
    let twem = Ketama::builder().node_set(set.clone()).variant(KetamaVariant::Twemproxy).build().unwrap();
    let lib = Ketama::builder().node_set(set).variant(KetamaVariant::Libmemcached).build().unwrap();
    assert_eq!(twem.key_hasher(), lib.key_hasher());
    assert_ne!(twem.variant_key_hash(b""), lib.variant_key_hash(b""));
    assert!(!plan(&twem, &lib).unwrap().is_exact());
    assert!(plan(&twem, &twem.with_node(Node::new("d:11211")).unwrap()).unwrap().is_exact());
}

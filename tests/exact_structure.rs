//! The proxies' rings (nginx, HAProxy, Envoy) and Maglev's table answer `Router::arcs`, so the
//! migration plan between two configurations of each is exact. Checked against the routers
//! themselves: the arcs' owner of uniformly sampled hashes is the router's own lookup of that
//! hash, keys land where `route` sends them, and the exact moved fraction and shares agree with
//! the sampled ones within 4 standard deviations (200,000 hashes) for a join, a leave and a
//! weight change.

use hashroute::arcs::Arcs;
use hashroute::migration::{plan, KeySpace, MigrationPlan};
use hashroute::{EnvoyRing, Haproxy, KeyHasher, Maglev, Nginx, Node, NodeId, NodeSet, Ring, Router};

const SAMPLES: usize = 200_000;

/// SplitMix64: uniform 64-bit hashes, seeded (no process randomness).
struct Hashes(u64);

impl Iterator for Hashes {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Some(z ^ (z >> 31))
    }
}

/// A router with its own lookup of a uniformly drawn 64-bit value (the top 32 bits for the
/// 32-bit circles) and the position that value has in its arcs' space.
struct Probe<'a> {
    router: &'a dyn Router,
    lookup: Box<dyn Fn(u64) -> NodeId + 'a>,
    position: fn(u64, &Arcs<'_>) -> u64,
}

fn top32(x: u64, _: &Arcs<'_>) -> u64 {
    x >> 32
}

fn full64(x: u64, _: &Arcs<'_>) -> u64 {
    x
}

fn table_entry(x: u64, arcs: &Arcs<'_>) -> u64 {
    x % (arcs.max_position() + 1)
}

fn nginx(r: &Nginx) -> Probe<'_> {
    Probe { router: r, lookup: Box::new(|x| r.route_hash32((x >> 32) as u32)), position: top32 }
}

fn haproxy(r: &Haproxy) -> Probe<'_> {
    Probe { router: r, lookup: Box::new(|x| r.route_hash32((x >> 32) as u32)), position: top32 }
}

fn by_hash<R: Router>(r: &R, position: fn(u64, &Arcs<'_>) -> u64) -> Probe<'_> {
    Probe { router: r, lookup: Box::new(|x| r.route_hash(x).unwrap()), position }
}

/// `|sampled − exact|` within 4σ of a binomial over `SAMPLES` (plus one sample's worth).
fn close(what: &str, sampled: usize, exact: f64) {
    let n = SAMPLES as f64;
    let sigma = (exact * (1.0 - exact) / n).sqrt();
    let got = sampled as f64 / n;
    assert!((got - exact).abs() <= 4.0 * sigma + 1.0 / n, "{what}: sampled {got}, exact {exact} (σ {sigma})");
}

/// The checks of the module docs for one change `before -> after`.
fn check(label: &str, before: &Probe<'_>, after: &Probe<'_>, space: KeySpace) {
    let (ab, aa) = (before.router.arcs().expect("arcs before"), after.router.arcs().expect("arcs after"));
    let plan: MigrationPlan = plan(before.router, after.router).unwrap();
    assert!(plan.is_exact(), "{label}: {}", plan.summary());
    assert_eq!(plan.space(), space, "{label}");
    assert!(plan.to_string().contains("(exact, "), "{label}");
    let names = plan.names().to_vec();
    let (mut moved, mut after_counts) = (0usize, vec![0usize; names.len()]);
    for x in Hashes(0x5EED ^ label.len() as u64).take(SAMPLES) {
        let (ob, oa) = ((before.lookup)(x), (after.lookup)(x));
        assert_eq!(ab.owner_at((before.position)(x, &ab)), ob.as_u32(), "{label}: before, at {x:#x}");
        assert_eq!(aa.owner_at((after.position)(x, &aa)), oa.as_u32(), "{label}: after, at {x:#x}");
        let (nb, na) = (before.router.node_name(ob), after.router.node_name(oa));
        moved += usize::from(nb != na);
        after_counts[names.iter().position(|n| n == na).unwrap()] += 1;
    }
    close(&format!("{label}: moved"), moved, plan.moved_fraction());
    for (name, &count) in names.iter().zip(&after_counts) {
        close(&format!("{label}: {name}'s share"), count, plan.share(name).unwrap().after);
    }
    // Keys (request targets, with queries) sit where `route` sends them.
    for arcs_router in [(&ab, before.router), (&aa, after.router)] {
        let (arcs, router) = arcs_router;
        for i in 0..2000 {
            let key = format!("/item/{i:x}?v={}", i % 7);
            let at = arcs.position(key.as_bytes());
            assert_eq!(arcs.owner_at(at), router.route(key.as_bytes()).as_u32(), "{label}: key {key}");
        }
    }
}

fn weighted(names: &[&str]) -> NodeSet {
    NodeSet::new(names.iter().enumerate().map(|(i, n)| Node::new(*n).with_weight((i % 3 + 1) as f64))).unwrap()
}

const SERVERS: [&str; 6] = ["10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80", "10.0.0.4:80", "10.0.0.5:80", "10.0.0.6:80"];

#[test]
fn nginx_plans_are_exact() {
    let a = Nginx::builder().node_set(weighted(&SERVERS)).build().unwrap();
    let changes = [
        ("nginx join", a.with_node(Node::new("10.0.0.7:80")).unwrap()),
        ("nginx leave", a.without_node("10.0.0.3:80").unwrap()),
        ("nginx reweigh", a.with_weight("10.0.0.2:80", 3.0).unwrap()),
    ];
    for (label, b) in &changes {
        check(label, &nginx(&a), &nginx(b), KeySpace::Hash32);
    }
}

#[test]
fn haproxy_plans_are_exact() {
    let names = ["s1", "s2", "s3", "s4", "s5", "s6"];
    for (hasher, whole) in [(KeyHasher::SdbmAvalanche, false), (KeyHasher::Sdbm, true)] {
        let a = Haproxy::builder().hasher(hasher).uri_whole(whole).node_set(weighted(&names)).build().unwrap();
        let changes = [
            ("haproxy join", a.with_node(Node::new("s7").with_weight(2.0)).unwrap()),
            ("haproxy leave", a.without_node("s3").unwrap()),
            ("haproxy reweigh", a.with_weight("s2", 4.0).unwrap()),
        ];
        for (label, b) in &changes {
            check(label, &haproxy(&a), &haproxy(b), KeySpace::Hash32);
        }
    }
}

#[test]
fn envoy_plans_are_exact() {
    let a = EnvoyRing::builder().node_set(weighted(&SERVERS)).build().unwrap();
    let changes = [
        ("envoy join", a.with_node(Node::new("10.0.0.7:80")).unwrap()),
        ("envoy leave", a.without_node("10.0.0.3:80").unwrap()),
        ("envoy reweigh", a.with_weight("10.0.0.2:80", 3.0).unwrap()),
    ];
    for (label, b) in &changes {
        check(label, &by_hash(&a, full64), &by_hash(b, full64), KeySpace::Hash64);
    }
    // A ring that hashes keys as Envoy does (XXH64, seed 0) shares Envoy's circle: exact too.
    let ring = Ring::builder().hasher(KeyHasher::Xxh64 { seed: 0 }).node_set(weighted(&SERVERS)).build().unwrap();
    check("ring -> envoy", &by_hash(&ring, full64), &by_hash(&a, full64), KeySpace::Hash64);
}

#[test]
fn maglev_plans_are_exact() {
    let a = Maglev::builder().node_set(weighted(&SERVERS)).build().unwrap();
    let changes = [
        ("maglev join", a.with_node(Node::new("10.0.0.7:80")).unwrap()),
        ("maglev leave", a.without_node("10.0.0.3:80").unwrap()),
        ("maglev reweigh", a.with_weight("10.0.0.2:80", 3.0).unwrap()),
    ];
    let space = KeySpace::Table { entries: Maglev::DEFAULT_TABLE_SIZE };
    for (label, b) in &changes {
        check(label, &by_hash(&a, table_entry), &by_hash(b, table_entry), space);
    }
}

/// Two configurations that place keys differently (another key hash, another table size) fall
/// back to the sampled estimate, and say so.
#[test]
fn different_placements_are_estimated() {
    let a = Haproxy::builder().nodes(["s1", "s2"]).build().unwrap();
    let whole = Haproxy::builder().uri_whole(true).nodes(["s1", "s2"]).build().unwrap();
    assert!(!plan(&a, &whole).unwrap().is_exact());
    let m = Maglev::builder().table_size(65521).nodes(["a", "b"]).build().unwrap();
    let n = Maglev::builder().nodes(["a", "b"]).build().unwrap();
    let p = plan(&m, &n).unwrap();
    assert!(!p.is_exact() && p.to_string().contains("estimated from"), "{p}");
}

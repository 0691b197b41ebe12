//! The CRUSH map parser on hostile and unusual input: one-line errors naming the line, no panic,
//! bounded work; and the router's contract (route is the first replica, fingerprints follow the
//! map, reweights only move what they must).

use std::sync::Arc;

use hashroute::crush::{crush_ln, object_hash, CrushMap, CrushRouter, Tunables, Workspace};
use hashroute::Router;

const BASE: &str = "\
device 0 osd.0
device 1 osd.1
device 2 osd.2
device 3 osd.3
type 0 osd
type 1 host
type 2 root
host a {
	id -1
	alg straw2
	hash 0
	item osd.0 weight 1.000
	item osd.1 weight 1.000
}
host b {
	id -2
	alg straw2
	hash 0
	item osd.2 weight 1.000
	item osd.3 weight 1.000
}
root r {
	id -3
	alg straw2
	hash 0
	item a
	item b
}
rule rep {
	id 0
	type replicated
	min_size 1
	max_size 10
	step take r
	step chooseleaf firstn 0 type host
	step emit
}
";

fn error(text: &str) -> String {
    match CrushMap::parse(text) {
        Ok(_) => panic!("parsed:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn errors_name_the_line() {
    let cases = [
        (
            BASE.replace("item osd.1 weight 1.000", "item osd.9 weight 1.000"),
            "line 13: item osd.9 in bucket a is not defined",
        ),
        (
            BASE.replace("alg straw2\n\thash 0\n\titem osd.2", "alg straw\n\thash 0\n\titem osd.2"),
            "line 17: bucket b: alg straw (v1) is not supported",
        ),
        (BASE.replace("type 0 osd\n", "type 0 osd\ntype 0 disk\n"), "line 6: type id 0 is already defined"),
        (BASE.replace("step take r", "step take nowhere"), "line 34: item `nowhere` is not defined"),
        (BASE.replace("type host\n\tstep emit", "type rack\n\tstep emit"), "line 35: type `rack` is not defined"),
        (BASE.replace("\titem b\n", "\titem b\n\titem a\n"), "line 28: item a appears twice in bucket r"),
        (BASE.replace("item osd.3 weight 1.000\n", "item osd.3 weight 1.000\n\titem r\n"), "loop in the hierarchy"),
        (BASE.replace("id 0\n", "id 300\n"), "rule id 300 is out of range"),
        (BASE.replace("item osd.0 weight 1.000", "item osd.0 weight 101"), "weighs more than the limit of 100"),
        (BASE.replace("item osd.0 weight 1.000", "item osd.0 weight -1"), "must be a finite number >= 0"),
        (
            format!("tunable choose_total_tries 4000000000\n{BASE}"),
            "line 1: tunable value: `4000000000` is not a 32-bit integer",
        ),
        (format!("tunable choose_total_tries 20000\n{BASE}"), "line 1: tunable choose_total_tries 20000 exceeds 10000"),
        (format!("tunable frobnicate 1\n{BASE}"), "line 1: tunable `frobnicate` is not recognized"),
        (BASE.replace("firstn 0 type host", "firstn 100000 type host"), "replica count 100000 is out of range"),
        (BASE.replace("hash 0\n\titem osd.0", "hash 7\n\titem osd.0"), "bucket a: hash 7 is not supported"),
        (format!("{BASE}choose_args 1 {{\n}}\n"), "choose_args (balancer weight sets) are not modelled"),
        (BASE.replace("}\nrule rep", "\nrule rep"), "line 29: bucket r: unexpected `rule`"),
        (BASE[..BASE.len() - 3].to_owned(), "found the end of the map"),
    ];
    for (text, needle) in &cases {
        let e = error(text);
        assert!(e.contains(needle), "{e:?} lacks {needle:?}");
        assert_eq!(e.lines().count(), 1, "{e:?}");
    }
}

#[test]
fn hostile_maps_are_bounded() {
    // 20,000 nested buckets: no stack overflow in parsing, class copies or mapping.
    let depth = 20_000;
    let mut t = String::from("device 0 osd.0 class ssd\ntype 0 osd\ntype 1 b\n");
    t.push_str("b b0 {\n id -1\n alg straw2\n hash 0\n item osd.0 weight 1\n}\n");
    for i in 1..depth {
        t.push_str(&format!("b b{i} {{\n id -{}\n alg straw2\n hash 0\n item b{}\n}}\n", i + 1, i - 1));
    }
    t.push_str(&format!("rule x {{\n id 0\n type replicated\n step take b{} class ssd\n step chooseleaf firstn 0 type osd\n step emit\n}}\n", depth - 1));
    let map = Arc::new(CrushMap::parse(&t).expect("deep map"));
    let router = CrushRouter::new(map, "x").expect("rule");
    let (mut out, mut ws) = (Vec::new(), Workspace::default());
    router.map_x(7, 3, &mut out, &mut ws);
    assert_eq!(out, [0]);
    // Garbage never panics.
    for text in [
        "{",
        "}",
        "rule {",
        "host x {",
        "device -1 osd",
        "type 1",
        "device 0 osd.0 class",
        "\u{0}\u{ffff}",
        "rule r { id 0 step take",
    ] {
        assert!(CrushMap::parse(text).is_err(), "{text:?}");
    }
}

#[test]
fn legacy_tunables_without_lines_and_defaults() {
    let map = CrushMap::parse(BASE).expect("map");
    assert_eq!(map.tunables(), Tunables::LEGACY);
    let map = CrushMap::parse(&format!("tunable chooseleaf_stable 1\n{BASE}")).expect("map");
    assert_eq!(map.tunables().chooseleaf_stable, 1);
    assert_eq!(map.tunables().choose_total_tries, 19);
    assert_eq!(crush_ln(0).expect("in range"), 0);
    assert!(crush_ln(0x10000).is_err());
}

#[test]
fn route_is_the_first_replica_and_reweights_move_only_their_keys() {
    let map = Arc::new(CrushMap::parse(BASE).expect("map"));
    let router = CrushRouter::new(map.clone(), "rep").expect("rule");
    let out_router = router.clone().with_reweight("osd.0", 0.0).expect("reweight");
    let (mut out, mut ws) = (Vec::new(), Workspace::default());
    for i in 0..2000u32 {
        let key = format!("object-{i}");
        router.map_x(object_hash(key.as_bytes()), 2, &mut out, &mut ws);
        let first = router.route(key.as_bytes());
        assert_eq!(router.node_name(first), map.device_name(out[0]).expect("device"));
        let after = out_router.route(key.as_bytes());
        assert_ne!(out_router.node_name(after), "osd.0");
        if router.node_name(first) != "osd.0" {
            assert_eq!(first, after, "{key} moved though its device stayed in");
        }
    }
    assert_ne!(hashroute::fingerprint(&router), hashroute::fingerprint(&out_router));
    assert_eq!(router.route_hash(5).expect("32-bit"), router.route_hash(5).expect("32-bit"));
    assert!(router.route_hash(1 << 32).is_err());
    assert!(CrushRouter::new(map.clone(), "nope").is_err());
    assert!(router.clone().with_reweight("osd.0", 1.5).is_err());
    assert!(router.with_reweight("osd.9", 0.5).is_err());
}

//! The `uhashring-md5` Ketama variant (uhashring's default ring: whole 128-bit MD5 points)
//! against the routes of the real uhashring 2.5, frozen in `tests/golden/uhashring-md5.csv` and
//! `uhashring-md5-configs.csv` by `scripts/uhashring_golden.py`; its fingerprints are frozen in
//! `uhashring-md5-fingerprints.csv` (regenerate with `HASHROUTE_WRITE_GOLDEN=1`).

mod frozen;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use hashroute::{Algorithm, Ketama, KetamaVariant, Node, NodeId, NodeSet, Router, RouterSpec};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

/// Minimal CSV reader: the generator quotes only fields with commas or quotes.
fn rows(file: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(frozen::golden_dir().join(file)).unwrap();
    let mut out = Vec::new();
    for line in text.lines().skip(1).filter(|l| !l.is_empty()) {
        let (mut fields, mut cur, mut quoted, mut chars) = (Vec::new(), String::new(), false, line.chars().peekable());
        while let Some(c) = chars.next() {
            match (c, quoted) {
                ('"', true) if chars.peek() == Some(&'"') => {
                    cur.push('"');
                    chars.next();
                }
                ('"', _) => quoted = !quoted,
                (',', false) => fields.push(std::mem::take(&mut cur)),
                _ => cur.push(c),
            }
        }
        fields.push(cur);
        out.push(fields);
    }
    out
}

/// config name -> (node set in file order, points per node).
fn configs() -> BTreeMap<String, (NodeSet, Vec<(String, usize)>)> {
    let mut nodes: BTreeMap<String, Vec<(String, f64, usize)>> = BTreeMap::new();
    for r in rows("uhashring-md5-configs.csv") {
        let name = String::from_utf8(unhex(&r[1])).unwrap();
        nodes.entry(r[0].clone()).or_default().push((name, r[2].parse().unwrap(), r[3].parse().unwrap()));
    }
    nodes
        .into_iter()
        .map(|(c, ns)| {
            let set = NodeSet::new(ns.iter().map(|(n, w, _)| Node::new(n.as_str()).with_weight(*w))).unwrap();
            (c, (set, ns.into_iter().map(|(n, _, p)| (n, p)).collect()))
        })
        .collect()
}

fn build(set: &NodeSet) -> Ketama {
    Ketama::builder().node_set(set.clone()).variant(KetamaVariant::UhashringMd5).build().unwrap()
}

#[test]
fn routes_match_the_real_uhashring() {
    let configs = configs();
    let routers: BTreeMap<&String, Ketama> = configs.iter().map(|(c, (set, _))| (c, build(set))).collect();
    for (c, (_, points)) in &configs {
        let k = &routers[c];
        for (name, want) in points {
            let id = k.nodes().id_of(name).unwrap();
            let got = k.owners().iter().filter(|&&o| o == id.as_u32()).count();
            assert_eq!(got, *want, "{c}: points of {name}");
        }
        assert_eq!(k.points128().unwrap().len(), k.owners().len());
    }
    let golden = rows("uhashring-md5.csv");
    assert!(golden.len() > 2000, "{} rows", golden.len());
    let mut per_config: BTreeMap<&str, (Vec<Vec<u8>>, Vec<&str>)> = BTreeMap::new();
    for r in &golden {
        let key = unhex(&r[1]);
        let k = &routers[&r[0]];
        assert_eq!(k.node_name(k.route(&key)), r[3], "{r:?}");
        let e = per_config.entry(r[0].as_str()).or_default();
        e.0.push(key);
        e.1.push(r[3].as_str());
    }
    // The batch path and the configured (CLI) path agree with the golden routes.
    for (c, (keys, want)) in per_config {
        let k = &routers[&c.to_owned()];
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let mut out = vec![NodeId::from_index(0); refs.len()];
        k.route_batch(&refs, &mut out);
        let spec = RouterSpec::new(Algorithm::Ketama).with_ketama_variant(KetamaVariant::UhashringMd5);
        let any = spec.build(k.nodes().clone()).unwrap();
        for ((key, o), w) in refs.iter().zip(&out).zip(&want) {
            assert_eq!(k.node_name(*o), *w, "{c} batch");
            assert_eq!(any.node_name(any.route(key)), *w, "{c} spec");
            let prefs = k.replicas(key, k.nodes().len()).unwrap();
            assert_eq!(k.node_name(prefs[0]), *w, "{c} preference");
        }
    }
}

#[test]
fn exact_point_key_takes_the_next_point() {
    let set = NodeSet::from_names(["127.0.0.1:11211", "127.0.0.1:11212", "127.0.0.1:11213"]).unwrap();
    let k = build(&set);
    // "127.0.0.1:11211-0" is point 0 of 127.0.0.1:11211: the key lands on the following point.
    let points = k.points128().unwrap();
    let key = b"127.0.0.1:11211-0";
    let golden = rows("uhashring-md5.csv");
    let row = golden.iter().find(|r| r[0] == "eq3" && unhex(&r[1]) == key).unwrap();
    let p = u128::from_str_radix(&row[2], 16).unwrap();
    let i = points.binary_search(&p).expect("the key is a point");
    assert_eq!(k.node_name(NodeId::from_index(k.owners()[i])), "127.0.0.1:11211");
    let next = k.owners()[(i + 1) % points.len()];
    assert_eq!(k.route(key), NodeId::from_index(next));
}

#[test]
fn bad_weights_are_errors() {
    let set = NodeSet::new([Node::new("a").with_weight(0.001), Node::new("b")]).unwrap();
    let err = Ketama::builder().node_set(set).variant(KetamaVariant::UhashringMd5).build().unwrap_err();
    assert!(err.to_string().contains("not a multiple of 1/160"), "{err}");
    assert_eq!(KetamaVariant::from_name("uhashring-md5").unwrap(), KetamaVariant::UhashringMd5);
    let k = build(&NodeSet::from_names(["a", "b"]).unwrap());
    assert!(k.arcs().is_none(), "the key space is 128-bit");
}

#[test]
fn fingerprints_are_frozen() {
    let mut out = String::from("config,fingerprint\n");
    for (c, (set, _)) in configs() {
        let k = build(&set);
        let spec = RouterSpec::new(Algorithm::Ketama).with_ketama_variant(KetamaVariant::UhashringMd5);
        let any = spec.build(set.clone()).unwrap();
        assert_eq!(hashroute::fingerprint(&k), hashroute::fingerprint(&any), "{c}");
        writeln!(out, "{c},{}", hashroute::fingerprint(&k)).unwrap();
    }
    frozen::check_or_write("uhashring-md5-fingerprints.csv", &out);
}

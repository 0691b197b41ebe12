//! Frozen configuration texts and route fingerprints: more of hashroute's stability contract.
//!
//! - `tests/golden/config-json.txt` and `config-toml.txt` (feature `serde`): the exact
//!   [`ClusterConfig::to_json`] / [`ClusterConfig::to_toml`] text of configurations covering every
//!   algorithm, option, hasher and Ketama variant, one `=== name ===` section each. Each frozen
//!   text must parse back to the same configuration and build a router with the same routes.
//! - `tests/golden/fingerprints.csv`: [`fingerprint`] of every router of `tests/golden.rs`, of
//!   every algorithm built through [`RouterSpec::build`] and of [`Failover`] with a node down, on
//!   the concrete type and through `&dyn Router`, with the canonical encoding's length.
//!
//! Same rules as `tests/golden.rs`: written once by `scripts/gen_golden.sh` (which sets
//! `HASHROUTE_WRITE_GOLDEN=1`), never edited by hand; a missing file is a failure, not a skip.

use std::fmt::Write as _;

#[path = "frozen/mod.rs"]
mod frozen;
use frozen::*;

use hashroute::fingerprint::Fingerprint;
use hashroute::{
    fingerprint, Algorithm, Anchor, AnyRouter, Failover, Jump, Ketama, KetamaVariant, KeyHasher, Maglev, Memento,
    Modulo, MultiProbe, NodeSet, RedisSlots, Rendezvous, Ring, Router, RouterSpec,
};

/// The algorithms added after `fingerprints.csv` and `config-*.txt` were frozen (the jump
/// family): their rows live in `jump-family-fingerprints.csv` and
/// `jump-family-config-{json,toml}.txt`, so the older files stay byte-identical.
const JUMP_FAMILY: [Algorithm; 5] =
    [Algorithm::JumpBack, Algorithm::FlipHash, Algorithm::Power, Algorithm::Binomial, Algorithm::JumpBackAnchor];

/// The proxy routers, frozen in `tests/golden_proxies.rs`.
const PROXY_ALGORITHMS: [Algorithm; 4] = [Algorithm::Nginx, Algorithm::Haproxy, Algorithm::EnvoyRing, Algorithm::Kafka];

/// The token ring, frozen in `tests/golden_token_ring.rs`: its nodes need tokens.
const TOKEN_RING: [Algorithm; 1] = [Algorithm::TokenRing];

/// The algorithms the first golden files cover, in [`Algorithm::ALL`] order: those added later
/// (the jump family, the proxies, the token ring) are frozen in their own files, so these stay
/// byte-identical.
fn frozen_v1() -> impl Iterator<Item = Algorithm> {
    Algorithm::ALL
        .iter()
        .copied()
        .filter(|a| !JUMP_FAMILY.contains(a) && !PROXY_ALGORITHMS.contains(a) && !TOKEN_RING.contains(a))
}

/// The Ketama variants this file freezes (the proxy ones are in `tests/golden_proxies.rs`).
fn frozen_variants() -> impl Iterator<Item = KetamaVariant> {
    KetamaVariant::ALL.into_iter().filter(|v| {
        // uhashring-md5 is frozen by tests/uhashring.rs.
        !matches!(v, KetamaVariant::Twemproxy | KetamaVariant::LibmemcachedOaat | KetamaVariant::UhashringMd5)
    })
}

/// One row of `fingerprints.csv`.
struct Row {
    name: String,
    concrete: Fingerprint,
    concrete_len: usize,
    dyn_fp: Fingerprint,
    dyn_len: usize,
}

/// The fingerprint of `router` as its concrete type and as `&dyn Router` (a `Box<dyn Router>`
/// dereferenced: the downcast path for known types, the probe encoding otherwise).
fn row<R: Router + 'static>(name: impl Into<String>, router: R) -> Row {
    let concrete = fingerprint(&router);
    let concrete_len = router.canonical_bytes().len();
    let boxed: Box<dyn Router> = Box::new(router);
    let as_dyn: &dyn Router = &*boxed;
    Row {
        name: name.into(),
        concrete,
        concrete_len,
        dyn_fp: fingerprint(as_dyn),
        dyn_len: as_dyn.canonical_bytes().len(),
    }
}

/// A row for a router built by [`RouterSpec::build`]: "concrete" is the router inside the
/// [`AnyRouter`] variant of its algorithm, "dyn" the same router through `&dyn Router`.
fn spec_row(name: String, algo: Algorithm, built: &AnyRouter) -> Row {
    assert_eq!(built.algorithm(), algo, "RouterSpec::build builds the algorithm's type");
    let concrete: &dyn Router = &**built;
    let as_dyn: &dyn Router = built;
    Row {
        name,
        concrete: fingerprint(concrete),
        concrete_len: concrete.canonical_bytes().len(),
        dyn_fp: fingerprint(as_dyn),
        dyn_len: as_dyn.canonical_bytes().len(),
    }
}

fn ring(v: u64, h: KeyHasher, set: NodeSet) -> Ring {
    Ring::builder().vnodes(v).hasher(h).node_set(set).build().unwrap()
}

/// `f` with node `10.0.0.3:6379` marked down.
fn down<R: Router>(mut f: Failover<R>) -> Failover<R> {
    f.mark_down("10.0.0.3:6379").unwrap();
    f
}

fn fingerprint_rows() -> Vec<Row> {
    // The routers of tests/golden.rs, same names and constructors, as concrete types.
    let mut rows = vec![
        row("ring-v160-xxh3", ring(160, KeyHasher::default(), cluster(10))),
        row("ring-v1-xxh3", ring(1, KeyHasher::default(), cluster(10))),
        row("ring-v100-xxh3-seed7", ring(100, KeyHasher::Xxh3 { seed: 7 }, cluster(7))),
        row("ring-v64-xxh64", ring(64, KeyHasher::Xxh64 { seed: 0 }, cluster(5))),
        row("ring-v64-murmur3", ring(64, KeyHasher::Murmur3X64 { seed: 0 }, cluster(5))),
        row("ring-v64-md5", ring(64, KeyHasher::Md5, cluster(5))),
        row("ring-v160-weighted", ring(160, KeyHasher::default(), weighted_cluster())),
        row("jump-xxh3", Jump::builder().node_set(cluster(10)).hasher(KeyHasher::default()).build().unwrap()),
        row("modulo-xxh3", Modulo::builder().node_set(cluster(10)).hasher(KeyHasher::default()).build().unwrap()),
        row(
            "rendezvous-xxh3",
            Rendezvous::builder().node_set(cluster(10)).hasher(KeyHasher::default()).build().unwrap(),
        ),
        row(
            "rendezvous-weighted",
            Rendezvous::builder().node_set(weighted_cluster()).hasher(KeyHasher::default()).build().unwrap(),
        ),
        row("rendezvous-go", Rendezvous::builder().node_set(cluster(10)).go_rendezvous().build().unwrap()),
        row("slots-redis-cli-5", RedisSlots::builder().node_set(cluster(5)).build().unwrap()),
        row(
            "ketama-libketama-weighted",
            Ketama::builder().node_set(weighted_cluster()).variant(KetamaVariant::Libketama).build().unwrap(),
        ),
        row(
            "ketama-uhashring",
            Ketama::builder().node_set(cluster(10)).variant(KetamaVariant::Uhashring).build().unwrap(),
        ),
        row(
            "ketama-libmemcached",
            Ketama::builder().node_set(cluster(10)).variant(KetamaVariant::Libmemcached).build().unwrap(),
        ),
        row(
            "ketama-spymemcached",
            Ketama::builder().node_set(cluster(10)).variant(KetamaVariant::Spymemcached).build().unwrap(),
        ),
        row(
            "maglev-m65537",
            Maglev::builder().node_set(cluster(10)).hasher(KeyHasher::default()).table_size(65537).build().unwrap(),
        ),
        row(
            "maglev-weighted-m4099",
            Maglev::builder()
                .node_set(weighted_cluster())
                .hasher(KeyHasher::default())
                .table_size(4099)
                .build()
                .unwrap(),
        ),
        row(
            "multiprobe-k21",
            MultiProbe::builder().node_set(cluster(10)).hasher(KeyHasher::default()).probes(21).build().unwrap(),
        ),
        row(
            "memento-removed",
            Memento::builder()
                .node_set(cluster(10))
                .hasher(KeyHasher::default())
                .build()
                .unwrap()
                .without_node("10.0.0.3:6379")
                .unwrap()
                .without_node("10.0.0.7:6379")
                .unwrap(),
        ),
        row(
            "anchor-removed",
            Anchor::builder()
                .node_set(cluster(10))
                .hasher(KeyHasher::default())
                .capacity(16)
                .build()
                .unwrap()
                .without_node("10.0.0.3:6379")
                .unwrap()
                .without_node("10.0.0.7:6379")
                .unwrap(),
        ),
        row(
            "ketama-python-hash-ring",
            Ketama::builder().node_set(cluster(10)).variant(KetamaVariant::PythonHashRing).build().unwrap(),
        ),
    ];
    // Every algorithm through RouterSpec::build with its defaults on cluster(10).
    for algo in frozen_v1() {
        let built = RouterSpec::new(algo).build(cluster(10)).unwrap();
        rows.push(spec_row(format!("spec-{algo}-default-n10"), algo, &built));
    }
    // Failover with one node marked down: over concrete routers, and over every algorithm built
    // by RouterSpec::build (Redis slots have no preference list, so no failover).
    rows.push(row(
        "failover-ring-v160-xxh3-down3",
        down(Failover::new(ring(160, KeyHasher::default(), cluster(10))).unwrap()),
    ));
    rows.push(row(
        "failover-jump-xxh3-down3",
        down(
            Failover::new(Jump::builder().node_set(cluster(10)).hasher(KeyHasher::default()).build().unwrap()).unwrap(),
        ),
    ));
    rows.push(row(
        "failover-ketama-libketama-down3",
        down(
            Failover::new(Ketama::builder().node_set(cluster(10)).variant(KetamaVariant::Libketama).build().unwrap())
                .unwrap(),
        ),
    ));
    rows.push(row(
        "failover-ring-v160-xxh3-all-up",
        Failover::new(ring(160, KeyHasher::default(), cluster(10))).unwrap(),
    ));
    for algo in frozen_v1() {
        let built = RouterSpec::new(algo).build(cluster(10)).unwrap();
        match Failover::new(built) {
            Ok(f) => rows.push(row(format!("failover-spec-{algo}-default-n10-down3"), down(f))),
            Err(e) => {
                assert_eq!(algo, Algorithm::Slots, "only Redis slots refuse failover: {e}");
                assert!(matches!(e, hashroute::Error::Unsupported { .. }), "{e}");
            }
        }
    }
    rows
}

/// The jump family's rows: every new algorithm through RouterSpec::build, with a
/// node down, and the options that change routes.
fn jump_family_rows() -> Vec<Row> {
    let mut rows = Vec::new();
    for algo in JUMP_FAMILY {
        let built = RouterSpec::new(algo).build(cluster(10)).unwrap();
        rows.push(spec_row(format!("spec-{algo}-default-n10"), algo, &built));
        let built = RouterSpec::new(algo).build(cluster(10)).unwrap();
        rows.push(row(format!("failover-spec-{algo}-default-n10-down3"), down(Failover::new(built).unwrap())));
    }
    let xorshift =
        RouterSpec::new(Algorithm::JumpBack).with_generator(hashroute::jumpback::JumpBackGenerator::XorshiftL7R9);
    rows.push(spec_row(
        "spec-jumpback-xorshift-l7r9-n10".into(),
        Algorithm::JumpBack,
        &xorshift.build(cluster(10)).unwrap(),
    ));
    let binomial = RouterSpec::new(Algorithm::Binomial).with_hasher(KeyHasher::Xxh32 { seed: 0 });
    rows.push(spec_row("spec-binomial-xxh32-n10".into(), Algorithm::Binomial, &binomial.build(cluster(10)).unwrap()));
    let anchor = hashroute::JumpBackAnchor::builder().node_set(cluster(10)).build().unwrap();
    let anchor = anchor.without_node("10.0.0.3:6379").unwrap().without_node("10.0.0.7:6379").unwrap();
    rows.push(row("jumpback-anchor-n10-removed-3-7", anchor));
    rows
}

fn render_rows(rows: &[Row]) -> String {
    let mut out = String::from("name,fingerprint_concrete,fingerprint_dyn,canonical_len_concrete,canonical_len_dyn\n");
    for r in rows {
        writeln!(out, "{},{},{},{},{}", r.name, r.concrete, r.dyn_fp, r.concrete_len, r.dyn_len).unwrap();
    }
    out
}

#[test]
fn jump_family_fingerprints_are_frozen() {
    let rows = jump_family_rows();
    let mut names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), rows.len(), "row names are unique");
    check_or_write("jump-family-fingerprints.csv", &render_rows(&rows));
}

#[test]
fn fingerprints_are_frozen() {
    let rows = fingerprint_rows();
    let mut out = String::from("name,fingerprint_concrete,fingerprint_dyn,canonical_len_concrete,canonical_len_dyn\n");
    for r in &rows {
        writeln!(out, "{},{},{},{},{}", r.name, r.concrete, r.dyn_fp, r.concrete_len, r.dyn_len).unwrap();
    }
    let mut names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), rows.len(), "row names are unique");
    let frozen = check_or_write("fingerprints.csv", &out);
    // The frozen values parse back (32 hex digits each).
    for line in frozen.lines().skip(1) {
        let cols: Vec<&str> = line.split(',').collect();
        assert_eq!(cols.len(), 5, "{line}");
        for fp in &cols[1..3] {
            assert_eq!(fp.parse::<Fingerprint>().unwrap().to_string(), *fp);
        }
    }
}

#[cfg(feature = "serde")]
mod config {
    use hashroute::{fingerprint, Algorithm, KetamaVariant, KeyHasher, RouterSpec};
    use hashroute::{ClusterConfig, NodeConfig};

    use super::{check_or_write, frozen_v1, golden_keys, JUMP_FAMILY};

    /// `n` unit-weight nodes without labels.
    fn plain(n: usize) -> Vec<NodeConfig> {
        (0..n).map(|i| NodeConfig::new(format!("10.0.0.{i}:6379"))).collect()
    }

    /// `n` unit-weight nodes with zone and rack labels.
    fn labelled(n: usize) -> Vec<NodeConfig> {
        (0..n)
            .map(|i| {
                NodeConfig::new(format!("10.0.{}.{i}:6379", i % 3))
                    .with_label("zone", format!("eu-1{}", ["a", "b", "c"][i % 3]))
                    .with_label("rack", format!("r{}", i / 2))
            })
            .collect()
    }

    /// Weighted nodes (integral, fractional and large weights) with labels, one of them with
    /// characters that need quoting or escaping.
    fn weighted() -> Vec<NodeConfig> {
        [1.0, 2.0, 0.5, 2.5, 100.0, 0.1]
            .into_iter()
            .enumerate()
            .map(|(i, w)| {
                NodeConfig::new(format!("cache-{i}"))
                    .with_weight(w)
                    .with_label("zone", format!("us-east-1{}", ["a", "b"][i % 2]))
            })
            .chain([NodeConfig::new("nœud-é:11211")
                .with_weight(3.0)
                .with_label("note", "say \"hi\" \\ tab\there")
                .with_label("zone", "ap-south-1a")])
            .collect()
    }

    /// Every frozen configuration: (section name, config). Names are unique.
    fn configs() -> Vec<(String, ClusterConfig)> {
        let mut out: Vec<(String, ClusterConfig)> = Vec::new();
        let mut add = |name: String, spec: RouterSpec, nodes: Vec<NodeConfig>| {
            out.push((name, ClusterConfig::new(spec, nodes)));
        };
        // Every algorithm with its defaults, on plain and on labelled nodes.
        for algo in frozen_v1() {
            add(format!("{algo}-default-plain"), RouterSpec::new(algo), plain(5));
            add(format!("{algo}-default-labelled"), RouterSpec::new(algo), labelled(6));
        }
        // Weights, where the algorithm honours them.
        for algo in [Algorithm::Ring, Algorithm::Ketama, Algorithm::Rendezvous, Algorithm::Maglev] {
            add(format!("{algo}-default-weighted"), RouterSpec::new(algo), weighted());
        }
        // Every hasher, seeded where it takes a seed, on every algorithm that takes a hasher.
        let hashers = [
            ("xxh3-seed0", KeyHasher::Xxh3 { seed: 0 }),
            ("xxh3-seed7", KeyHasher::Xxh3 { seed: 7 }),
            ("xxh64-seed11", KeyHasher::Xxh64 { seed: 11 }),
            ("xxh64-seed-wide", KeyHasher::Xxh64 { seed: 0x0123_4567_89ab_cdef }),
            ("murmur3-seed13", KeyHasher::Murmur3X64 { seed: 13 }),
            ("murmur3-32-seed17", KeyHasher::Murmur3X86_32 { seed: 17 }),
            ("md5", KeyHasher::Md5),
            ("crc16", KeyHasher::Crc16),
        ];
        for (hname, h) in hashers {
            add(format!("ring-hasher-{hname}"), RouterSpec::new(Algorithm::Ring).with_hasher(h), labelled(6));
        }
        for algo in [
            Algorithm::Modulo,
            Algorithm::Jump,
            Algorithm::Rendezvous,
            Algorithm::Maglev,
            Algorithm::MultiProbe,
            Algorithm::Memento,
            Algorithm::Anchor,
        ] {
            for (hname, h) in
                [("murmur3-seed5", KeyHasher::Murmur3X64 { seed: 5 }), ("xxh64-seed3", KeyHasher::Xxh64 { seed: 3 })]
            {
                add(format!("{algo}-hasher-{hname}"), RouterSpec::new(algo).with_hasher(h), labelled(6));
            }
        }
        // The fixed hashers of Ketama and slots, given explicitly.
        add("ketama-hasher-md5".into(), RouterSpec::new(Algorithm::Ketama).with_hasher(KeyHasher::Md5), plain(5));
        add("slots-hasher-crc16".into(), RouterSpec::new(Algorithm::Slots).with_hasher(KeyHasher::Crc16), plain(5));
        // Every Ketama variant, on weighted nodes, and with the hasher too.
        for v in super::frozen_variants() {
            add(
                format!("ketama-variant-{}", v.name()),
                RouterSpec::new(Algorithm::Ketama).with_ketama_variant(v),
                weighted(),
            );
        }
        add(
            "ketama-variant-uhashring-hasher-md5".into(),
            RouterSpec::new(Algorithm::Ketama)
                .with_ketama_variant(KetamaVariant::Uhashring)
                .with_hasher(KeyHasher::Md5),
            labelled(6),
        );
        // The algorithm-specific options, alone and with a hasher.
        add("ring-vnodes-1".into(), RouterSpec::new(Algorithm::Ring).with_vnodes(1), plain(5));
        add("ring-vnodes-100".into(), RouterSpec::new(Algorithm::Ring).with_vnodes(100), labelled(6));
        add(
            "ring-vnodes-64-murmur3-32-seed9-weighted".into(),
            RouterSpec::new(Algorithm::Ring).with_vnodes(64).with_hasher(KeyHasher::Murmur3X86_32 { seed: 9 }),
            weighted(),
        );
        add("maglev-table-4099".into(), RouterSpec::new(Algorithm::Maglev).with_table_size(4099), labelled(6));
        add(
            "maglev-table-4099-xxh3-seed2-weighted".into(),
            RouterSpec::new(Algorithm::Maglev).with_table_size(4099).with_hasher(KeyHasher::Xxh3 { seed: 2 }),
            weighted(),
        );
        add("multiprobe-probes-5".into(), RouterSpec::new(Algorithm::MultiProbe).with_probes(5), labelled(6));
        add(
            "multiprobe-probes-7-xxh64-seed1".into(),
            RouterSpec::new(Algorithm::MultiProbe).with_probes(7).with_hasher(KeyHasher::Xxh64 { seed: 1 }),
            plain(5),
        );
        add("anchor-capacity-32".into(), RouterSpec::new(Algorithm::Anchor).with_capacity(32), labelled(6));
        add(
            "anchor-capacity-6-murmur3-seed4".into(),
            RouterSpec::new(Algorithm::Anchor).with_capacity(6).with_hasher(KeyHasher::Murmur3X64 { seed: 4 }),
            labelled(6),
        );
        out
    }

    /// The jump family's configurations, in their own golden files.
    fn jump_family_configs() -> Vec<(String, ClusterConfig)> {
        let mut out: Vec<(String, ClusterConfig)> = Vec::new();
        for algo in JUMP_FAMILY {
            out.push((format!("{algo}-default-plain"), ClusterConfig::new(RouterSpec::new(algo), plain(5))));
            out.push((format!("{algo}-default-labelled"), ClusterConfig::new(RouterSpec::new(algo), labelled(6))));
            let h = KeyHasher::Murmur3X64 { seed: 5 };
            out.push((
                format!("{algo}-hasher-murmur3-seed5"),
                ClusterConfig::new(RouterSpec::new(algo).with_hasher(h), labelled(6)),
            ));
        }
        for g in
            [hashroute::jumpback::JumpBackGenerator::SplitMix64, hashroute::jumpback::JumpBackGenerator::XorshiftL7R9]
        {
            let spec = RouterSpec::new(Algorithm::JumpBack).with_generator(g);
            out.push((format!("jumpback-generator-{}", g.name()), ClusterConfig::new(spec, plain(5))));
        }
        let spec = RouterSpec::new(Algorithm::Binomial).with_hasher(KeyHasher::Xxh32 { seed: 0 });
        out.push(("binomial-hasher-xxh32-seed0".into(), ClusterConfig::new(spec, plain(5))));
        out
    }

    #[test]
    fn jump_family_config_texts_are_frozen() {
        let configs = jump_family_configs();
        for (name, config) in &configs {
            config.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        for algo in JUMP_FAMILY {
            assert!(configs.iter().any(|(_, c)| c.spec.algorithm == algo), "{algo}");
        }
        assert!(configs.iter().any(|(_, c)| c.spec.generator.is_some()));
        let json: Vec<(String, String)> = configs.iter().map(|(n, c)| (n.clone(), c.to_json().unwrap())).collect();
        let frozen = check_or_write("jump-family-config-json.txt", &render(&json));
        check_parse_back("json", &configs, &frozen, ClusterConfig::to_json, ClusterConfig::from_json);
        let toml: Vec<(String, String)> = configs.iter().map(|(n, c)| (n.clone(), c.to_toml().unwrap())).collect();
        let frozen = check_or_write("jump-family-config-toml.txt", &render(&toml));
        check_parse_back("toml", &configs, &frozen, ClusterConfig::to_toml, ClusterConfig::from_toml);
    }

    /// JSON only: TOML integers are signed 64-bit, so a seed above `i64::MAX` has no TOML text.
    fn json_only_configs() -> Vec<(String, ClusterConfig)> {
        vec![(
            "ring-hasher-xxh3-seed-u64max".into(),
            ClusterConfig::new(
                RouterSpec::new(Algorithm::Ring).with_hasher(KeyHasher::Xxh3 { seed: u64::MAX }),
                plain(3),
            ),
        )]
    }

    /// `=== name ===` then the text (newline-terminated), per section.
    fn render(sections: &[(String, String)]) -> String {
        let mut out = String::new();
        for (name, text) in sections {
            out.push_str(&format!("=== {name} ===\n{text}"));
            if !text.ends_with('\n') {
                out.push('\n');
            }
        }
        out
    }

    /// Inverse of [`render`]: (name, body) per section, the body with its final newline.
    fn parse_sections(text: &str) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for line in text.split_inclusive('\n') {
            if let Some(name) = line.strip_prefix("=== ").and_then(|l| l.strip_suffix(" ===\n")) {
                out.push((name.to_owned(), String::new()));
            } else {
                out.last_mut().expect("text before the first section header").1.push_str(line);
            }
        }
        out
    }

    /// The frozen text of every config parses back to the same config, re-serializes to the
    /// same text, and builds a router with the same routes and fingerprint as the original.
    fn check_parse_back(
        format: &str,
        configs: &[(String, ClusterConfig)],
        frozen: &str,
        serialize: fn(&ClusterConfig) -> hashroute::Result<String>,
        parse: fn(&str) -> hashroute::Result<ClusterConfig>,
    ) {
        let sections = parse_sections(frozen);
        assert_eq!(sections.len(), configs.len(), "{format}: one section per config");
        let keys = golden_keys();
        for ((name, config), (frozen_name, body)) in configs.iter().zip(&sections) {
            assert_eq!(name, frozen_name, "{format}: section order");
            let loaded = parse(body).unwrap_or_else(|e| panic!("{format} {name}: {e}\n{body}"));
            assert_eq!(&loaded, config, "{format} {name}");
            assert_eq!(serialize(&loaded).unwrap().trim_end(), body.trim_end(), "{format} {name}: re-serialized");
            let direct = config.build().unwrap();
            let rebuilt = loaded.build().unwrap();
            assert_eq!(rebuilt.algorithm(), config.spec.algorithm, "{format} {name}");
            for key in &keys {
                assert_eq!(
                    rebuilt.node_name(rebuilt.route(key)),
                    direct.node_name(direct.route(key)),
                    "{format} {name}: key {key:?}"
                );
            }
            assert_eq!(fingerprint(&*rebuilt), fingerprint(&*direct), "{format} {name}");
        }
    }

    #[test]
    fn config_texts_are_frozen() {
        let configs = configs();
        let mut names: Vec<&str> = configs.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), configs.len(), "config names are unique");
        for (name, config) in &configs {
            config.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        // Every algorithm, option and Ketama variant is covered.
        for algo in frozen_v1() {
            assert!(configs.iter().any(|(_, c)| c.spec.algorithm == algo), "{algo}");
        }
        for v in super::frozen_variants() {
            assert!(configs.iter().any(|(_, c)| c.spec.ketama_variant == Some(v)), "{}", v.name());
        }
        assert!(configs.iter().any(|(_, c)| c.spec.vnodes.is_some()));
        assert!(configs.iter().any(|(_, c)| c.spec.table_size.is_some()));
        assert!(configs.iter().any(|(_, c)| c.spec.probes.is_some()));
        assert!(configs.iter().any(|(_, c)| c.spec.capacity.is_some()));

        let mut json_configs = configs.clone();
        json_configs.extend(json_only_configs());
        for (name, config) in json_only_configs() {
            assert!(config.to_toml().is_err(), "{name} has no TOML text");
        }

        let json: Vec<(String, String)> = json_configs.iter().map(|(n, c)| (n.clone(), c.to_json().unwrap())).collect();
        let frozen = check_or_write("config-json.txt", &render(&json));
        check_parse_back("json", &json_configs, &frozen, ClusterConfig::to_json, ClusterConfig::from_json);

        let toml: Vec<(String, String)> = configs.iter().map(|(n, c)| (n.clone(), c.to_toml().unwrap())).collect();
        let frozen = check_or_write("config-toml.txt", &render(&toml));
        check_parse_back("toml", &configs, &frozen, ClusterConfig::to_toml, ClusterConfig::from_toml);
    }
}

//! Compatibility vectors of the proxies and clients already deployed (twemproxy, nginx,
//! HAProxy, Envoy's ring hash, pylibmc/libmemcached, Kafka): every row of their files in
//! `../shared/vectors/` (see its README). Each test counts the rows it checked and asserts the
//! count, so a truncated file fails; rows a router here does not model are skipped *and counted*.

mod common;

use std::collections::HashMap;

use hashroute::{EnvoyRing, Haproxy, Kafka, Ketama, KetamaVariant, KeyHasher, Nginx, Node, NodeSet, Router};

use common::{parse_u64, read_csv, unhex};

fn json(name: &str) -> Option<serde_json::Value> {
    let path = common::vectors_dir()?.join(name);
    Some(
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
            .unwrap(),
    )
}

/// `127.0.0.1:11211..` with these weights.
fn servers(first_port: u16, weights: &[f64]) -> NodeSet {
    NodeSet::new(
        weights
            .iter()
            .enumerate()
            .map(|(i, &w)| Node::new(format!("127.0.0.1:{}", first_port + i as u16)).with_weight(w)),
    )
    .unwrap()
}

fn twemproxy(nodes: NodeSet, hasher: KeyHasher) -> Ketama {
    Ketama::builder().variant(KetamaVariant::Twemproxy).key_hasher(hasher).node_set(nodes).build().unwrap()
}

#[test]
fn twemproxy_ketama() {
    let Some(rows) = read_csv("twemproxy_ketama.csv") else { return };
    let w5 = [1.0, 2.0, 3.0, 4.0, 10.0];
    let named = NodeSet::new(
        [("alpha", 1.0), ("beta", 1.0), ("gamma", 1.0), ("delta", 10.0), ("epsilon", 12.0)]
            .map(|(n, w)| Node::new(n).with_weight(w)),
    )
    .unwrap();
    let routers: HashMap<&str, Ketama> = [
        ("md5_eq3", twemproxy(servers(11211, &[1.0; 3]), KeyHasher::Md5)),
        ("md5_w5", twemproxy(servers(11211, &w5), KeyHasher::Md5)),
        ("fnv1a_64_w5", twemproxy(servers(11211, &w5), KeyHasher::Fnv1a32)),
        ("md5_named5", twemproxy(named, KeyHasher::Md5)),
    ]
    .into();
    // Weights 1, 1, 1, 10, 12 give 7, 7, 7, 80, 95 digests in twemproxy's float32.
    assert_eq!(routers["md5_named5"].points().len(), 4 * (7 + 7 + 7 + 80 + 95));
    let mut checked: HashMap<&str, usize> = HashMap::new();
    for row in &rows {
        let key = unhex(&row["key_hex"]);
        let k = &routers[row["config"].as_str()];
        assert_eq!(k.node_name(k.route(&key)), row["server"], "{row:?}");
        *checked.entry(row["config"].as_str()).or_default() += 1;
    }
    assert_eq!(checked, [("md5_eq3", 300), ("md5_w5", 300), ("fnv1a_64_w5", 150), ("md5_named5", 150)].into());
}

#[test]
fn nginx_hash_consistent() {
    let Some(rows) = read_csv("nginx_hash_consistent.csv") else { return };
    let port80 = NodeSet::from_names(["127.0.0.1", "127.0.0.1:18082", "127.0.0.1:18083", "127.0.0.1:18084"]).unwrap();
    let routers: HashMap<&str, Nginx> = [
        ("nginx_eq4", Nginx::builder().node_set(servers(18081, &[1.0; 4])).build().unwrap()),
        ("nginx_w1125", Nginx::builder().node_set(servers(18081, &[1.0, 1.0, 2.0, 5.0])).build().unwrap()),
        ("nginx_port80", Nginx::builder().node_set(port80).build().unwrap()),
    ]
    .into();
    let mut checked: HashMap<&str, usize> = HashMap::new();
    for row in &rows {
        let key = unhex(&row["uri_hex"]);
        let r = &routers[row["config"].as_str()];
        assert_eq!(r.node_name(r.route(&key)), row["backend"], "{row:?}");
        *checked.entry(row["config"].as_str()).or_default() += 1;
    }
    assert_eq!(checked, [("nginx_eq4", 300), ("nginx_w1125", 300), ("nginx_port80", 300)].into());
}

#[test]
fn haproxy_consistent() {
    let Some(rows) = read_csv("haproxy_consistent.csv") else { return };
    let build = |hasher, weights: [f64; 4]| {
        Haproxy::builder()
            .hasher(hasher)
            .weighted_nodes(["s1", "s2", "s3", "s4"].into_iter().zip(weights))
            .build()
            .unwrap()
    };
    let w1125 = [1.0, 1.0, 2.0, 5.0];
    let routers: HashMap<&str, Haproxy> = [
        ("haproxy_default_w1125", build(KeyHasher::SdbmAvalanche, w1125)),
        ("haproxy_sdbm_avalanche_w1125", build(KeyHasher::SdbmAvalanche, w1125)),
        ("haproxy_sdbm_w1125", build(KeyHasher::Sdbm, w1125)),
        ("haproxy_default_eq4", build(KeyHasher::SdbmAvalanche, [1.0; 4])),
    ]
    .into();
    let mut checked: HashMap<&str, usize> = HashMap::new();
    for row in &rows {
        let key = unhex(&row["uri_hex"]);
        let r = &routers[row["config"].as_str()];
        let id = r.route(&key);
        assert_eq!(r.node_name(id), row["server"], "{row:?}");
        assert_eq!(r.server_ids()[id.index()].to_string(), row["server_id"], "{row:?}");
        *checked.entry(row["config"].as_str()).or_default() += 1;
    }
    let want = [
        ("haproxy_default_w1125", 300),
        ("haproxy_sdbm_avalanche_w1125", 300),
        ("haproxy_sdbm_w1125", 300),
        ("haproxy_default_eq4", 300),
    ];
    assert_eq!(checked, want.into());
}

#[test]
fn libmemcached_pylibmc_live() {
    let Some(rows) = read_csv("libmemcached_pylibmc_live.csv") else { return };
    let oaat = |nodes| Ketama::builder().variant(KetamaVariant::LibmemcachedOaat).node_set(nodes).build().unwrap();
    let routers: HashMap<&str, Ketama> = [
        ("pylibmc_ketama_w1234", oaat(servers(11211, &[1.0, 2.0, 3.0, 4.0]))),
        ("pylibmc_ketama_wedge5", oaat(servers(11211, &[1.0, 1.0, 1.0, 10.0, 12.0]))),
    ]
    .into();
    let mut checked: HashMap<&str, usize> = HashMap::new();
    for row in &rows {
        let key = unhex(&row["key_hex"]);
        let k = &routers[row["config"].as_str()];
        assert_eq!(k.node_name(k.route(&key)), row["server"], "{row:?}");
        *checked.entry(row["config"].as_str()).or_default() += 1;
    }
    assert_eq!(checked, [("pylibmc_ketama_w1234", 100), ("pylibmc_ketama_wedge5", 100)].into());
}

#[test]
fn ketama_assignments_oaat_column() {
    let Some(rows) = read_csv("ketama_assignments.csv") else { return };
    let k =
        Ketama::builder().variant(KetamaVariant::LibmemcachedOaat).node_set(servers(11211, &[1.0; 3])).build().unwrap();
    assert_eq!(k.points().len(), 300, "100 points per server");
    let mut checked = 0;
    for row in &rows {
        let want = row["libmemcached_behavior_ketama_oaat"].as_str();
        if want.is_empty() {
            continue;
        }
        assert_eq!(row["config"], "eq3");
        let key = unhex(&row["key_utf8_hex"]);
        assert_eq!(k.node_name(k.route(&key)), want, "{row:?}");
        checked += 1;
    }
    assert_eq!(checked, 481);
}

#[test]
fn kafka_murmur2() {
    let Some(rows) = read_csv("kafka_murmur2.csv") else { return };
    let mut checked = 0;
    for row in &rows {
        let key = unhex(&row["key_hex"]);
        assert_eq!(KeyHasher::Murmur2Kafka.hash(&key), parse_u64(&row["murmur2_u32"]), "{row:?}");
        for n in [1u32, 3, 6, 12, 50, 100, 1000] {
            let want = &row[&format!("partition_{n}")];
            assert_eq!(Kafka::partition(&key, n).to_string(), *want, "{n}: {row:?}");
            let k = Kafka::partitions(n).unwrap();
            assert_eq!(k.node_name(k.route(&key)), want);
            checked += 1;
        }
    }
    assert_eq!(checked, 700);
}

#[test]
fn kafka_murmur2_upstream() {
    let Some(rows) = read_csv("kafka_murmur2_upstream.csv") else { return };
    let (mut hashes, mut partitions) = (0, 0);
    for row in &rows {
        let key = unhex(&row["key_hex"]);
        if !row["murmur2_i32"].is_empty() {
            let want: i32 = row["murmur2_i32"].parse().unwrap();
            assert_eq!(KeyHasher::Murmur2Kafka.hash(&key) as u32 as i32, want, "{row:?}");
            hashes += 1;
        }
        if !row["num_partitions"].is_empty() {
            let n: u32 = row["num_partitions"].parse().unwrap();
            assert_eq!(Kafka::partition(&key, n).to_string(), row["partition"], "{row:?}");
            partitions += 1;
        }
    }
    assert_eq!((hashes, partitions), (17, 10));
}

/// Envoy's host key: metadata `hash_key`, else the hostname when asked, else the address.
fn envoy_host_key(case: &serde_json::Value, host: &serde_json::Value) -> String {
    if let Some(k) = host.get("metadata_hash_key").and_then(|k| k.as_str()).filter(|k| !k.is_empty()) {
        return k.to_owned();
    }
    if case["use_hostname_for_hashing"].as_bool().unwrap() {
        return host["hostname"].as_str().unwrap().to_owned();
    }
    host["address"].as_str().unwrap().to_owned()
}

/// The ring of one case (`None` when every locality has weight 0: Envoy's ring is empty, which
/// no router here can be). Locality-weighted cases list the hosts locality by locality, each
/// labelled with its locality and that locality's weight.
fn envoy_ring(case: &serde_json::Value) -> Option<(EnvoyRing, HashMap<String, u64>)> {
    let hosts = case["hosts"].as_array().unwrap();
    let mut index_of = HashMap::new();
    let node = |h: &serde_json::Value, index_of: &mut HashMap<String, u64>| {
        let key = envoy_host_key(case, h);
        index_of.insert(key.clone(), h["index"].as_u64().unwrap());
        Node::new(key).with_weight(h["weight"].as_f64().unwrap())
    };
    let nodes: Vec<Node> = if case["locality_weighted"].as_bool().unwrap() {
        let localities = case["localities"].as_array().unwrap();
        if localities.iter().all(|l| l["weight"].as_u64() == Some(0)) {
            return None;
        }
        let mut out = Vec::new();
        for l in localities {
            for i in l["host_indices"].as_array().unwrap() {
                let h = hosts.iter().find(|h| h["index"] == *i).unwrap();
                out.push(
                    node(h, &mut index_of)
                        .with_label(EnvoyRing::LOCALITY_LABEL, l["name"].as_str().unwrap())
                        .with_label(EnvoyRing::LOCALITY_WEIGHT_LABEL, l["weight"].to_string()),
                );
            }
        }
        assert_eq!(out.len(), hosts.len(), "every host is in a locality");
        out
    } else {
        hosts.iter().map(|h| node(h, &mut index_of)).collect()
    };
    let nodes = NodeSet::new(nodes).unwrap();
    let hasher = match case["hash_function"].as_str().unwrap() {
        "XX_HASH" => KeyHasher::Xxh64 { seed: 0 },
        "MURMUR_HASH_2" => KeyHasher::Murmur64aEnvoy,
        other => panic!("unknown hash function {other}"),
    };
    let ring = EnvoyRing::builder()
        .hasher(hasher)
        .min_ring_size(case["minimum_ring_size"].as_u64().unwrap())
        .max_ring_size(case["maximum_ring_size"].as_u64().unwrap())
        .node_set(nodes)
        .build()
        .unwrap();
    Some((ring, index_of))
}

#[test]
fn envoy_ring_hash() {
    let Some(doc) = json("envoy_ring_hash.json") else { return };
    let mut checked: HashMap<&str, usize> = HashMap::new();
    let mut empty = 0;
    for case in doc["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let Some((ring, index_of)) = envoy_ring(case) else {
            assert!(case["expected_empty_ring"].as_bool().unwrap(), "{name}");
            empty += 1;
            continue;
        };
        let host = |id: hashroute::NodeId| index_of[ring.node_name(id)];
        let u = |v: &serde_json::Value| v.as_str().unwrap().parse::<u64>().unwrap();
        if let Some(stats) = case.get("expected_stats").filter(|s| !s.is_null()) {
            assert_eq!(ring.ring_size(), stats["size"].as_u64().unwrap(), "{name}");
            let mut per_host = vec![0u64; ring.node_count()];
            for &o in ring.owners() {
                per_host[o as usize] += 1;
            }
            // The gauges count the hosts Envoy weighs: those of weight-0 localities are not among them.
            let weighed = |i: usize| {
                let node = ring.nodes().get(hashroute::NodeId::from_index(i as u32));
                node.label(EnvoyRing::LOCALITY_WEIGHT_LABEL) != Some("0")
            };
            let min = (0..per_host.len()).filter(|&i| weighed(i)).map(|i| per_host[i]).min().unwrap();
            assert_eq!(min, stats["min_hashes_per_host"].as_u64().unwrap(), "{name}");
            assert_eq!(*per_host.iter().max().unwrap(), stats["max_hashes_per_host"].as_u64().unwrap(), "{name}");
            *checked.entry("stats").or_default() += 1;
        }
        if let Some(want) = case.get("expected_ring").and_then(|r| r.as_array()) {
            let got: Vec<(u64, u64)> = ring
                .points()
                .iter()
                .zip(ring.owners())
                .map(|(&p, &o)| (p, host(hashroute::NodeId::from_index(o))))
                .collect();
            let want: Vec<(u64, u64)> =
                want.iter().map(|e| (u(&e["hash"]), e["host_index"].as_u64().unwrap())).collect();
            assert_eq!(got, want, "{name}");
            *checked.entry("ring").or_default() += 1;
        }
        // Bounded loads (hash_balance_factor) change picks, not the ring: not modelled.
        let bounded = case["hash_balance_factor"].as_u64().unwrap() != 0;
        for pick in case.get("expected_picks").and_then(|p| p.as_array()).into_iter().flatten() {
            if bounded {
                *checked.entry("picks skipped (bounded load)").or_default() += 1;
                continue;
            }
            assert_eq!(
                host(ring.route_hash(u(&pick["hash"])).unwrap()),
                pick["host_index"].as_u64().unwrap(),
                "{name}: {pick}"
            );
            *checked.entry("picks").or_default() += 1;
        }
        for retry in case.get("expected_retry_picks").and_then(|p| p.as_array()).into_iter().flatten() {
            // Attempt a takes entry (idx + a) mod len; the first accepted host, else the last tried.
            let len = ring.points().len();
            let idx = ring.points().partition_point(|&p| p < u(&retry["hash"])) % len;
            let rejected = |h: u64| match &retry["rejected_host_indices"] {
                serde_json::Value::String(all) if all == "all" => true,
                list => list.as_array().unwrap().iter().any(|r| r.as_u64() == Some(h)),
            };
            let tries = retry["host_selection_retry_count"].as_u64().unwrap() as usize;
            let mut got = 0;
            for a in 0..=tries {
                got = host(hashroute::NodeId::from_index(ring.owners()[(idx + a) % len]));
                if !rejected(got) {
                    break;
                }
            }
            assert_eq!(got, retry["host_index"].as_u64().unwrap(), "{name}: {retry}");
            *checked.entry("retry").or_default() += 1;
        }
        if let Some(hist) = case.get("expected_histogram").filter(|h| !h.is_null()) {
            let n = hist["num_hashes"].as_u64().unwrap();
            let mut got = vec![0u64; ring.node_count()];
            for i in 0..n {
                got[host(ring.route_hash(i * (u64::MAX / n)).unwrap()) as usize] += 1;
            }
            match hist["counts_by_host_index"].as_array() {
                Some(want) => {
                    let want: Vec<u64> = want.iter().map(|c| c.as_u64().unwrap()).collect();
                    assert_eq!(got, want, "{name}");
                }
                None => {
                    // SmallFractionalScale: exactly 2 hosts get no hash, the other two all of them.
                    assert_eq!(got.iter().filter(|&&c| c == 0).count(), 2, "{name}: {got:?}");
                    assert_eq!(got.iter().sum::<u64>(), n);
                }
            }
            *checked.entry("histogram").or_default() += 1;
        }
    }
    let mut counts: Vec<(&str, usize)> = checked.into_iter().collect();
    counts.sort();
    println!("envoy ring cases: {counts:?}, empty rings: {empty}");
    assert_eq!(empty, 1, "ZeroLocalityWeights");
    let want = [
        ("histogram", 5),
        ("picks", 55),
        ("picks skipped (bounded load)", 6),
        ("retry", 4),
        ("ring", 8),
        ("stats", 17),
    ];
    assert_eq!(counts, want);
}

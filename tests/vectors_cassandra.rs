//! Compatibility vectors of Cassandra's token-aware clients (the DataStax Python driver):
//! every row of `../shared/vectors/cassandra_murmur3_tokens.csv` and every key of every layout
//! of `cassandra_replicas.json` (see the README there). Each test counts what it checked and
//! asserts the count, so a truncated file fails.

mod common;

use hashroute::cassandra::{murmur3_token, token_to_position};
use hashroute::{KeyHasher, Node, NodeId, Replication, Router, TokenRing};

use common::{read_csv, unhex};

fn json(name: &str) -> Option<serde_json::Value> {
    let path = common::vectors_dir()?.join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some(serde_json::from_str(&text).unwrap())
}

/// h1 of the `murmur3` crate's x64_128, seed 0: standard MurmurHash3.
fn standard_h1(key: &[u8]) -> i64 {
    murmur3::murmur3_x64_128(&mut &key[..], 0).expect("slice read") as u64 as i64
}

#[test]
fn murmur3_partitioner_tokens() {
    let Some(rows) = read_csv("cassandra_murmur3_tokens.csv") else { return };
    let (mut checked, mut signed_tails, mut empty) = (0, 0, 0);
    let keys: Vec<Vec<u8>> = rows.iter().map(|r| unhex(&r["key_hex"])).collect();
    let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
    let mut batch = vec![0u64; refs.len()];
    KeyHasher::CassandraMurmur3.hash_batch(&refs, &mut batch);
    for ((row, key), &b) in rows.iter().zip(&keys).zip(&batch) {
        let token: i64 = row["token"].parse().unwrap();
        assert_eq!(murmur3_token(key), token, "{row:?}");
        assert_eq!(KeyHasher::CassandraMurmur3.hash(key), token_to_position(token), "{row:?}");
        assert_eq!(b, token_to_position(token), "{row:?} (batch)");
        let tail = &key[key.len() / 16 * 16..];
        if tail.iter().any(|&b| b >= 0x80) {
            signed_tails += 1;
        } else {
            // Tails below 0x80: the token is standard Murmur3's h1.
            assert_eq!(token, standard_h1(key), "{row:?}");
        }
        empty += usize::from(key.is_empty());
        checked += 1;
    }
    assert_eq!(checked, 1500);
    assert!(empty >= 1, "the empty key (token 0) is in the file");
    assert!(signed_tails > 100, "only {signed_tails} rows exercise the sign extension");
}

/// A layout's ring, from its nodes (`dc` is the zone label, `rack` the rack label).
fn layout_ring(layout: &serde_json::Value) -> TokenRing {
    let nodes = layout["nodes"].as_array().unwrap().iter().map(|n| {
        let tokens = n["tokens"].as_array().unwrap().iter().map(|t| t.as_i64().unwrap());
        Node::new(n["name"].as_str().unwrap())
            .with_label("zone", n["dc"].as_str().unwrap())
            .with_label("rack", n["rack"].as_str().unwrap())
            .with_tokens(tokens)
    });
    TokenRing::from_nodes(nodes.collect::<Vec<_>>()).unwrap()
}

/// The layout's strategy as a [`Replication`], through its text form.
fn layout_replication(layout: &serde_json::Value) -> Replication {
    let strategy = layout["strategy"].as_object().unwrap();
    let text = match strategy["class"].as_str().unwrap() {
        "SimpleStrategy" => format!("simple:{}", strategy["replication_factor"]),
        "NetworkTopologyStrategy" => {
            let dcs: Vec<String> =
                strategy.iter().filter(|(k, _)| *k != "class").map(|(dc, rf)| format!("{dc}={rf}")).collect();
            format!("nts:{}", dcs.join(","))
        }
        other => panic!("unknown strategy {other}"),
    };
    text.parse().unwrap()
}

fn names(ring: &TokenRing, ids: &[NodeId]) -> Vec<String> {
    ids.iter().map(|&id| ring.node_name(id).to_owned()).collect()
}

#[test]
fn replica_lists_match_the_driver() {
    let Some(doc) = json("cassandra_replicas.json") else { return };
    let mut checked = 0;
    let mut layouts = 0;
    for (name, layout) in doc.as_object().unwrap().iter().filter(|(k, _)| !k.starts_with('_')) {
        let ring = layout_ring(layout);
        let replication = layout_replication(layout);
        // The same ring through its tokens file.
        let reread = TokenRing::parse(&ring.to_tokens_file().unwrap()).unwrap();
        for k in layout["keys"].as_array().unwrap() {
            let key = unhex(k["key_hex"].as_str().unwrap());
            let token = k["token"].as_i64().unwrap();
            let want: Vec<String> =
                k["replicas"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_owned()).collect();
            assert_eq!(murmur3_token(&key), token, "{name} {k}");
            let got = ring.replicas_with(&key, &replication).unwrap();
            assert_eq!(names(&ring, &got), want, "{name} key {k}");
            let by_token = reread.replicas_for_token(token, &replication).unwrap();
            assert_eq!(names(&reread, &by_token), want, "{name} key {k} (tokens file)");
            if let Replication::Simple { replication_factor } = replication {
                assert_eq!(ring.node_name(ring.route(&key)), want[0], "{name} {k}");
                let preference = ring.replicas(&key, replication_factor as usize).unwrap();
                assert_eq!(names(&ring, &preference), want, "{name} {k}: preference order");
            }
            checked += 1;
        }
        layouts += 1;
    }
    assert_eq!((layouts, checked), (3, 600));
}

/// The layouts' datacenter order is the ring's, not the strategy's: `nts_3dc` names `dc1`,
/// `dc2`, `eu`; the replica lists follow the order the datacenters first appear on the ring.
#[test]
fn datacenter_order_is_the_rings() {
    let Some(doc) = json("cassandra_replicas.json") else { return };
    let ring = layout_ring(&doc["nts_3dc"]);
    let first_token_dc: Vec<String> = {
        let mut seen: Vec<String> = Vec::new();
        for (_, id) in ring.tokens() {
            let dc = ring.nodes().get(id).label("zone").unwrap().to_owned();
            if !seen.contains(&dc) {
                seen.push(dc);
            }
        }
        seen
    };
    assert_eq!(ring.datacenters().collect::<Vec<_>>(), first_token_dc);
    let reversed: Replication = "nts:eu=1,dc2=2,dc1=3".parse().unwrap();
    let forward = layout_replication(&doc["nts_3dc"]);
    for k in 0..200u32 {
        let key = format!("k{k}");
        assert_eq!(ring.replicas_with(key.as_bytes(), &reversed), ring.replicas_with(key.as_bytes(), &forward));
    }
}

//! Compatibility vectors: every applicable row of `../shared/vectors/*.csv` (see its README).
//!
//! Each test counts the rows it checked and asserts the expected count, so a truncated or empty
//! file fails. Rows an algorithm here does not implement are skipped *and counted*.

mod common;

use std::collections::HashMap;

use hashroute::internals::{md5_digest, murmur3_x64_128, murmur3_x86_32};
use hashroute::{jump, slots, Ketama, KetamaVariant, KeyHasher, Node, NodeId, NodeSet, RedisSlots, Router};
use proptest::strategy::Strategy as _;

use common::{parse_u64, read_csv, unhex};

/// Input of xxHash's sanity check: `len` bytes of its generator.
fn sanity_buffer(len: usize) -> Vec<u8> {
    let mut g: u64 = 2654435761;
    (0..len)
        .map(|_| {
            let b = (g >> 56) as u8;
            g = g.wrapping_mul(11400714785074694797);
            b
        })
        .collect()
}

#[test]
fn xxhash_sanity() {
    let Some(rows) = read_csv("xxhash_sanity.csv") else { return };
    let mut checked = 0;
    for row in &rows {
        let input = sanity_buffer(row["len"].parse().unwrap());
        let seed = parse_u64(&row["seed"]);
        let low = parse_u64(&row["expected_low64_or_value"]);
        match row["algorithm"].as_str() {
            "XXH64" => assert_eq!(KeyHasher::Xxh64 { seed }.hash(&input), low, "{row:?}"),
            "XXH3_64bits_withSeed" => assert_eq!(KeyHasher::Xxh3 { seed }.hash(&input), low, "{row:?}"),
            "XXH3_128bits_withSeed" => {
                let v = xxhash_rust::xxh3::xxh3_128_with_seed(&input, seed);
                assert_eq!((v as u64, (v >> 64) as u64), (low, parse_u64(&row["expected_high64"])), "{row:?}");
            }
            "XXH32" => {
                let seed = u32::try_from(seed).expect("XXH32 seeds are 32-bit");
                assert_eq!(KeyHasher::Xxh32 { seed }.hash(&input), low, "{row:?}");
            }
            other => panic!("unknown algorithm {other}"),
        }
        checked += 1;
    }
    assert_eq!(checked, 71);
}

#[test]
fn xxhash_strings() {
    let Some(rows) = read_csv("xxhash_strings.csv") else { return };
    let mut checked = 0;
    for row in &rows {
        let input = unhex(&row["input_hex"]);
        let seed = parse_u64(&row["seed"]);
        assert_eq!(KeyHasher::Xxh64 { seed }.hash(&input), parse_u64(&row["xxh64"]), "{row:?}");
        assert_eq!(KeyHasher::Xxh3 { seed }.hash(&input), parse_u64(&row["xxh3_64"]), "{row:?}");
        let v = xxhash_rust::xxh3::xxh3_128_with_seed(&input, seed);
        assert_eq!(v as u64, parse_u64(&row["xxh3_128_low64"]), "{row:?}");
        assert_eq!((v >> 64) as u64, parse_u64(&row["xxh3_128_high64"]), "{row:?}");
        let xxh32 = KeyHasher::Xxh32 { seed: u32::try_from(seed).expect("32-bit seed") };
        assert_eq!(xxh32.hash(&input), parse_u64(&row["xxh32"]), "{row:?}");
        checked += 1;
    }
    assert_eq!(checked, 92);
}

/// SMHasher's verification code (the `definition` in `hash_verification_values.json`) for a
/// 32-bit hash with a 32-bit seed.
fn smhasher_verification_32(hash: impl Fn(&[u8], u32) -> u32) -> u32 {
    let key: Vec<u8> = (0..=255u8).collect();
    let mut hashes = Vec::with_capacity(256 * 4);
    for i in 0..256usize {
        hashes.extend_from_slice(&hash(&key[..i], 256 - i as u32).to_le_bytes());
    }
    hash(&hashes, 0)
}

#[test]
fn hash_verification_values() {
    let Some(dir) = common::vectors_dir() else { return };
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("hash_verification_values.json")).unwrap()).unwrap();
    let mut checked = 0;
    for v in json["values"].as_array().unwrap() {
        let want = parse_u64(v["verification"].as_str().unwrap()) as u32;
        let got = match v["hash"].as_str().unwrap() {
            "XXH32" => smhasher_verification_32(|k, s| KeyHasher::Xxh32 { seed: s }.hash(k) as u32),
            "MurmurHash3_x86_32" => smhasher_verification_32(murmur3_x86_32),
            // 64- and 128-bit hashes: not checked here.
            _ => continue,
        };
        assert_eq!(got, want, "{v}");
        checked += 1;
    }
    assert_eq!(checked, 2);
}

#[test]
fn binomial_key_xxh32() {
    let Some(rows) = read_csv("binomial_hash.csv") else { return };
    let mut checked = 0;
    for row in &rows {
        // commons-codec XXHash32 of the key's UTF-8 bytes, seed 0.
        let key = unhex(&row["key_hex"]);
        assert_eq!(key, row["key"].as_bytes());
        assert_eq!(KeyHasher::Xxh32 { seed: 0 }.hash(&key), parse_u64(&row["key_xxh32_u32"]), "{row:?}");
        checked += 1;
    }
    assert_eq!(checked, 448);
}

#[test]
fn kafka_murmur2() {
    let Some(rows) = read_csv("kafka_murmur2.csv") else { return };
    let mut checked = 0;
    for row in &rows {
        let key = unhex(&row["key_hex"]);
        let h = KeyHasher::Murmur2Kafka.hash(&key);
        assert_eq!(h, parse_u64(&row["murmur2_u32"]), "{row:?}");
        assert_eq!(h as u32 as i32, row["murmur2_i32"].parse::<i32>().unwrap(), "{row:?}");
        for n in [1u64, 3, 6, 12, 50, 100, 1000] {
            // Utils.toPositive(murmur2) % numPartitions.
            assert_eq!((h & 0x7fff_ffff) % n, parse_u64(&row[&format!("partition_{n}")]), "n={n} {row:?}");
        }
        checked += 1;
    }
    assert_eq!(checked, 100);
}

#[test]
fn kafka_murmur2_upstream() {
    let Some(rows) = read_csv("kafka_murmur2_upstream.csv") else { return };
    let (mut hashes, mut partitions) = (0, 0);
    for row in &rows {
        let h = KeyHasher::Murmur2Kafka.hash(&unhex(&row["key_hex"]));
        if !row["murmur2_i32"].is_empty() {
            assert_eq!(h as u32 as i32, row["murmur2_i32"].parse::<i32>().unwrap(), "{row:?}");
            hashes += 1;
        }
        if !row["num_partitions"].is_empty() {
            let n = parse_u64(&row["num_partitions"]);
            assert_eq!((h & 0x7fff_ffff) % n, parse_u64(&row["partition"]), "{row:?}");
            partitions += 1;
        }
    }
    assert_eq!((hashes, partitions), (17, 10));
}

#[test]
fn murmur3() {
    let Some(rows) = read_csv("murmur3.csv") else { return };
    let mut checked = 0;
    for row in &rows {
        let input = unhex(&row["input_hex"]);
        let seed = parse_u64(&row["seed_u32"]) as u32;
        let x86 = parse_u64(&row["x86_32_u32"]) as u32;
        assert_eq!(murmur3_x86_32(&input, seed), x86, "{row:?}");
        assert_eq!(KeyHasher::Murmur3X86_32 { seed }.hash(&input), u64::from(x86), "{row:?}");
        let (h1, h2) = (parse_u64(&row["x64_128_h1_u64"]), parse_u64(&row["x64_128_h2_u64"]));
        assert_eq!(murmur3_x64_128(&input, seed), (h1, h2), "{row:?}");
        assert_eq!(KeyHasher::Murmur3X64 { seed }.hash(&input), h1, "{row:?}");
        let mut bytes = h1.to_le_bytes().to_vec();
        bytes.extend_from_slice(&h2.to_le_bytes());
        assert_eq!(bytes, unhex(&row["x64_128_bytes_hex"]), "{row:?}");
        checked += 1;
    }
    assert_eq!(checked, 145);
}

#[test]
fn jump_consistent_hash() {
    let Some(rows) = read_csv("jump_consistent_hash.csv") else { return };
    let mut checked = 0;
    for row in &rows {
        let key = parse_u64(&row["key_u64"]);
        assert_eq!(key, parse_u64(&row["key_hex"]));
        assert_eq!(key as i64, row["key_as_i64"].parse::<i64>().unwrap());
        let n = parse_u64(&row["num_buckets"]) as u32;
        let b = parse_u64(&row["bucket"]) as u32;
        assert_eq!(jump::bucket(key, n), b, "{row:?}");
        assert_eq!(jump::try_bucket(key, n), Ok(b));
        checked += 1;
    }
    assert_eq!(checked, 103);
}

/// The two server configurations of the ketama vectors, from `ketama_server_configs.json`.
fn ketama_configs() -> Option<HashMap<String, NodeSet>> {
    let path = common::vectors_dir()?.join("ketama_server_configs.json");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out = HashMap::new();
    for (name, servers) in json.as_object().unwrap() {
        let nodes = servers
            .as_array()
            .unwrap()
            .iter()
            .map(|s| Node::new(s["server"].as_str().unwrap()).with_weight(s["weight"].as_f64().unwrap()));
        out.insert(name.clone(), NodeSet::new(nodes).unwrap());
    }
    Some(out)
}

#[test]
fn ketama_points() {
    let Some(configs) = ketama_configs() else { return };
    let Some(rows) = read_csv("ketama_points.csv") else { return };
    let mut expected: HashMap<&str, Vec<(String, u32)>> = HashMap::new();
    for row in &rows {
        // Each row's point is the slot_h-th little-endian u32 of MD5(md5_input).
        let d = md5_digest(row["md5_input"].as_bytes());
        let h: usize = row["slot_h"].parse().unwrap();
        let point = parse_u64(&row["point_u32"]) as u32;
        assert_eq!(u32::from_le_bytes(d[4 * h..4 * h + 4].try_into().unwrap()), point, "{row:?}");
        assert_eq!(row["md5_input"], format!("{}-{}", row["server"], row["digest_index_k"]));
        expected.entry(row["config"].as_str()).or_default().push((row["server"].clone(), point));
    }
    let mut checked = 0;
    for (config, mut want) in expected {
        let k = Ketama::builder().node_set(configs[config].clone()).variant(KetamaVariant::Libketama).build().unwrap();
        let mut got: Vec<(String, u32)> = k
            .points()
            .iter()
            .zip(k.owners())
            .map(|(&p, &o)| (k.node_name(NodeId::from_index(o)).to_owned(), p))
            .collect();
        want.sort();
        got.sort();
        assert_eq!(got, want, "config {config}: every point of every server");
        checked += want.len();
    }
    assert_eq!(checked, 1120);
}

#[test]
fn ketama_assignments() {
    let Some(configs) = ketama_configs() else { return };
    let Some(rows) = read_csv("ketama_assignments.csv") else { return };
    let columns = [
        ("libketama", KetamaVariant::Libketama),
        ("uhashring_ketama", KetamaVariant::Uhashring),
        ("libmemcached_ketama_weighted", KetamaVariant::Libmemcached),
        ("libmemcached_ketama_spy", KetamaVariant::Spymemcached),
        ("python_hash_ring", KetamaVariant::PythonHashRing),
    ];
    let routers: HashMap<(String, KetamaVariant), Ketama> = configs
        .iter()
        .flat_map(|(c, nodes)| {
            columns.iter().map(move |&(_, v)| {
                ((c.clone(), v), Ketama::builder().node_set(nodes.clone()).variant(v).build().unwrap())
            })
        })
        .collect();
    let mut checked: HashMap<&str, usize> = HashMap::new();
    let mut skipped_oaat = 0;
    for row in &rows {
        let key = unhex(&row["key_utf8_hex"]);
        let h = Ketama::key_hash(&key);
        assert_eq!(u64::from(h), parse_u64(&row["key_md5_u32"]), "{row:?}");
        let lk = &routers[&(row["config"].clone(), KetamaVariant::Libketama)];
        assert_eq!(u64::from(lk.points()[lk.point_index(h)]), parse_u64(&row["libketama_point_u32"]), "{row:?}");
        for (col, v) in columns {
            let want = row[col].as_str();
            if want.is_empty() {
                continue;
            }
            let k = &routers[&(row["config"].clone(), v)];
            assert_eq!(k.node_name(k.route(&key)), want, "{col}: {row:?}");
            assert_eq!(k.route_hash32(h), k.route(&key));
            *checked.entry(col).or_default() += 1;
        }
        if !row["libmemcached_behavior_ketama_oaat"].is_empty() {
            skipped_oaat += 1; // Checked by tests/vectors_proxies.rs (ketama_assignments_oaat_column).
        }
    }
    let mut counts: Vec<(&str, usize)> = checked.into_iter().collect();
    counts.sort();
    assert_eq!(
        counts,
        vec![
            ("libketama", 962),
            ("libmemcached_ketama_spy", 962),
            ("libmemcached_ketama_weighted", 962),
            ("python_hash_ring", 962),
            ("uhashring_ketama", 962),
        ]
    );
    assert_eq!(skipped_oaat, 481);
}

#[test]
fn redis_keyslot() {
    let Some(rows) = read_csv("redis_keyslot.csv") else { return };
    let mut checked = 0;
    for row in &rows {
        let key = unhex(&row["key_hex"]);
        assert_eq!(slots::hashed_part(&key), unhex(&row["hashed_part_hex"]).as_slice(), "{row:?}");
        assert_eq!(
            u64::from(hashroute::internals::crc16_xmodem(slots::hashed_part(&key))),
            parse_u64(&row["crc16_xmodem_of_hashed_part"])
        );
        assert_eq!(u64::from(slots::key_slot(&key)), parse_u64(&row["slot"]), "{row:?}");
        checked += 1;
    }
    assert_eq!(checked, 75);
}

#[test]
fn redis_slot_table() {
    let Some(rows) = read_csv("redis_slot_table.csv") else { return };
    let r = RedisSlots::builder().node_set(NodeSet::from_names(["a", "b", "c"]).unwrap()).build().unwrap();
    let mut checked = 0;
    for row in &rows {
        let slot: u16 = row["slot"].parse().unwrap();
        assert_eq!(slots::key_slot(row["key"].as_bytes()), slot, "{row:?}");
        assert_eq!(r.route(row["key"].as_bytes()), r.slot_owner(slot));
        assert_eq!(slot, checked);
        checked += 1;
    }
    assert_eq!(checked, 16384);
}

// ---- The 2023-2024 memory-free routers ----

/// Routers over `n` weight-1 nodes named `0..n`, for the small rows (routes equal buckets).
fn numbered(n: u32) -> NodeSet {
    NodeSet::from_names((0..n).map(|i| i.to_string())).unwrap()
}

/// The (key, n, bucket) triple of a u64-grid row.
fn grid_row(row: &HashMap<String, String>) -> (u64, u32, u32) {
    (parse_u64(&row["key_u64"]), parse_u64(&row["num_buckets"]) as u32, parse_u64(&row["bucket"]) as u32)
}

#[test]
fn jumpback_hash() {
    use hashroute::jumpback::{self, JumpBackGenerator as Generator};
    let Some(rows) = read_csv("jumpback_hash.csv") else { return };
    let mut checked = 0;
    for row in &rows {
        let (key, n, b) = grid_row(row);
        let generator = match row["generator"].as_str() {
            "splitmix64" => Generator::SplitMix64,
            "xorshift_l7r9" => Generator::XorshiftL7R9,
            other => panic!("unknown generator {other}"),
        };
        assert_eq!(jumpback::try_bucket_with(key, n, generator), Ok(b), "{row:?}");
        if generator == Generator::SplitMix64 {
            assert_eq!(jumpback::bucket(key, n), b, "{row:?}");
            assert_eq!(jumpback::try_bucket(key, n), Ok(b));
        }
        let mut out = [0u32; 1];
        jumpback::bucket_batch(&[key], n, generator, &mut out);
        assert_eq!(out[0], b, "batch {row:?}");
        if n <= 1024 {
            let r = hashroute::JumpBack::builder().generator(generator).node_set(numbered(n)).build().unwrap();
            assert_eq!(r.route_hash(key).unwrap().as_u32(), b, "router {row:?}");
        }
        checked += 1;
    }
    assert_eq!(checked, 896);
}

#[test]
fn fliphash_crate() {
    use hashroute::fliphash;
    let Some(rows) = read_csv("fliphash.csv") else { return };
    let mut checked = 0;
    for row in &rows {
        let (key, n, b) = grid_row(row);
        assert_eq!(fliphash::bucket(key, n), b, "{row:?}");
        assert_eq!(fliphash::try_bucket(key, n), Ok(b));
        assert_eq!(fliphash::bucket_seeded(key, 0, n), Ok(b));
        if n <= 1024 {
            let r = hashroute::FlipHash::builder().node_set(numbered(n)).build().unwrap();
            assert_eq!(r.route_hash(key).unwrap().as_u32(), b, "router {row:?}");
        }
        checked += 1;
    }
    assert_eq!(checked, 448);
}

#[test]
fn power_consistent_hash() {
    use hashroute::power;
    let Some(rows) = read_csv("power_ch.csv") else { return };
    let mut checked = 0;
    for row in &rows {
        let (key, n, b) = grid_row(row);
        assert_eq!(power::bucket(key, n), b, "{row:?}");
        assert_eq!(power::try_bucket(key, n), Ok(b));
        if n <= 1024 {
            let r = hashroute::PowerCh::builder().node_set(numbered(n)).build().unwrap();
            assert_eq!(r.route_hash(key).unwrap().as_u32(), b, "router {row:?}");
        }
        checked += 1;
    }
    assert_eq!(checked, 420);
}

#[test]
fn binomial_hash_u64() {
    use hashroute::binomial;
    let Some(rows) = read_csv("binomial_hash_u64.csv") else { return };
    let mut checked = 0;
    for row in &rows {
        let (key, n, b) = grid_row(row);
        assert_eq!(binomial::bucket(key, n), b, "{row:?}");
        assert_eq!(binomial::try_bucket(key, n), Ok(b));
        if n <= 1024 {
            let r = hashroute::BinomialHash::builder().node_set(numbered(n)).build().unwrap();
            assert_eq!(r.route_hash(key).unwrap().as_u32(), b, "router {row:?}");
        }
        checked += 1;
    }
    assert_eq!(checked, 448);
}

#[test]
fn binomial_hash_xxh32_strings() {
    use hashroute::binomial;
    let Some(rows) = read_csv("binomial_hash.csv") else { return };
    let hasher = KeyHasher::Xxh32 { seed: 0 };
    let mut checked = 0;
    for row in &rows {
        let key = unhex(&row["key_hex"]);
        assert_eq!(key, row["key"].as_bytes());
        let h = hasher.hash(&key);
        assert_eq!(h, parse_u64(&row["key_xxh32_u32"]), "{row:?}");
        let n = parse_u64(&row["num_buckets"]) as u32;
        let b = parse_u64(&row["bucket"]) as u32;
        assert_eq!(binomial::bucket(h, n), b, "{row:?}");
        if n <= 1024 {
            let r = hashroute::BinomialHash::builder().hasher(hasher).node_set(numbered(n)).build().unwrap();
            assert_eq!(r.route(&key).as_u32(), b, "router {row:?}");
        }
        checked += 1;
    }
    assert_eq!(checked, 448);
}

#[test]
fn jumpback_anchor_scenarios() {
    use hashroute::jumpback::JumpBackAnchorBucketSet;
    let Some(dir) = common::vectors_dir() else { return };
    let text = std::fs::read_to_string(dir.join("jumpback_anchor.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<u64> =
        doc["keys_u64"].as_array().unwrap().iter().map(|k| k.as_str().unwrap().parse().unwrap()).collect();
    assert_eq!(keys.len(), 50);
    let as_u32 = |v: &serde_json::Value| v.as_u64().unwrap() as u32;
    let mut steps = 0;
    for scenario in doc["scenarios"].as_array().unwrap() {
        let mut set = JumpBackAnchorBucketSet::new();
        for step in scenario["steps"].as_array().unwrap() {
            match step["op"].as_str().unwrap() {
                "add" => {
                    let got: Vec<u32> = (0..step["count"].as_u64().unwrap()).map(|_| set.add_bucket()).collect();
                    let want: Vec<u32> = step["returned"].as_array().unwrap().iter().map(as_u32).collect();
                    assert_eq!(got, want, "{step}");
                }
                "remove" => {
                    for (id, ret) in step["ids"].as_array().unwrap().iter().zip(step["returned"].as_array().unwrap()) {
                        let id = id.as_i64().unwrap();
                        let got = u32::try_from(id).is_ok_and(|id| set.remove_bucket(id));
                        assert_eq!(got, ret.as_bool().unwrap(), "remove {id} in {step}");
                    }
                }
                other => panic!("unknown op {other}"),
            }
            assert_eq!(set.num_buckets(), as_u32(&step["num_buckets"]), "{step}");
            let working: Vec<u32> = step["working_buckets"].as_array().unwrap().iter().map(as_u32).collect();
            assert_eq!(set.working_buckets(), working, "{step}");
            let state = unhex(step["state_hex"].as_str().unwrap());
            assert_eq!(set.state(), state, "{step}");
            let restored = JumpBackAnchorBucketSet::from_state(&state).unwrap();
            for (i, (&k, want)) in keys.iter().zip(step["assignments"].as_array().unwrap()).enumerate() {
                let want = want.as_u64().map(|b| b as u32);
                assert_eq!(set.bucket(k), want, "key #{i} in {step}");
                assert_eq!(restored.bucket(k), want, "restored, key #{i} in {step}");
            }
            steps += 1;
        }
    }
    assert_eq!(steps, 19);
}

// The reference crates themselves as oracles, beyond the vector rows: FlipHash with any seed
// (the vectors hold seed 0 only) and power CH over random keys and bucket counts.
proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    #[test]
    fn fliphash_equals_the_crate_for_any_seed(key: u64, seed: u64, n in 1u32..=u32::MAX) {
        let want = fliphash::fliphash_64_with_seed(key, seed, ..=u64::from(n - 1));
        proptest::prop_assert_eq!(u64::from(hashroute::fliphash::bucket_seeded(key, seed, n).unwrap()), want);
        if seed == 0 {
            proptest::prop_assert_eq!(u64::from(hashroute::fliphash::bucket(key, n)), want);
        }
    }

    #[test]
    fn power_ch_equals_the_crate(key: u64, n in proptest::prop_oneof![2u32..100, 2u32..=(1 << 31), (1u32..31).prop_map(|s| (1 << s) + 1)]) {
        let crate_hasher = power_consistent_hash::PowerConsistentHasher::try_new(n).unwrap();
        proptest::prop_assert_eq!(hashroute::power::bucket(key, n), crate_hasher.hash_u64(key));
    }
}

#[test]
fn power_ch_crate_rejects_one_bucket_and_we_answer_zero() {
    assert!(power_consistent_hash::PowerConsistentHasher::try_new(1).is_err());
    assert_eq!(hashroute::power::bucket(u64::MAX, 1), 0);
    assert_eq!(hashroute::power::try_bucket(5, 0), Err(hashroute::Error::ZeroBuckets));
}

//! Compatibility vectors: every applicable row of `../shared/vectors/*.csv` (see its README).
//!
//! Each test counts the rows it checked and asserts the expected count, so a truncated or empty
//! file fails. Rows an algorithm here does not implement are skipped *and counted*.

mod common;

use std::collections::HashMap;

use hashroute::internals::{md5_digest, murmur3_x64_128, murmur3_x86_32};
use hashroute::{jump, slots, Ketama, KetamaVariant, KeyHasher, Node, NodeId, NodeSet, RedisSlots, Router};

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

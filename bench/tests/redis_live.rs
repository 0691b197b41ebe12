//! Redis Cluster agreement against a real server: `CLUSTER KEYSLOT` on a cluster-enabled
//! `redis-server` must equal the crate's key slot for every key, hash tags and their edge cases
//! included.
//!
//! The server is started on a free 127.0.0.1 port in a temporary directory and killed by a guard
//! on every exit path. Without `redis-server` the tests print `SKIPPED: ...` and pass, unless the
//! `CI` environment variable is set: CI installs the server (scripts/install_redis.sh), so there a
//! missing binary is a failure.

mod redis_support;

use std::path::PathBuf;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use redis_support::{find_binary, RedisServer};

/// Random keys checked per run (the edge cases come on top).
const RANDOM_KEYS: usize = 12_000;

/// Commands per pipeline round trip.
const PIPELINE: usize = 1_000;

/// The slot under test: the crate's implementation.
fn crate_key_slot(key: &[u8]) -> u16 {
    hashroute::slots::key_slot(key)
}

/// An independent, deliberately plain restatement of the Redis Cluster specification (hash tag
/// = bytes between the first `{` and the first `}` after it, if non-empty; CRC16-XMODEM mod
/// 16384). It checks the harness itself: if the server and this agree but the crate does not,
/// the crate is wrong; if all three disagree, the test's key handling is.
fn spec_key_slot(key: &[u8]) -> u16 {
    let hashed = match key.iter().position(|&b| b == b'{') {
        Some(open) => match key[open + 1..].iter().position(|&b| b == b'}') {
            Some(len) if len > 0 => &key[open + 1..open + 1 + len],
            _ => key,
        },
        None => key,
    };
    hashroute::internals::crc16_xmodem(hashed) % 16384
}

/// `redis-server`, or `None` after printing why the test is skipped.
///
/// # Panics
/// When the binary is missing and `CI` is set.
fn binary_or_skip() -> Option<PathBuf> {
    match find_binary() {
        Ok(p) => Some(p),
        Err(why) if std::env::var_os("CI").is_some() => {
            panic!("redis-server not found ({why}); CI is set, so this fails: run scripts/install_redis.sh")
        }
        Err(why) => {
            eprintln!("SKIPPED: redis-server not found ({why}); install it with scripts/install_redis.sh");
            None
        }
    }
}

/// Hand-picked keys: every hash-tag edge case the specification distinguishes.
fn edge_case_keys() -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = [
        "",
        "{",
        "}",
        "{}",
        "}{",
        "{{a}}",
        "{a}",
        "{{}}",
        "{}}",
        "{{}",
        "}{a}",
        "}}{{",
        "a{}b",
        "{}{a}",
        "{a}{b}",
        "a{b}{c}",
        "foo{}{bar}",
        "foo{{bar}}zap",
        "foo{bar}{zap}",
        "foo{bar}baz",
        "{user1000}.following",
        "{user1000}.followers",
        "{ }",
        "{\u{e9}}",
        "123456789",
        "{123456789}",
        "a",
        "{a",
        "a}",
        "a{",
        "}a",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    keys.extend([
        vec![0u8],
        vec![0u8, b'{', 0, b'}'],
        vec![0xff; 7],
        vec![b'{', 0xff, 0xfe, b'}', 0x80],
        vec![b'{', b'}', b'{', 0, b'}'],
        vec![b'x'; 1024],
        vec![b'{'; 300],
        vec![b'}'; 300],
        [b"{".as_slice(), &[b'k'; 5000], b"}tail"].concat(),
        (0..=255u8).collect(),
    ]);
    keys
}

/// Random keys with a seeded generator, so a failure reproduces: text, binary, and hash-tagged
/// keys where braces are frequent enough to land in every position.
fn random_keys(count: usize, seed: u64) -> Vec<Vec<u8>> {
    const TEXT: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789:_-.{}{}";
    let mut rng = Pcg64::seed_from_u64(seed);
    (0..count)
        .map(|i| {
            let len = match rng.gen_range(0..10) {
                0 => 0,
                1..=7 => rng.gen_range(1..24),
                _ => rng.gen_range(24..200),
            };
            match i % 4 {
                // Text with braces sprinkled in.
                0 => (0..len).map(|_| TEXT[rng.gen_range(0..TEXT.len())]).collect(),
                // Arbitrary bytes, braces and NULs over-represented.
                1 => (0..len)
                    .map(|_| match rng.gen_range(0..8) {
                        0 => b'{',
                        1 => b'}',
                        2 => 0,
                        _ => rng.gen(),
                    })
                    .collect(),
                // prefix{tag}suffix, the tag possibly empty.
                2 => {
                    let mut k: Vec<u8> = (0..rng.gen_range(0..8)).map(|_| TEXT[rng.gen_range(0..36)]).collect();
                    k.push(b'{');
                    k.extend((0..rng.gen_range(0..6)).map(|_| rng.gen::<u8>()));
                    k.push(b'}');
                    k.extend((0..len % 16).map(|_| TEXT[rng.gen_range(0..TEXT.len())]));
                    k
                }
                // Ordinary application-style keys.
                _ => format!("user:{}:session:{}", rng.gen::<u32>(), rng.gen::<u16>()).into_bytes(),
            }
        })
        .collect()
}

/// Asks the server for every key's slot, pipelined `PIPELINE` commands per round trip.
fn server_slots(server: &RedisServer, keys: &[Vec<u8>]) -> Vec<u16> {
    let client = redis::Client::open(server.url()).expect("client for a loopback url");
    let mut con =
        client.get_connection().unwrap_or_else(|e| panic!("connect {}: {e}{}", server.url(), server.log_tail(5)));
    let mut out = Vec::with_capacity(keys.len());
    for chunk in keys.chunks(PIPELINE) {
        let mut pipe = redis::pipe();
        for key in chunk {
            pipe.cmd("CLUSTER").arg("KEYSLOT").arg(key.as_slice());
        }
        let slots: Vec<u16> = pipe.query(&mut con).unwrap_or_else(|e| panic!("CLUSTER KEYSLOT: {e}"));
        out.extend(slots);
    }
    out
}

fn show(key: &[u8]) -> String {
    if key.len() > 64 {
        format!("{:?}… ({} bytes)", String::from_utf8_lossy(&key[..64]), key.len())
    } else {
        format!("{:?}", String::from_utf8_lossy(key))
    }
}

#[test]
fn cluster_keyslot_agrees_with_key_slot() {
    let Some(binary) = binary_or_skip() else { return };
    let server = RedisServer::start(&binary, true, &[]).unwrap_or_else(|e| panic!("{e}"));

    let mut keys = edge_case_keys();
    let edge = keys.len();
    keys.extend(random_keys(RANDOM_KEYS, 0x5EED_0001));
    let slots = server_slots(&server, &keys);
    assert_eq!(slots.len(), keys.len(), "one answer per key");
    assert_eq!(slots[keys.iter().position(|k| k == b"123456789").unwrap()], 12739, "the spec's check value");

    let mut crate_bad = Vec::new();
    let mut spec_bad = 0usize;
    for (key, &server_slot) in keys.iter().zip(&slots) {
        if crate_key_slot(key) != server_slot {
            crate_bad.push(format!("{} server={server_slot} crate={}", show(key), crate_key_slot(key)));
        }
        spec_bad += usize::from(spec_key_slot(key) != server_slot);
    }
    let distinct_slots = slots.iter().collect::<std::collections::HashSet<_>>().len();
    eprintln!(
        "redis_live: {} keys ({edge} edge cases) checked against {} on port {}: {} disagreements; {distinct_slots} distinct slots",
        keys.len(),
        binary.display(),
        server.port(),
        crate_bad.len()
    );
    assert_eq!(spec_bad, 0, "the test's own reference disagrees with the server: the harness mangles keys");
    assert!(
        crate_bad.is_empty(),
        "{} of {} keys disagree, e.g.:\n{}",
        crate_bad.len(),
        keys.len(),
        crate_bad[..crate_bad.len().min(10)].join("\n")
    );
    assert!(distinct_slots > 7_000, "random keys should cover most slots, got {distinct_slots}");
}

#[test]
fn guard_kills_server_and_removes_directory_on_panic() {
    let Some(binary) = binary_or_skip() else { return };
    let seen = std::sync::Mutex::new(None);
    let outcome = std::panic::catch_unwind(|| {
        let server = RedisServer::start(&binary, false, &[]).unwrap_or_else(|e| panic!("{e}"));
        *seen.lock().unwrap() = Some((server.addr(), server.dir().to_path_buf()));
        panic!("deliberate failure while the server runs");
    });
    assert!(outcome.is_err(), "the closure panics");
    let (addr, dir) = seen.into_inner().unwrap().expect("the server had started");
    assert!(!dir.exists(), "temporary directory {} left behind", dir.display());
    assert!(
        std::net::TcpStream::connect_timeout(&addr.into(), std::time::Duration::from_millis(300)).is_err(),
        "a server still listens on {addr} after the guard dropped"
    );
}

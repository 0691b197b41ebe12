//! Hash kernels and the routers that must reproduce a deployed system's hash, with the crates
//! they replace measured in the same run (permanent peer variants).
//!
//! Ids: `hash/<algorithm>-<impl>/<key length>` (1024 keys per iteration, so the report divides
//! by 1024 for ns per key), `route/<router>-<impl>/<nodes>` (4096 16-byte keys per iteration).
//! `<impl>` is `hashroute` (one key at a time), `hashroute-batch` (`KeyHasher::hash_batch`), or
//! the peer crate: `md5crate` (md-5 `Md5::digest`), `table1` (crc `Crc<u16>`, a byte per step),
//! `table16` (crc `Crc<u16, Table<16>>`), `crc16crate` (crc16 0.4), `crcfast` (crc-fast),
//! `crate` (murmur3 0.5 through `io::Read`); `md5-<isa>-batch` runs the multi-lane MD5 on one
//! instruction set (`portable`, `avx2`, `avx512`; a set the CPU lacks is skipped with a message);
//! `xxh3-hashroute` is the floor.
//! Lengths per mode: smoke, quick and plain `cargo bench` 16 (the length the performance
//! targets read), full 8, 16, 32, 64, 250. Outside the full suite the per-ISA MD5 rows,
//! `keyslot-hashroute-batch` and `route/slots-single` are left out (no target reads them; the
//! batch entry points above already run the widest MD5 path).

// criterion's macros generate undocumented functions.
#![allow(missing_docs)]

#[path = "common/mod.rs"]
mod common;
use common::{all_variants, mode};
use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use hashroute::internals::Isa;
use hashroute::{Ketama, KetamaVariant, KeyHasher, NodeId, RedisSlots, Router};
use md5::{Digest, Md5};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

const HASH_KEYS: usize = 1024;
const ROUTE_KEYS: usize = 4096;

const CRC_TABLE1: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_XMODEM);
const CRC_TABLE16: crc::Crc<u16, crc::Table<16>> = crc::Crc::<u16, crc::Table<16>>::new(&crc::CRC_16_XMODEM);

/// `n` printable keys of exactly `len` bytes (letters and digits: no Redis hash tag).
fn keys_of_len(n: usize, len: usize, seed: u64) -> Vec<Vec<u8>> {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789:";
    let mut rng = Pcg64::seed_from_u64(seed);
    (0..n).map(|_| (0..len).map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())]).collect()).collect()
}

fn lengths() -> &'static [usize] {
    mode().pick4(&[16], &[16], &[16], &[8, 16, 32, 64, 250])
}

/// One `hash/<name>/<len>` bench of a per-key function over `keys`.
fn per_key<T>(g: &mut BenchmarkGroup<'_, WallTime>, name: &str, keys: &[&[u8]], f: impl Fn(&[u8]) -> T) {
    g.bench_function(BenchmarkId::new(name, keys[0].len()), |b| {
        b.iter(|| {
            for k in keys {
                black_box(f(black_box(k)));
            }
        })
    });
}

fn murmur3_crate_128(k: &[u8]) -> u128 {
    murmur3::murmur3_x64_128(&mut &k[..], 0).expect("slice read")
}

fn murmur3_crate_32(k: &[u8]) -> u32 {
    murmur3::murmur3_32(&mut &k[..], 0).expect("slice read")
}

fn hash_group(c: &mut Criterion) {
    let mut g = c.benchmark_group("hash");
    g.throughput(Throughput::Elements(HASH_KEYS as u64));
    if mode() != common::Mode::Full {
        // Hash kernels are short and steady: half a second per bench keeps `cargo bench` in budget.
        g.warm_up_time(Duration::from_millis(200)).measurement_time(Duration::from_millis(500));
    }
    let mut out = vec![0u64; HASH_KEYS];
    for &len in lengths() {
        let owned = keys_of_len(HASH_KEYS, len, 11);
        let ks: Vec<&[u8]> = owned.iter().map(|k| &k[..]).collect();
        per_key(&mut g, "md5-hashroute", &ks, |k| KeyHasher::Md5.hash(k));
        per_key(&mut g, "md5-md5crate", &ks, |k| Md5::digest(k));
        g.bench_function(BenchmarkId::new("md5-hashroute-batch", len), |b| {
            b.iter(|| KeyHasher::Md5.hash_batch(&ks, black_box(&mut out)))
        });
        if all_variants() {
            md5_paths(&mut g, &ks);
        }
        per_key(&mut g, "crc16-hashroute", &ks, hashroute::internals::crc16_xmodem);
        per_key(&mut g, "crc16-table1", &ks, |k| CRC_TABLE1.checksum(k));
        per_key(&mut g, "crc16-table16", &ks, |k| CRC_TABLE16.checksum(k));
        per_key(&mut g, "crc16-crc16crate", &ks, crc16::State::<crc16::XMODEM>::calculate);
        per_key(&mut g, "crc16-crcfast", &ks, |k| crc_fast::checksum(crc_fast::CrcAlgorithm::Crc16Xmodem, k));
        per_key(&mut g, "murmur3-hashroute", &ks, |k| hashroute::internals::murmur3_x64_128(k, 0));
        per_key(&mut g, "murmur3-crate", &ks, murmur3_crate_128);
        per_key(&mut g, "murmur3_32-hashroute", &ks, |k| hashroute::internals::murmur3_x86_32(k, 0));
        per_key(&mut g, "murmur3_32-crate", &ks, murmur3_crate_32);
        per_key(&mut g, "xxh3-hashroute", &ks, xxhash_rust::xxh3::xxh3_64);
    }
    key_slot_benches(&mut g);
    g.finish();
}

/// `hash/md5-<isa>-batch/<len>`: the multi-lane MD5 on each instruction set the CPU has (the
/// batch entry point above takes the widest).
fn md5_paths(g: &mut BenchmarkGroup<'_, WallTime>, ks: &[&[u8]]) {
    let mut words = vec![[0u32; 4]; ks.len()];
    for isa in Isa::ALL {
        if !isa.is_supported() {
            eprintln!("SKIPPED: hash/md5-{}-batch: this CPU lacks it", isa.name());
            continue;
        }
        g.bench_function(BenchmarkId::new(format!("md5-{}-batch", isa.name()), ks[0].len()), |b| {
            b.iter(|| hashroute::internals::md5_batch_with(isa, ks, black_box(&mut words)))
        });
    }
}

/// `hash/keyslot-*/16`: the Redis key slot (tag scan + CRC16) of 16-byte keys without a tag.
fn key_slot_benches(g: &mut BenchmarkGroup<'_, WallTime>) {
    let owned = keys_of_len(HASH_KEYS, 16, 13);
    let ks: Vec<&[u8]> = owned.iter().map(|k| &k[..]).collect();
    per_key(g, "keyslot-hashroute", &ks, hashroute::slots::key_slot);
    per_key(g, "keyslot-table1", &ks, |k| CRC_TABLE1.checksum(hashroute::slots::hashed_part(k)) & 0x3FFF);
    if all_variants() {
        let mut slots = vec![0u16; HASH_KEYS];
        g.bench_function(BenchmarkId::new("keyslot-hashroute-batch", 16), |b| {
            b.iter(|| hashroute::slots::key_slot_batch(&ks, black_box(&mut slots)))
        });
    }
}

/// `route/ketama-*/1000` and `route/slots-*/3`: routing with the key hash included.
fn route_group(c: &mut Criterion) {
    let mut g = c.benchmark_group("route");
    g.throughput(Throughput::Elements(ROUTE_KEYS as u64));
    let owned = keys_of_len(ROUTE_KEYS, 16, 17);
    let ks: Vec<&[u8]> = owned.iter().map(|k| &k[..]).collect();
    let mut out = vec![NodeId::default(); ROUTE_KEYS];
    let servers = (0..1000).map(|i| format!("10.0.{}.{}:11211", i / 250, i % 250));
    let ketama = Ketama::builder().variant(KetamaVariant::Libketama).nodes(servers).build().expect("ketama");
    g.bench_function(BenchmarkId::new("ketama-batch", 1000), |b| {
        b.iter(|| ketama.route_batch(&ks, black_box(&mut out)))
    });
    g.bench_function(BenchmarkId::new("ketama-single", 1000), |b| {
        b.iter(|| {
            for (o, k) in out.iter_mut().zip(&ks) {
                *o = ketama.route(k);
            }
            black_box(&out);
        })
    });
    // The path before this crate had its own MD5: md-5's `Md5::digest` per key, then the search.
    g.bench_function(BenchmarkId::new("ketama-md5crate", 1000), |b| {
        b.iter(|| {
            for (o, k) in out.iter_mut().zip(&ks) {
                let d = Md5::digest(k);
                *o = ketama.route_hash32(u32::from_le_bytes([d[0], d[1], d[2], d[3]]));
            }
            black_box(&out);
        })
    });
    let slots = RedisSlots::from_names(["a", "b", "c"]).expect("slots");
    g.bench_function(BenchmarkId::new("slots-batch", 3), |b| b.iter(|| slots.route_batch(&ks, black_box(&mut out))));
    if all_variants() {
        g.bench_function(BenchmarkId::new("slots-single", 3), |b| {
            b.iter(|| {
                for (o, k) in out.iter_mut().zip(&ks) {
                    *o = slots.route(k);
                }
                black_box(&out);
            })
        });
    }
    // The path before: the tag scan, then crc's byte-at-a-time `Crc<u16>`.
    g.bench_function(BenchmarkId::new("slots-table1", 3), |b| {
        b.iter(|| {
            for (o, k) in out.iter_mut().zip(&ks) {
                let slot = CRC_TABLE1.checksum(hashroute::slots::hashed_part(k)) & 0x3FFF;
                *o = slots.slot_owner(slot);
            }
            black_box(&out);
        })
    });
    g.finish();
}

criterion_group! { name = benches; config = common::criterion(); targets = hash_group, route_group }
criterion_main!(benches);

//! Multi-probe balance measured with enough keys that sampling noise does not masquerade as
//! imbalance: 20 million key hashes over 100 and 1000 nodes (three random clusters each), 21
//! probes. Prints the busiest and idlest node against the mean, the std dev of node load and
//! the std dev that sampling alone would give.
//!
//! The sweep (`cargo bench --bench vnodes`) samples far fewer keys per node for the O(N) and
//! multi-probe routers, so its max/mean at 1000 nodes is mostly noise; this is the check.
//!
//! `cargo run --release --example multiprobe_balance [keys]` (about 40 s with the default 20M).

use hashroute::{KeyHasher, MultiProbe, NodeSet, Router};

fn main() -> hashroute::Result<()> {
    let keys: u64 = match std::env::args().nth(1) {
        Some(arg) => match arg.parse() {
            Ok(k) if k > 0 => k,
            _ => {
                eprintln!("multiprobe_balance: keys must be a positive integer, got {arg:?}");
                std::process::exit(2);
            }
        },
        None => 20_000_000,
    };
    println!("nodes cluster  max/mean  min/mean  std dev  (sampling alone)");
    for n in [100usize, 1000] {
        for cluster in 0..3u64 {
            let nodes = NodeSet::from_names((0..n).map(|i| format!("node-{cluster}-{i}")))?;
            let router = MultiProbe::builder().node_set(nodes).hasher(KeyHasher::default()).probes(21).build()?;
            let mut load = vec![0u64; n];
            // A 64-bit LCG with an output mix: uniform key hashes, reproducible.
            let mut x = 0x1234_5678u64 ^ cluster;
            for _ in 0..keys {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                load[router.route_hash(x ^ (x >> 31))?.index()] += 1;
            }
            let mean = keys as f64 / n as f64;
            let max = load.iter().copied().max().unwrap_or(0) as f64 / mean;
            let min = load.iter().copied().min().unwrap_or(0) as f64 / mean;
            let var = load.iter().map(|&l| (l as f64 / mean - 1.0).powi(2)).sum::<f64>() / n as f64;
            println!(
                "{n:5} {cluster:7}  {max:8.3}  {min:8.3}  {:6.1}%  ({:.1}%)",
                var.sqrt() * 100.0,
                100.0 / mean.sqrt()
            );
        }
    }
    Ok(())
}

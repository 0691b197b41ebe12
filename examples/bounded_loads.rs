//! Bounded loads in practice: 20 cache nodes, 100 000 keys with a skewed ring, and a hard cap of
//! (1 + ε) × the mean. Shows the loads with and without the bound, what a node joining moves,
//! and why a single hot key cannot be split by any hash.
//!
//! `cargo run --release --example bounded_loads`

use hashroute::{BoundedLoads, Node, NodeId, NodeSet, Ring, Router};

fn main() -> hashroute::Result<()> {
    let n = 20;
    let m = 100_000u32;
    let set = NodeSet::from_names((0..n).map(|i| format!("cache-{i:02}")))?;
    // Few vnodes: a deliberately unbalanced ring, which is what bounded loads fixes.
    let ring = Ring::builder().vnodes(8).node_set(set.clone()).build()?;

    let mut plain = vec![0u32; n];
    for k in 0..m {
        plain[ring.route(format!("key-{k}").as_bytes()).index()] += 1;
    }
    let mean = f64::from(m) / n as f64;
    let peak = |loads: &[u32]| f64::from(*loads.iter().max().unwrap()) / mean;
    println!("plain ring (8 vnodes): peak load {:.2}× the mean", peak(&plain));

    for eps in [0.05, 0.25, 1.0] {
        let mut bounded = BoundedLoads::new(ring.clone(), eps)?;
        for k in 0..m {
            bounded.assign(format!("key-{k}").as_bytes())?;
        }
        let loads: Vec<u32> = (0..n).map(|i| bounded.load(NodeId::from_index(i as u32)) as u32).collect();
        let joined = Ring::builder().vnodes(8).node_set(set.with_node(Node::new("cache-new"))?).build()?;
        let (_, moved) = bounded.rebuild(joined)?;
        println!(
            "eps = {eps:<4}: cap {} keys/node, peak {:.2}× the mean; a node joining moves {moved} keys ({:.1}% — \
             the ideal is {:.1}%)",
            bounded.capacity(),
            peak(&loads),
            100.0 * f64::from(moved as u32) / f64::from(m),
            100.0 / (n + 1) as f64
        );
    }

    // A hot key is one key: bounded loads counts keys, so its traffic stays on one node.
    let mut bounded = BoundedLoads::new(ring, 0.25)?;
    let hot = bounded.assign(b"trending:item")?;
    println!(
        "the hot key lives on {} alone; spread its reads over replicas instead: {:?}",
        bounded.router().node_name(hot),
        bounded
            .router()
            .replicas(b"trending:item", 3)?
            .iter()
            .map(|&id| bounded.router().node_name(id))
            .collect::<Vec<_>>()
    );
    Ok(())
}

//! Route keys with a ring, ask for replicas, survive a node failure, and grow the cluster.
//!
//! `cargo run --example quickstart`

use hashroute::{Failover, Node, NodeId, Ring, Router};

fn main() -> hashroute::Result<()> {
    let ring = Ring::builder().vnodes(160).nodes(["cache-a:11211", "cache-b:11211", "cache-c:11211"]).build()?;

    let id: NodeId = ring.route(b"user:42");
    println!("user:42 -> {}", ring.node_name(id));

    let replicas: Vec<&str> = ring.replicas(b"user:42", 2)?.into_iter().map(|id| ring.node_name(id)).collect();
    println!("user:42 replicas -> {replicas:?}");

    // A flapping node: mark it down instead of removing it. Only its keys move, and marking
    // it up restores the exact original mapping.
    let mut live = Failover::new(ring.clone())?;
    live.mark_down(ring.node_name(id))?;
    println!("user:42 while its node is down -> {}", live.node_name(live.route(b"user:42")));
    live.mark_up(ring.node_name(id))?;
    assert_eq!(live.route(b"user:42"), id);

    // Growing 3 -> 4 nodes moves about a quarter of the keys, all of them to the new node.
    let grown = ring.with_node(Node::new("cache-d:11211"))?;
    let keys: Vec<String> = (0..100_000).map(|i| format!("key-{i}")).collect();
    let moved = keys
        .iter()
        .filter(|k| ring.node_name(ring.route(k.as_bytes())) != grown.node_name(grown.route(k.as_bytes())))
        .count();
    println!("3 -> 4 nodes moved {:.1}% of 100k keys (ideal 25%)", 100.0 * moved as f64 / keys.len() as f64);

    // Bad input is an error, never a panic.
    match Ring::builder().vnodes(0).nodes(["a"]).build() {
        Err(e) => println!("vnodes(0): {e}"),
        Ok(_) => unreachable!("vnodes(0) is rejected"),
    }
    Ok(())
}

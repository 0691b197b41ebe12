//! Readers keep routing while the membership changes under them.
//!
//! `cargo run --example live_updates`

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use hashroute::{Node, Result, Ring, Router, SharedRouter};

fn main() -> Result<()> {
    let names: Vec<String> = (0..8).map(|i| format!("cache-{i}")).collect();
    let shared = SharedRouter::new(Ring::builder().vnodes(160).nodes(&names).build()?);
    let stop = AtomicBool::new(false);
    let routed = AtomicU64::new(0);

    std::thread::scope(|s| -> Result<()> {
        for t in 0..2 {
            let (shared, stop, routed) = (&shared, &stop, &routed);
            s.spawn(move || {
                let mut i = t;
                while !stop.load(Ordering::Relaxed) {
                    // One snapshot per unit of work: the id and the name come from the same router.
                    let ring = shared.load();
                    let key = format!("user:{i}");
                    let _owner: &str = ring.node_name(ring.route(key.as_bytes()));
                    routed.fetch_add(1, Ordering::Relaxed);
                    i += 2;
                }
            });
        }
        // The operator: scale out by two nodes, then drain one, while readers keep going.
        for name in ["cache-8", "cache-9"] {
            let generation = shared.update(|current| current.with_node(Node::new(name)))?;
            println!("generation {generation}: added {name}, {} nodes", shared.load().node_count());
        }
        let generation = shared.update(|current| current.without_node("cache-0"))?;
        println!("generation {generation}: removed cache-0, {} nodes", shared.load().node_count());
        // A failing change publishes nothing.
        let err = shared.update(|current| current.with_node(Node::new("cache-1"))).unwrap_err();
        println!("rejected: {err}; still generation {}", shared.generation());
        stop.store(true, Ordering::Relaxed);
        Ok(())
    })?;
    println!("readers routed {} keys without taking a lock", routed.load(Ordering::Relaxed));
    println!("user:42 -> {}", shared.route_name(b"user:42"));
    Ok(())
}

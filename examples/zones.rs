//! Three replicas per key, one per availability zone, racks spread inside zones.
//!
//! `cargo run --example zones`

use hashroute::placement::replicas_with_policy;
use hashroute::placement::PlacementPolicy;
use hashroute::placement::Spread;
use hashroute::placement::Topology;
use hashroute::{Error, Node, Result, Ring, Router};

fn main() -> Result<()> {
    let mut builder = Ring::builder().vnodes(100);
    for zone in ["eu-1a", "eu-1b", "eu-1c"] {
        for rack in 0..2 {
            for host in 0..2 {
                builder = builder.node(
                    Node::new(format!("{zone}-r{rack}-h{host}"))
                        .with_label("zone", zone)
                        .with_label("rack", format!("r{rack}"))
                        .with_label("host", format!("h{host}")),
                );
            }
        }
    }
    let ring = builder.build()?;

    // Never two replicas in one zone; racks spread when zones run out.
    let policy = PlacementPolicy::new().level("zone", Spread::Strict).level("rack", Spread::BestEffort);
    let topology = Topology::new(ring.nodes(), &policy)?; // resolve once, place many keys
    for key in ["user:1", "user:2", "order:77"] {
        let replicas = topology.replicas(&ring, key.as_bytes(), 3)?;
        let names: Vec<&str> = replicas.iter().map(|&id| ring.node_name(id)).collect();
        println!("{key:>9} -> {}", names.join(", "));
    }

    // Six replicas over three zones with best effort: two per zone, different racks.
    let wide = PlacementPolicy::best_effort(["zone", "rack", "host"]);
    let six = replicas_with_policy(&ring, b"user:1", 6, &wide)?;
    println!("six: {}", six.iter().map(|&id| ring.node_name(id)).collect::<Vec<_>>().join(", "));

    // Four replicas cannot go to three distinct zones: refused before any walking.
    match topology.replicas(&ring, b"user:1", 4) {
        Err(Error::Placement(why)) => println!("refused: {why}"),
        other => println!("unexpected: {other:?}"),
    }
    Ok(())
}

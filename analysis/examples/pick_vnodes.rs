//! How many virtual nodes does a ring of N nodes need? Asks the same code as `cargo bench` and
//! `hashroute recommend`, then shows the trade-off it found.
//!
//! `cargo run --release -p hashroute-analysis --example pick_vnodes -- 16 1.10` (node count, max/mean target)

use hashroute_analysis::{recommend, Request};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let nodes: usize = args.next().map_or(Ok(16), |a| a.parse())?;
    let max_load: f64 = args.next().map_or(Ok(1.10), |a| a.parse())?;
    // The recommendation says how sure it is: the clusters behind every figure.
    let advice = recommend(&Request::for_node_count(nodes).targets(&[max_load]))?;
    println!("{advice}");
    let ring = &advice.answers[0].ring;
    println!("=> a ring of {nodes} nodes needs {:?} vnodes per node ({})", ring.vnodes, ring.evidence);
    Ok(())
}

//! How many virtual nodes does a ring of N nodes need? Asks the same code as
//! `cargo bench --bench vnodes` and `hashroute recommend`, then shows the trade-off it found.
//!
//! `cargo run --release --example pick_vnodes -- 16 1.10` (node count, max/mean target)

use hashroute::analysis::recommend::{recommend, RecommendOptions, DEFAULT_MAX_LOAD};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let nodes: usize = args.next().map_or(Ok(16), |a| a.parse())?;
    let max_load: f64 = args.next().map_or(Ok(DEFAULT_MAX_LOAD), |a| a.parse())?;
    // The recommendation says how sure it is: the clusters and keys behind every figure.
    let advice = recommend(nodes, max_load, &RecommendOptions::default())?;
    println!("{advice}");
    match &advice.ring {
        Some(row) => {
            println!("=> a ring of {nodes} nodes needs {:?} vnodes per node for p99 max/mean <= {max_load}", row.vnodes)
        }
        None => println!("=> no vnode count up to {} meets p99 max/mean <= {max_load}", advice.searched_up_to),
    }
    Ok(())
}

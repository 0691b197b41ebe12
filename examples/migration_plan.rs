//! What moves when a node joins: exact hash ranges, per-node shares, and a sampled check.
//!
//! `cargo run --example migration_plan`

use hashroute::migration::{plan, sampled_fraction};
use hashroute::{Node, Result, Ring};

fn main() -> Result<()> {
    let names: Vec<String> = (0..4).map(|i| format!("10.0.0.{i}:6379")).collect();
    let before = Ring::builder().vnodes(8).nodes(&names).build()?;
    let after = before.with_node(Node::new("10.0.0.9:6379"))?;

    let exact = plan(&before, &after)?;
    // Display prints the summary, the per-node table and every moving range.
    print!("{exact}");

    // Every moving range goes to the new node, so those are the ranges to copy ahead of time.
    assert!(exact.moves().all(|m| m.to == "10.0.0.9:6379"));

    let keys: Vec<Vec<u8>> = (0..100_000).map(|i| format!("session:{i}").into_bytes()).collect();
    let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    println!(
        "exact {:.4}% vs sampled {:.4}% of keys move",
        100.0 * exact.moved_fraction(),
        100.0 * sampled_fraction(&before, &after, &refs)
    );

    // Draining a weighted node, summary only.
    let heavier = before.with_weight("10.0.0.1:6379", 2.0)?;
    print!("{}", plan(&before, &heavier)?.summary());
    Ok(())
}

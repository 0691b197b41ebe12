//! Do two processes route the same way? Compare route fingerprints.
//!
//! `cargo run --example fingerprint`

use hashroute::{fingerprint, KeyHasher, Result, Ring};

fn main() -> Result<()> {
    let client = Ring::builder().vnodes(160).nodes(["a:11211", "b:11211", "c:11211"]).build()?;
    // The proxy lists the same nodes in another order: rings do not care.
    let proxy = Ring::builder().vnodes(160).nodes(["c:11211", "a:11211", "b:11211"]).build()?;
    // A misconfigured canary uses another hash seed.
    let canary = Ring::builder()
        .vnodes(160)
        .hasher(KeyHasher::Xxh3 { seed: 1 })
        .nodes(["a:11211", "b:11211", "c:11211"])
        .build()?;

    let (c, p, k) = (fingerprint(&client), fingerprint(&proxy), fingerprint(&canary));
    println!("client {c}\nproxy  {p}\ncanary {k}");
    println!("client and proxy agree: {}", c == p);
    println!("client and canary agree: {}", c == k);
    Ok(())
}

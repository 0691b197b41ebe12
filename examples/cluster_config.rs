//! Save a cluster's routing configuration, load it elsewhere, and check both route the same.
//!
//! `cargo run --example cluster_config --features serde`

#[cfg(feature = "serde")]
fn main() -> hashroute::Result<()> {
    use hashroute::fingerprint;
    use hashroute::{Algorithm, RouterSpec};
    use hashroute::{ClusterConfig, NodeConfig};

    let config = ClusterConfig::new(
        RouterSpec::new(Algorithm::Ring).with_vnodes(160),
        vec![
            NodeConfig::new("10.0.0.1:6379").with_label("zone", "eu-1a"),
            NodeConfig::new("10.0.0.2:6379").with_label("zone", "eu-1b"),
            NodeConfig::new("10.0.0.3:6379").with_label("zone", "eu-1c").with_weight(2.0),
        ],
    );
    let toml = config.to_toml()?;
    println!("{toml}");
    let loaded = ClusterConfig::from_toml(&toml)?;
    let (here, there) = (config.build()?, loaded.build()?);
    println!("fingerprint here  {}", fingerprint(&*here));
    println!("fingerprint there {}", fingerprint(&*there));
    println!("same routes: {}", fingerprint(&*here) == fingerprint(&*there));
    match ClusterConfig::from_json(r#"{"spec": {"algorithm": "ring"}, "nodes": [{"name": "a", "wieght": 2}]}"#) {
        Err(e) => println!("rejected: {e}"),
        Ok(_) => println!("unexpected: accepted a typo"),
    }
    Ok(())
}

#[cfg(not(feature = "serde"))]
fn main() {
    eprintln!("this example needs the `serde` feature: cargo run --example cluster_config --features serde");
}

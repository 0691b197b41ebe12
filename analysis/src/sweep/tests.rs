use super::*;

#[test]
fn names_are_unique_and_prefix_stable() {
    let a = cluster_names(9, 50);
    let b = cluster_names(9, 60);
    assert_eq!(&b[..50], &a[..]);
    let set: std::collections::HashSet<_> = b.iter().collect();
    assert_eq!(set.len(), 60);
}

#[test]
fn candidate_names_are_unique() {
    let names = candidate_names();
    let set: std::collections::HashSet<_> = names.iter().collect();
    assert_eq!(set.len(), names.len());
    assert!(candidate("ring-v160").is_ok());
    assert!(matches!(candidate("nope"), Err(Error::InvalidParameter { .. })));
}

#[test]
fn modulo_three_to_four_moves_exactly_three_quarters() {
    // Over one period lcm(3, 4) = 12 of hash values x, a key stays only where x % 3 == x % 4,
    // i.e. x in {0, 1, 2}: 3 of 12 stay, so exactly 9/12 = 3/4 move.
    let names = cluster_names(1, 4);
    let a = NodeSet::from_names(&names[..3]).unwrap();
    let b = NodeSet::from_names(&names[..4]).unwrap();
    let m = modulo_movement(&a, &b);
    assert_eq!(m.moved, 0.75);
    assert_eq!(m.ideal, 0.25);
    assert_eq!(m.ratio(), 3.0);
}

#[test]
fn jump_growth_moves_keys_only_to_the_new_bucket() {
    use hashroute::{Jump, KeyHasher};
    let names = cluster_names(2, 11);
    let a = Jump::builder()
        .node_set(NodeSet::from_names(&names[..10]).unwrap())
        .hasher(KeyHasher::default())
        .build()
        .unwrap();
    let b = Jump::builder()
        .node_set(NodeSet::from_names(&names[..11]).unwrap())
        .hasher(KeyHasher::default())
        .build()
        .unwrap();
    let mut rng = SplitMix64::new(5);
    let mut moved = 0;
    for _ in 0..50_000 {
        let k = rng.next_u64().to_le_bytes();
        let (x, y) = (a.route(&k), b.route(&k));
        if x != y {
            assert_eq!(y.index(), 10, "a moved key must go to the new bucket");
            moved += 1;
        }
    }
    // 1/11 of 50k = 4545; binomial sd ≈ 64.
    assert!((moved as f64 - 50_000.0 / 11.0).abs() < 400.0, "moved {moved}");
}

#[test]
fn quick_cells_are_sane() {
    let cfg = SweepConfig { clusters: 20, movement_clusters: 3, sample_keys: 20_000, ..SweepConfig::quick() };
    let mp = balance_cell(&candidate("multiprobe").unwrap(), 8, &cfg).unwrap();
    assert_eq!(mp.keys, cfg.sample_keys / 4, "multiprobe samples a quarter of the keys");
    let ring = balance_cell(&candidate("ring-v160").unwrap(), 8, &cfg).unwrap();
    assert!(ring.exact && ring.clusters == 20);
    assert!(ring.max_over_mean > 1.0 && ring.max_over_mean < 1.3, "{ring:?}");
    assert!(ring.std_dev_pct > 1.0 && ring.std_dev_pct < 15.0, "{ring:?}");
    let modulo = balance_cell(&candidate("modulo").unwrap(), 8, &cfg).unwrap();
    assert_eq!(modulo.max_over_mean, 1.0);
    let r = Resize { label: "8->12".into(), from: 8, to: 12 };
    let mv = movement_cell(&candidate("ring-v160").unwrap(), &r, &cfg).unwrap();
    assert!((mv.ideal - 1.0 / 3.0).abs() < 1e-12);
    assert!(mv.moved > 0.25 && mv.moved < 0.42, "{mv:?}");
    let shrink = Resize { label: "-1".into(), from: 8, to: 7 };
    let naive = movement_cell(&candidate("ring-v1").unwrap(), &shrink, &cfg).unwrap();
    assert_eq!(naive.failure_spread, Some(1.0), "a naive ring hands a dead node's arc to one neighbour");
}

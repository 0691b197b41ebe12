//! Key movement on a resize: exact for modulo and for routers with an exact structure, sampled
//! for the rest, one [`MovementCell`](super::MovementCell) per candidate and resize.

use super::*;

/// A membership change: `from` nodes become `to` nodes (growth appends new names, shrinking
/// drops the last names, so jump's append/remove-at-end rule holds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resize {
    /// Report label (`+1`, `-1`, `x2`, `10->11`).
    pub label: String,
    /// Node count before.
    pub from: usize,
    /// Node count after.
    pub to: usize,
}

/// The resizes the sweep measures: `+1`, `-1` and `x2` at every node count, and the fixed
/// ones the claims quote (3->4, 4->8, 8->12, 8->16, 10->11).
pub fn resizes(node_counts: &[usize]) -> Vec<Resize> {
    let mut out = Vec::new();
    for &n in node_counts {
        out.push(Resize { label: "+1".into(), from: n, to: n + 1 });
        if n >= 2 {
            out.push(Resize { label: "-1".into(), from: n, to: n - 1 });
        }
        out.push(Resize { label: "x2".into(), from: n, to: 2 * n });
    }
    for (a, b) in [(3, 4), (4, 8), (8, 12), (8, 16), (10, 11)] {
        out.push(Resize { label: format!("{a}->{b}"), from: a, to: b });
    }
    out
}

/// Key movement of one candidate for one resize, over random clusters.
#[derive(Clone, Debug)]
pub struct MovementCell {
    /// Candidate name.
    pub candidate: String,
    /// The resize.
    pub resize: Resize,
    /// Clusters measured.
    pub clusters: usize,
    /// Sampled keys per cluster (0 when exact).
    pub keys: usize,
    /// Median fraction of keys moved.
    pub moved: f64,
    /// The minimum fraction any router must move.
    pub ideal: f64,
    /// Median over clusters of the largest share of a removed node's keys one survivor took.
    pub failure_spread: Option<f64>,
}

/// Exact movement for `hash % N` -> `hash % M` over one period `lcm(N, M)`, nodes matched by name.
pub fn modulo_movement(a: &NodeSet, b: &NodeSet) -> Movement {
    let (n, m) = (a.len() as u64, b.len() as u64);
    let l = n / gcd(n, m) * m;
    let to_a: Vec<Option<u32>> = b.iter().map(|(_, x)| a.id_of(x.name()).map(|id| id.as_u32())).collect();
    let gone: Vec<bool> = a.iter().map(|(_, x)| b.id_of(x.name()).is_none()).collect();
    let (mut moved, mut lost) = (0u64, 0u64);
    let mut lost_to = vec![0u64; b.len()];
    for x in 0..l {
        let (oa, ob) = ((x % n) as u32, (x % m) as usize);
        if to_a[ob] != Some(oa) {
            moved += 1;
        }
        if gone[oa as usize] {
            lost += 1;
            lost_to[ob] += 1;
        }
    }
    Movement {
        moved: moved as f64 / l as f64,
        ideal: ideal_movement(&shares_by_name(a), &shares_by_name(b)),
        failure_spread: (lost > 0).then(|| *lost_to.iter().max().unwrap_or(&0) as f64 / lost as f64),
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Movement measured by routing `keys` sampled keys through both routers.
///
/// # Errors
/// The builders' errors.
pub fn sampled_movement(ra: &dyn Router, rb: &dyn Router, keys: usize, seed: u64) -> Movement {
    let (a, b) = (ra.nodes(), rb.nodes());
    let gone: Vec<bool> = a.iter().map(|(_, x)| b.id_of(x.name()).is_none()).collect();
    let mut lost = 0u64;
    let mut lost_to = vec![0u64; b.len()];
    let mut rng = SplitMix64::new(seed ^ 0x6D6F_7665);
    let sample = (0..keys).map(|_| rng.next_u64().to_le_bytes());
    let moved = sampled_moves(ra, rb, sample, |oa, ob| {
        if gone[oa.index()] {
            lost += 1;
            lost_to[ob.index()] += 1;
        }
    });
    Movement {
        moved: moved as f64 / keys.max(1) as f64,
        ideal: ideal_movement(&shares_by_name(a), &shares_by_name(b)),
        failure_spread: (lost > 0).then(|| *lost_to.iter().max().unwrap_or(&0) as f64 / lost as f64),
    }
}

/// The movement of `cand` between two node sets, exact when its model allows.
///
/// # Errors
/// The candidate's build errors.
pub fn movement_between(cand: &Candidate, a: &NodeSet, b: &NodeSet, keys: usize, seed: u64) -> Result<Movement> {
    match &cand.model {
        LoadModel::Partition(f) => Ok(f(a)?.movement(&f(b)?)),
        LoadModel::Table(f) => match f(a)?.movement(&f(b)?) {
            Some(m) => Ok(m),
            None => Ok(sampled_movement(&(cand.build)(a)?, &(cand.build)(b)?, keys.max(100_000), seed)),
        },
        LoadModel::Modulo => Ok(modulo_movement(a, b)),
        LoadModel::Sampled { .. } => Ok(sampled_movement(&(cand.build)(a)?, &(cand.build)(b)?, keys, seed)),
    }
}

/// Measures one movement cell.
///
/// # Errors
/// The candidate's build errors.
pub fn movement_cell(cand: &Candidate, resize: &Resize, cfg: &SweepConfig) -> Result<MovementCell> {
    use rayon::prelude::*;
    let big = resize.from.max(resize.to);
    let (clusters, keys) = match cand.model {
        LoadModel::Partition(_) => {
            let pts = points_per_cluster(cand, resize.from) + points_per_cluster(cand, resize.to);
            let cap = (cfg.movement_point_budget / pts.max(1)) as usize;
            (cfg.movement_clusters.min(cap).max(2), 0)
        }
        LoadModel::Table(_) => {
            let cap = (cfg.movement_point_budget / (2 * Maglev::DEFAULT_TABLE_SIZE)) as usize;
            (cfg.movement_clusters.min(cap).max(2), 0)
        }
        LoadModel::Modulo => (1, 0),
        LoadModel::Sampled { names_matter } => {
            // Movement medians vary little between clusters, and a moved fraction p is known to
            // ±sqrt(p(1−p)/K): a quarter of the balance keys and a few clusters suffice.
            let (c, k) = cell_plan(cand, big, cfg);
            (if names_matter { c.min((cfg.sampled_clusters / 4).max(2)) } else { 1 }, (k / 4).max(1000))
        }
    };
    let ms: Vec<Movement> = (0..clusters)
        .into_par_iter()
        .map(|c| {
            let seed = cfg.cluster_seed(big, c) ^ 0xA5;
            let names = cluster_names(seed, big);
            let a = NodeSet::from_names(&names[..resize.from])?;
            let b = NodeSet::from_names(&names[..resize.to])?;
            movement_between(cand, &a, &b, keys, seed)
        })
        .collect::<Result<_>>()?;
    let spreads: Vec<f64> = ms.iter().filter_map(|m| m.failure_spread).collect();
    Ok(MovementCell {
        candidate: cand.name.clone(),
        resize: resize.clone(),
        clusters,
        keys,
        moved: median(&ms.iter().map(|m| m.moved).collect::<Vec<_>>()),
        ideal: ms[0].ideal,
        failure_spread: (!spreads.is_empty()).then(|| median(&spreads)),
    })
}

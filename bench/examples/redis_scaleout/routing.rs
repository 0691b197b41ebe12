//! The routers compared by the scale-out experiment, built for every cluster size of a growth
//! schedule (4, 5, …, 8 nodes), so that a key's move between two sizes is exactly what a client
//! library would do after the membership change.

use hashroute::slots::SLOTS;
use hashroute::{Jump, KeyHasher, Modulo, NodeSet, RedisSlots, Rendezvous, Ring, Router};

/// Algorithms the experiment knows, in report order: (CLI name, description).
pub(crate) const ALGORITHMS: &[(&str, &str)] = &[
    ("modulo", "hash % N"),
    ("ring1", "naive ring, 1 point per node"),
    ("ring160", "ring, 160 points per node"),
    ("jump", "jump consistent hash"),
    ("rendezvous", "rendezvous (highest random weight)"),
    ("slots", "Redis Cluster slots, rebalanced by moving slots to the new node"),
];

/// One router per cluster size: `names[..initial]`, `names[..initial + 1]`, … `names[..]`.
///
/// # Errors
/// An unknown algorithm name, or a node set the crate rejects (duplicate or empty names).
pub(crate) fn routers_for_growth(algo: &str, names: &[String], initial: usize) -> Result<Vec<Box<dyn Router>>, String> {
    let sizes = initial..=names.len();
    let sets: Vec<NodeSet> =
        sizes.map(|n| NodeSet::from_names(&names[..n]).map_err(|e| e.to_string())).collect::<Result<_, _>>()?;
    let hasher = KeyHasher::default();
    match algo {
        "modulo" => Ok(sets
            .into_iter()
            .map(|s| Box::new(Modulo::builder().node_set(s).hasher(hasher).build().unwrap()) as Box<dyn Router>)
            .collect()),
        "ring1" | "ring160" => {
            let v = if algo == "ring1" { 1 } else { 160 };
            sets.into_iter()
                .map(|s| {
                    Ring::builder().vnodes(v).hasher(hasher).node_set(s).build().map(|r| Box::new(r) as Box<dyn Router>)
                })
                .collect::<Result<_, _>>()
                .map_err(|e| e.to_string())
        }
        "jump" => sets
            .into_iter()
            .map(|s| Jump::builder().node_set(s).hasher(hasher).build().map(|r| Box::new(r) as Box<dyn Router>))
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string()),
        "rendezvous" => sets
            .into_iter()
            .map(|s| Rendezvous::builder().node_set(s).hasher(hasher).build().map(|r| Box::new(r) as Box<dyn Router>))
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string()),
        "slots" => Ok(slots_growth(&sets)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|r| Box::new(r) as Box<dyn Router>)
            .collect()),
        other => Err(format!(
            "unknown algorithm {other:?}; expected one of {}",
            ALGORITHMS.iter().map(|a| a.0).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Routers for a growing Redis Cluster: the first node set gets the layout `redis-cli --cluster
/// create` makes ([`RedisSlots::new`]); each added node joins empty (`add-node`) and then takes
/// `16384 / N` slots from the currently largest owners, one slot at a time from the donor's
/// highest-numbered slot (what `redis-cli --cluster rebalance` converges to), applied as
/// [`RedisSlots::move_slots`] on contiguous runs. Only the moved slots' keys change node.
fn slots_growth(sets: &[NodeSet]) -> hashroute::Result<Vec<RedisSlots>> {
    let mut out = vec![RedisSlots::builder().node_set(sets[0].clone()).build()?];
    for set in &sets[1..] {
        let prev = out.last().expect("the initial layout is there");
        let (new_id, new_node) = set.iter().last().expect("a node set is non-empty");
        let new = new_id.index();
        let mut next = prev.with_node(new_node.clone())?;
        let mut owner: Vec<usize> = (0..SLOTS).map(|s| prev.slot_owner(s).index()).collect();
        let mut count = vec![0usize; set.len()];
        owner.iter().for_each(|&o| count[o] += 1);
        let mut moved = vec![false; usize::from(SLOTS)];
        for _ in 0..usize::from(SLOTS) / set.len() {
            // Largest donor, lowest index on ties: deterministic.
            let donor = (0..new).max_by_key(|&i| (count[i], std::cmp::Reverse(i))).unwrap_or(0);
            let slot = owner.iter().rposition(|&o| o == donor).unwrap_or(0);
            owner[slot] = new;
            moved[slot] = true;
            count[donor] -= 1;
            count[new] += 1;
        }
        let mut s = 0usize;
        while s < moved.len() {
            if !moved[s] {
                s += 1;
                continue;
            }
            let start = s;
            while s < moved.len() && moved[s] {
                s += 1;
            }
            next = next.move_slots(start as u16..=(s - 1) as u16, new_node.name())?;
        }
        out.push(next);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("node-{i}")).collect()
    }

    #[test]
    fn slots_growth_moves_only_to_the_new_node_and_balances() {
        let sets: Vec<NodeSet> = (4..=8).map(|n| NodeSet::from_names(&names(n)[..n]).unwrap()).collect();
        let layouts = slots_growth(&sets).unwrap();
        for (step, pair) in layouts.windows(2).enumerate() {
            let new = pair[1].nodes().len() - 1;
            let mut moved = 0;
            for s in 0..SLOTS {
                let (a, b) = (pair[0].slot_owner(s).index(), pair[1].slot_owner(s).index());
                if a != b {
                    assert_eq!(b, new, "step {step}: slot {s} moved to an old node");
                    moved += 1;
                }
            }
            assert_eq!(moved, usize::from(SLOTS) / pair[1].nodes().len(), "step {step}");
        }
        let counts = layouts.last().unwrap().slot_counts();
        assert!(counts.iter().all(|&c| (2040..=2056).contains(&c)), "unbalanced: {counts:?}");
    }

    #[test]
    fn every_algorithm_builds_one_router_per_size() {
        for (algo, _) in ALGORITHMS {
            let routers = routers_for_growth(algo, &names(8), 4).unwrap();
            assert_eq!(routers.iter().map(|r| r.node_count()).collect::<Vec<_>>(), vec![4, 5, 6, 7, 8], "{algo}");
        }
        assert!(routers_for_growth("nope", &names(8), 4).is_err());
    }
}

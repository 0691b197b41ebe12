//! Topology-aware replica placement: spread a key's replicas across zones, racks and hosts.
//!
//! Nodes carry labels ([`Node::with_label`](crate::Node::with_label)`("zone", "a")`). A
//! [`PlacementPolicy`] is a hierarchy of label keys, outermost first (`zone`, then `rack`, then
//! `host`), each either [`Spread::Strict`] (the replicas must all differ at that level) or
//! [`Spread::BestEffort`] (differ as much as the topology allows).
//!
//! Placement walks the router's own preference list ([`Router::preference`]), so it works with
//! every router that has one and keeps that router's movement properties: a replica only moves
//! when the preference list or the topology changes.
//!
//! ## The rule (deterministic)
//!
//! Label values are *path-qualified*: rack `r1` in zone `a` and rack `r1` in zone `b` are
//! different racks. For each replica in turn, among the preference-list candidates not yet
//! chosen, drop those that would repeat a value at a strict level, and take the **earliest in
//! preference order** whose tuple of "replicas already chosen that share my value", one count
//! per level outermost first, is lexicographically smallest. So a new zone beats a new rack in
//! a used zone, which beats a new host in a used rack, and ties go to the router's preference.
//! The first replica is therefore always `route(key)` (nothing is chosen yet, every tuple is
//! zero).
//!
//! Feasibility is checked up front, before any walking: distinct values at the outermost strict
//! level (which implies distinct values at every deeper level) must be at least `n`.

use std::collections::HashMap;
use std::fmt;
use std::ops::ControlFlow;

use crate::error::{Error, Result};
use crate::node::{NodeId, NodeSet};
use crate::router::Router;

/// How hard a level of a [`PlacementPolicy`] spreads replicas.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Spread {
    /// Every replica must have a different value at this level; placement fails with
    /// [`Error::Placement`] when the topology has too few values.
    Strict,
    /// Prefer different values, but repeat one when the topology runs out.
    BestEffort,
}

/// A hierarchy of label keys, outermost first, each with a [`Spread`].
///
/// An empty policy places replicas exactly as [`Router::replicas`] does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlacementPolicy {
    levels: Vec<(String, Spread)>,
}

impl PlacementPolicy {
    /// An empty policy (no topology constraint).
    pub fn new() -> PlacementPolicy {
        PlacementPolicy::default()
    }

    /// Every level of `keys` strict, outermost first. Since values are path-qualified, this
    /// requires as many distinct values of the first key as replicas.
    pub fn strict<I, S>(keys: I) -> PlacementPolicy
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        PlacementPolicy { levels: keys.into_iter().map(|k| (k.into(), Spread::Strict)).collect() }
    }

    /// Every level of `keys` best-effort, outermost first: spread across zones first, then
    /// racks, then hosts, never failing for lack of topology.
    pub fn best_effort<I, S>(keys: I) -> PlacementPolicy
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        PlacementPolicy { levels: keys.into_iter().map(|k| (k.into(), Spread::BestEffort)).collect() }
    }

    /// Appends an inner level (e.g. `.level("zone", Spread::BestEffort).level("host",
    /// Spread::Strict)`: never two replicas on one host, zones spread when possible).
    #[must_use]
    pub fn level(mut self, key: impl Into<String>, spread: Spread) -> PlacementPolicy {
        self.levels.push((key.into(), spread));
        self
    }

    /// The levels, outermost first.
    pub fn levels(&self) -> &[(String, Spread)] {
        &self.levels
    }
}

impl fmt::Display for PlacementPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.levels.is_empty() {
            return f.write_str("(no topology)");
        }
        for (i, (key, spread)) in self.levels.iter().enumerate() {
            if i > 0 {
                f.write_str(" > ")?;
            }
            let s = match spread {
                Spread::Strict => "strict",
                Spread::BestEffort => "best-effort",
            };
            write!(f, "{key} ({s})")?;
        }
        Ok(())
    }
}

/// A policy resolved against one node set: every node's path-qualified value per level, interned
/// to small integers, and the feasibility facts. Build it once per router and reuse it for every
/// key; [`replicas_with_policy`] builds one per call.
///
/// Cost: building is O(N · L) hash-map work for N nodes and L levels; memory is 4 bytes per node
/// per level plus the interning maps (dropped after building).
#[derive(Clone, Debug)]
pub struct Topology {
    policy: PlacementPolicy,
    /// `values[node * levels + level]`: the interned path-qualified value.
    values: Vec<u32>,
    /// Distinct values per level.
    distinct: Vec<usize>,
    node_count: usize,
}

impl Topology {
    /// Resolves `policy` against `nodes`.
    ///
    /// # Errors
    /// [`Error::Placement`] when a node lacks a label the policy names, or when a level key is
    /// named twice.
    pub fn new(nodes: &NodeSet, policy: &PlacementPolicy) -> Result<Topology> {
        let levels = policy.levels.len();
        for (i, (key, _)) in policy.levels.iter().enumerate() {
            if policy.levels[..i].iter().any(|(k, _)| k == key) {
                return Err(Error::Placement(format!("label key {key:?} appears twice in the policy")));
            }
        }
        let mut values = vec![0u32; nodes.len() * levels];
        let mut distinct = Vec::with_capacity(levels);
        // Intern (parent value id, label value) so that values are path-qualified.
        let mut parents = vec![u32::MAX; nodes.len()];
        for (level, (key, _)) in policy.levels.iter().enumerate() {
            let mut interned: HashMap<(u32, &str), u32> = HashMap::new();
            for (id, node) in nodes.iter() {
                let Some(value) = node.label(key) else {
                    return Err(Error::Placement(format!("node {:?} has no label {key:?}", node.name())));
                };
                let next = interned.len() as u32;
                let v = *interned.entry((parents[id.index()], value)).or_insert(next);
                values[id.index() * levels + level] = v;
                parents[id.index()] = v;
            }
            distinct.push(interned.len());
        }
        Ok(Topology { policy: policy.clone(), values, distinct, node_count: nodes.len() })
    }

    /// The policy this topology resolves.
    pub fn policy(&self) -> &PlacementPolicy {
        &self.policy
    }

    /// Distinct (path-qualified) values at each level, outermost first.
    pub fn distinct_values(&self) -> &[usize] {
        &self.distinct
    }

    /// Checks, without walking anything, that `n` replicas can satisfy every strict level.
    ///
    /// # Errors
    /// [`Error::TooManyReplicas`] when `n` exceeds the node count, [`Error::Placement`] naming
    /// the level that cannot be met.
    pub fn check_feasible(&self, n: usize) -> Result<()> {
        if n > self.node_count {
            return Err(Error::TooManyReplicas { requested: n, available: self.node_count });
        }
        for (level, (key, spread)) in self.policy.levels.iter().enumerate() {
            if *spread == Spread::Strict && self.distinct[level] < n {
                return Err(Error::Placement(format!(
                    "strict spread over {key:?} needs {n} distinct values but the nodes have only {}",
                    self.distinct[level]
                )));
            }
        }
        Ok(())
    }

    /// `n` distinct nodes for `key` following the policy (see the module docs for the rule);
    /// the first is `router.route(key)`.
    ///
    /// Cost: the preference walk stops as soon as `n` candidates fresh at every level were
    /// found; otherwise it visits every node once, and the remaining picks scan the skipped
    /// candidates: O(N · n · L) worst case, one allocation of up to N ids.
    ///
    /// # Errors
    /// As [`Topology::check_feasible`]; [`Error::Unsupported`] when the router has no
    /// preference list.
    ///
    /// # Panics
    /// If `router`'s node set is not the one this topology was built from (a node id out of
    /// range).
    pub fn replicas(&self, router: &(impl Router + ?Sized), key: &[u8], n: usize) -> Result<Vec<NodeId>> {
        self.check_feasible(n)?;
        let mut chosen = Vec::with_capacity(n);
        if n == 0 {
            return Ok(chosen);
        }
        let mut state = Counts::new(self);
        let mut skipped: Vec<NodeId> = Vec::new();
        router.preference(key, &mut |id| {
            if state.all_fresh(self, id) {
                state.take(self, id);
                chosen.push(id);
                if chosen.len() == n {
                    return ControlFlow::Break(());
                }
            } else {
                skipped.push(id);
            }
            ControlFlow::Continue(())
        })?;
        // Candidates skipped for sharing a value stay non-fresh (counts only grow), so the
        // earliest minimum is found among them alone.
        while chosen.len() < n {
            let best = state.best(self, &skipped).ok_or_else(|| {
                Error::Placement(format!("the preference list ran out after {} of {n} replicas", chosen.len()))
            })?;
            let id = skipped.remove(best);
            state.take(self, id);
            chosen.push(id);
        }
        Ok(chosen)
    }

    #[inline]
    fn value(&self, id: NodeId, level: usize) -> usize {
        self.values[id.index() * self.policy.levels.len() + level] as usize
    }
}

/// Replicas chosen so far, counted per level and value.
struct Counts {
    per_level: Vec<Vec<u32>>,
}

impl Counts {
    fn new(topo: &Topology) -> Counts {
        Counts { per_level: topo.distinct.iter().map(|&d| vec![0; d]).collect() }
    }

    fn all_fresh(&self, topo: &Topology, id: NodeId) -> bool {
        (0..self.per_level.len()).all(|l| self.per_level[l][topo.value(id, l)] == 0)
    }

    fn take(&mut self, topo: &Topology, id: NodeId) {
        for l in 0..self.per_level.len() {
            self.per_level[l][topo.value(id, l)] += 1;
        }
    }

    /// Index in `candidates` of the earliest lexicographically smallest count tuple among the
    /// candidates allowed by the strict levels.
    fn best(&self, topo: &Topology, candidates: &[NodeId]) -> Option<usize> {
        let mut best: Option<(usize, Vec<u32>)> = None;
        for (i, &id) in candidates.iter().enumerate() {
            let tuple: Vec<u32> = (0..self.per_level.len()).map(|l| self.per_level[l][topo.value(id, l)]).collect();
            let violates =
                topo.policy.levels.iter().zip(&tuple).any(|((_, spread), &c)| *spread == Spread::Strict && c > 0);
            if violates {
                continue;
            }
            if best.as_ref().is_none_or(|(_, b)| tuple < *b) {
                best = Some((i, tuple));
            }
        }
        best.map(|(i, _)| i)
    }
}

/// `n` distinct nodes for `key`, spread across the topology as `policy` asks, walking the
/// router's preference list. Resolves the policy on every call (O(N · L)); build a [`Topology`]
/// once to place many keys.
///
/// # Errors
/// [`Error::Placement`] when a node lacks a policy label or a strict level cannot be met
/// (checked before walking), [`Error::TooManyReplicas`] when `n` exceeds the node count,
/// [`Error::Unsupported`] when the router has no preference list.
pub fn replicas_with_policy(
    router: &dyn Router,
    key: &[u8],
    n: usize,
    policy: &PlacementPolicy,
) -> Result<Vec<NodeId>> {
    Topology::new(router.nodes(), policy)?.replicas(router, key, n)
}

/// The plain twin of [`Topology::replicas`]: collect the whole preference list, then pick each
/// replica by a full scan. Kept for the property test that the early-stopping walk agrees.
#[cfg(test)]
pub(crate) fn replicas_naive(topo: &Topology, router: &dyn Router, key: &[u8], n: usize) -> Result<Vec<NodeId>> {
    topo.check_feasible(n)?;
    let mut all = Vec::new();
    router.preference(key, &mut |id| {
        all.push(id);
        ControlFlow::Continue(())
    })?;
    let mut state = Counts::new(topo);
    let mut chosen = Vec::new();
    while chosen.len() < n {
        let i = state.best(topo, &all).ok_or_else(|| Error::Placement("ran out".into()))?;
        let id = all.remove(i);
        state.take(topo, id);
        chosen.push(id);
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Node, Ring};
    use proptest::prelude::*;

    /// 3 zones × 2 racks × 2 hosts × 2 nodes = 24 nodes.
    fn cluster(zones: usize) -> Ring {
        let mut b = Ring::builder().vnodes(40);
        for z in 0..zones {
            for r in 0..2 {
                for h in 0..2 {
                    for i in 0..2 {
                        b = b.node(
                            Node::new(format!("z{z}-r{r}-h{h}-n{i}"))
                                .with_label("zone", format!("z{z}"))
                                .with_label("rack", format!("r{r}"))
                                .with_label("host", format!("h{h}")),
                        );
                    }
                }
            }
        }
        b.build().unwrap()
    }

    fn label<'a>(r: &'a Ring, id: NodeId, key: &str) -> &'a str {
        r.nodes().get(id).label(key).unwrap()
    }

    #[test]
    fn spreads_zones_then_racks_then_hosts() {
        let ring = cluster(3);
        let policy = PlacementPolicy::best_effort(["zone", "rack", "host"]);
        for k in 0..500u32 {
            let key = k.to_le_bytes();
            let reps = replicas_with_policy(&ring, &key, 6, &policy).unwrap();
            assert_eq!(reps[0], ring.route(&key));
            let mut zones: Vec<&str> = reps[..3].iter().map(|&id| label(&ring, id, "zone")).collect();
            zones.sort();
            assert_eq!(zones, ["z0", "z1", "z2"], "first three replicas in three zones");
            // Six replicas over three zones × two racks: every (zone, rack) pair exactly once.
            let mut racks: Vec<(&str, &str)> =
                reps.iter().map(|&id| (label(&ring, id, "zone"), label(&ring, id, "rack"))).collect();
            racks.sort();
            racks.dedup();
            assert_eq!(racks.len(), 6);
        }
    }

    #[test]
    fn strict_infeasible_is_an_error_before_walking() {
        let ring = cluster(2);
        let err = replicas_with_policy(&ring, b"k", 3, &PlacementPolicy::strict(["zone"])).unwrap_err();
        assert!(matches!(err, Error::Placement(ref m) if m.contains("zone") && m.contains("only 2")), "{err}");
        assert!(replicas_with_policy(&ring, b"k", 2, &PlacementPolicy::strict(["zone"])).is_ok());
    }

    #[test]
    fn best_effort_fills_when_topology_runs_out() {
        let ring = cluster(2);
        let reps = replicas_with_policy(&ring, b"k", 5, &PlacementPolicy::best_effort(["zone"])).unwrap();
        assert_eq!(reps.len(), 5);
        let z0 = reps.iter().filter(|&&id| label(&ring, id, "zone") == "z0").count();
        assert!(z0 == 2 || z0 == 3, "balanced 3/2 split, got {z0}");
    }

    #[test]
    fn strict_inner_level_with_best_effort_outer() {
        // The greedy would repeat host h0 if strictness were only a preference.
        let nodes = [("a1", "a", "h1"), ("a2", "a", "h1"), ("b1", "b", "h2"), ("b2", "b", "h3"), ("b3", "b", "h4")];
        let ring = Ring::builder()
            .vnodes(20)
            .node_set(
                NodeSet::new(nodes.iter().map(|(n, z, h)| Node::new(*n).with_label("zone", *z).with_label("host", *h)))
                    .unwrap(),
            )
            .build()
            .unwrap();
        let policy = PlacementPolicy::new().level("zone", Spread::BestEffort).level("host", Spread::Strict);
        for k in 0..300u32 {
            let reps = replicas_with_policy(&ring, &k.to_le_bytes(), 4, &policy).unwrap();
            let mut hosts: Vec<(&str, &str)> =
                reps.iter().map(|&id| (label(&ring, id, "zone"), label(&ring, id, "host"))).collect();
            hosts.sort();
            hosts.dedup();
            assert_eq!(hosts.len(), 4, "four distinct hosts");
        }
    }

    #[test]
    fn missing_label_and_bad_input() {
        let ring = Ring::builder().nodes(["a", "b"]).build().unwrap();
        let err = replicas_with_policy(&ring, b"k", 1, &PlacementPolicy::best_effort(["zone"])).unwrap_err();
        assert!(matches!(err, Error::Placement(ref m) if m.contains("no label")), "{err}");
        let err = replicas_with_policy(&ring, b"k", 3, &PlacementPolicy::new()).unwrap_err();
        assert_eq!(err, Error::TooManyReplicas { requested: 3, available: 2 });
        let dup = PlacementPolicy::best_effort(["zone", "zone"]);
        assert!(matches!(Topology::new(ring.nodes(), &dup), Err(Error::Placement(_))));
        // No policy = the router's own replicas.
        assert_eq!(
            replicas_with_policy(&ring, b"k", 2, &PlacementPolicy::new()).unwrap(),
            ring.replicas(b"k", 2).unwrap()
        );
    }

    #[test]
    fn path_qualified_racks() {
        // Rack "r0" exists in both zones; they are different racks.
        let ring = cluster(2);
        let topo = Topology::new(ring.nodes(), &PlacementPolicy::strict(["zone", "rack", "host"])).unwrap();
        assert_eq!(topo.distinct_values(), &[2, 4, 8]);
    }

    proptest! {
        #[test]
        fn walk_agrees_with_naive(
            key in proptest::collection::vec(any::<u8>(), 0..16),
            zones in 1usize..4,
            n in 0usize..10,
            strict_host in any::<bool>(),
        ) {
            let ring = cluster(zones);
            let policy = PlacementPolicy::new()
                .level("zone", Spread::BestEffort)
                .level("rack", Spread::BestEffort)
                .level("host", if strict_host { Spread::Strict } else { Spread::BestEffort });
            let topo = Topology::new(ring.nodes(), &policy).unwrap();
            let fast = topo.replicas(&ring, &key, n);
            let naive = replicas_naive(&topo, &ring, &key, n);
            prop_assert_eq!(&fast, &naive);
            if let Ok(reps) = fast {
                if n > 0 {
                    prop_assert_eq!(reps[0], ring.route(&key));
                }
                let mut d = reps.clone();
                d.sort();
                d.dedup();
                prop_assert_eq!(d.len(), n);
            }
        }
    }
}

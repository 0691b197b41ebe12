//! The candidate registry: every router configuration the sweep knows, how each is built from a
//! node set, and how its load is measured (its [`LoadModel`](super::LoadModel)).

use super::*;

/// Builds a router over a node set.
pub type BuildFn = Arc<dyn Fn(&NodeSet) -> Result<AnyRouter> + Send + Sync>;
/// Builds the exact circle partition of a router over a node set.
pub type PartitionFn = Arc<dyn Fn(&NodeSet) -> Result<Partition> + Send + Sync>;
/// Builds the exact `hash mod M` table of a router over a node set.
pub type TableFn = Arc<dyn Fn(&NodeSet) -> Result<ModTable> + Send + Sync>;

/// How a candidate's per-node load is measured.
#[derive(Clone)]
pub enum LoadModel {
    /// Exact, from the arcs of the router's circle partition (ring, Ketama, slots).
    Partition(PartitionFn),
    /// Exact from a `hash mod M` lookup table (Maglev).
    Table(TableFn),
    /// Exact by arithmetic: `hash % N` gives every node `1/N` (the `2^64 mod N` bias is below
    /// `N / 2^64`), and key movement is counted over one period `lcm(N, M)`.
    Modulo,
    /// Keys are sampled and routed. `names_matter` is false when node names cannot change the
    /// routes (jump: node `i` is bucket `i`), so one cluster is enough.
    Sampled {
        /// Whether node names influence routes.
        names_matter: bool,
    },
}

/// One router configuration the sweep measures.
#[derive(Clone)]
pub struct Candidate {
    /// Unique name in reports (`ring-v160`, `jump`, …).
    pub name: String,
    /// The algorithm family (`ring`, `modulo`, …); rings of different V share `ring`.
    pub family: &'static str,
    /// Virtual nodes per node for ring-like routers.
    pub vnodes: Option<u32>,
    /// Builds the router.
    pub build: BuildFn,
    /// How its load is measured.
    pub model: LoadModel,
    /// Whether rebuilding it for a new node set moves about the minimum (false for modulo, and
    /// for Redis slots, whose fresh `redis-cli` layout shifts every range; a live Redis cluster
    /// moves slots explicitly instead). The recommendation only picks consistent routers.
    pub consistent: bool,
    /// Whether a lookup costs O(N) (rendezvous), which bounds how many keys the sweep samples.
    pub linear_lookup: bool,
    /// Divides the sampled key count for routers whose lookups are slow for another reason
    /// (multi-probe's 21 probes); 1 for everything else. The noise column reports the result.
    pub sample_divisor: usize,
    /// Whether it can lose any node (false for jump, which only removes the last bucket).
    pub removes_any_node: bool,
    /// The algorithm it configures.
    pub algorithm: Algorithm,
}

impl std::fmt::Debug for Candidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Candidate").field("name", &self.name).field("family", &self.family).finish_non_exhaustive()
    }
}

/// The vnode counts the sweep tries for the plain ring.
pub const RING_VNODES: &[u32] = &[1, 8, 16, 32, 64, 100, 128, 160, 200, 256, 320, 500, 1000];
/// The node counts the sweep tries.
pub const NODE_COUNTS: &[usize] = &[3, 4, 8, 10, 16, 64, 100, 1000];

/// A plain ring with `v` vnodes per node (xxh3).
pub fn ring_candidate(v: u32) -> Candidate {
    ring_on(format!("ring-v{v}"), "ring", v, |nodes| Ok(nodes.clone()))
}

/// The node set with weights 1, 2, 3, 1, 2, 3, … by position: the weighted-ring candidate's
/// cluster. Loads are judged against these weights' shares.
pub fn weighted_variant(nodes: &NodeSet) -> Result<NodeSet> {
    NodeSet::new(nodes.iter().map(|(id, n)| Node::new(n.name()).with_weight(f64::from(id.as_u32() % 3 + 1))))
}

/// A ring with `v` vnodes per unit weight over [`weighted_variant`] of the cluster.
pub fn weighted_ring_candidate(v: u32) -> Candidate {
    ring_on(format!("ring-weighted-v{v}"), "ring-weighted", v, weighted_variant)
}

/// A ring candidate with `v` vnodes over `prepare(cluster)`: loads come exactly from its arcs.
fn ring_on(name: String, family: &'static str, v: u32, prepare: fn(&NodeSet) -> Result<NodeSet>) -> Candidate {
    let spec = RouterSpec::new(Algorithm::Ring).with_vnodes(u64::from(v));
    let mut cand = Candidate::from_spec(name, family, spec);
    let build = cand.build.clone();
    cand.build = Arc::new(move |n| build(&prepare(n)?));
    let model_build = cand.build.clone();
    cand.model = LoadModel::Partition(Arc::new(move |n| partition_of(&model_build(n)?)));
    cand
}

impl Candidate {
    /// The candidate for `spec`, with its load model and capabilities from the algorithm (the
    /// one registry: [`Algorithm`] and [`RouterSpec`], as the CLI and the configs use them).
    pub fn from_spec(name: String, family: &'static str, spec: RouterSpec) -> Candidate {
        let algorithm = spec.algorithm;
        let vnodes = match algorithm {
            Algorithm::Ring => Some(spec.vnodes.map_or(hashroute::Ring::DEFAULT_VNODES, |v| v as u32)),
            Algorithm::Ketama => Some(160),
            _ => None,
        };
        let spec_for_build = spec.clone();
        let build: BuildFn = Arc::new(move |n| spec_for_build.build(n.clone()));
        let from_build = build.clone();
        let model = match algorithm {
            Algorithm::Ring
            | Algorithm::Ketama
            | Algorithm::Slots
            | Algorithm::Nginx
            | Algorithm::Haproxy
            | Algorithm::EnvoyRing
            | Algorithm::TokenRing => LoadModel::Partition(Arc::new(move |n| partition_of(&from_build(n)?))),
            Algorithm::Maglev => LoadModel::Table(Arc::new(move |n| table_of(&from_build(n)?))),
            Algorithm::Modulo => LoadModel::Modulo,
            Algorithm::Jump | Algorithm::Memento | Algorithm::Anchor => LoadModel::Sampled { names_matter: false },
            // The jump family: node `i` is bucket `i`, so names do not matter either.
            a if a.is_stateless_bucket_hash() || a == Algorithm::JumpBackAnchor => {
                LoadModel::Sampled { names_matter: false }
            }
            _ => LoadModel::Sampled { names_matter: true },
        };
        Candidate {
            name,
            family,
            vnodes,
            build,
            model,
            consistent: algorithm.is_consistent(),
            linear_lookup: algorithm == Algorithm::Rendezvous,
            // Multi-probe's 21 searches per key make its lookups ~20x a ring's.
            sample_divisor: if algorithm == Algorithm::MultiProbe { 4 } else { 1 },
            removes_any_node: algorithm.removes_any_node(),
            algorithm,
        }
    }
}

/// The exact partition of a router with a structure ([`Router::arcs`]: ring, Ketama, Redis
/// slots, token ring, the proxies' nginx, HAProxy and Envoy rings, Maglev's table), for
/// uniformly distributed key hashes.
///
/// # Errors
/// [`Error::Unsupported`] for any other router.
pub fn partition_of(router: &AnyRouter) -> Result<Partition> {
    Partition::of(router)
        .ok_or_else(|| Error::Unsupported { algorithm: router.algorithm().name(), operation: "exact arc loads" })
}

/// The exact `hash mod M` table of a router whose arcs are a lookup table (Maglev).
///
/// # Errors
/// [`Error::Unsupported`] for any other router.
pub fn table_of(router: &AnyRouter) -> Result<ModTable> {
    ModTable::of(router)
        .ok_or_else(|| Error::Unsupported { algorithm: router.algorithm().name(), operation: "an exact lookup table" })
}

/// Every router configuration the sweep, the report and the recommendation measure, built from
/// [`RouterSpec`]s. **Adding an algorithm is one entry here** (plus its [`Algorithm`] variant).
pub fn candidates() -> Vec<Candidate> {
    let spec = |a: Algorithm| RouterSpec::new(a);
    let named = |name: &str, family: &'static str, s: RouterSpec| Candidate::from_spec(name.into(), family, s);
    let mut out = vec![named("modulo", "modulo", spec(Algorithm::Modulo))];
    out.extend(RING_VNODES.iter().map(|&v| ring_candidate(v)));
    out.push(weighted_ring_candidate(160));
    out.push(named("jump", "jump", spec(Algorithm::Jump)));
    out.push(named("ketama", "ketama", spec(Algorithm::Ketama).with_ketama_variant(KetamaVariant::Libketama)));
    out.push(named("rendezvous", "rendezvous", spec(Algorithm::Rendezvous)));
    out.push(named("slots", "slots", spec(Algorithm::Slots)));
    out.push(named("maglev", "maglev", spec(Algorithm::Maglev).with_table_size(Maglev::DEFAULT_TABLE_SIZE)));
    out.push(named("multiprobe", "multiprobe", spec(Algorithm::MultiProbe).with_probes(MultiProbe::DEFAULT_PROBES)));
    let mut anchor = named("anchor", "anchor", spec(Algorithm::Anchor));
    // A fixed capacity, so a resize keeps it (as a deployment would): the sweep's 2000-node
    // clusters fit; bigger clusters get 2N rounded up.
    anchor.build = Arc::new(|n| {
        let capacity = ANCHOR_CAPACITY.max((2 * n.len()).next_power_of_two() as u32);
        RouterSpec::new(Algorithm::Anchor).with_capacity(capacity).build(n.clone())
    });
    out.push(anchor);
    out.push(named("memento", "memento", spec(Algorithm::Memento)));
    // The constant-time jump family.
    out.push(named("jumpback", "jumpback", spec(Algorithm::JumpBack)));
    out.push(named("fliphash", "fliphash", spec(Algorithm::FlipHash)));
    out.push(named("power", "power", spec(Algorithm::Power)));
    out.push(named("binomial", "binomial", spec(Algorithm::Binomial)));
    out.push(named("jumpback-anchor", "jumpback-anchor", spec(Algorithm::JumpBackAnchor)));
    // The proxies' own placements: measured like every router, chosen by
    // `compatible_with` ("must match nginx").
    out.push(named("nginx", "nginx", spec(Algorithm::Nginx)));
    out.push(named("haproxy", "haproxy", spec(Algorithm::Haproxy)));
    out.push(named("envoy-ring", "envoy-ring", spec(Algorithm::EnvoyRing)));
    // The allocated token ring at Cassandra's default 16 tokens per node (the recommendation
    // also searches its count per target).
    out.push(token_ring_candidate(16));
    out
}

/// The allocated token ring with `v` tokens per node, allocated one node at a time in the
/// cluster's order; exact loads from its arcs.
pub fn token_ring_candidate(v: u32) -> Candidate {
    let spec = RouterSpec::new(Algorithm::TokenRing).with_tokens_per_node(v);
    let mut cand = Candidate::from_spec(format!("token-ring-v{v}"), "token-ring", spec);
    cand.vnodes = Some(v);
    cand
}

/// The anchor capacity the sweep gives AnchorHash: fixed, so a resize keeps it (as a deployment
/// would), and large enough for the sweep's 2000-node clusters; bigger clusters get 2N rounded up.
pub const ANCHOR_CAPACITY: u32 = 4096;

/// The candidate named `name` (as in reports: `ring-v160`, `jump`).
///
/// # Errors
/// [`Error::InvalidParameter`] for an unknown name.
pub fn candidate(name: &str) -> Result<Candidate> {
    candidates().into_iter().find(|c| c.name == name).ok_or_else(|| Error::InvalidParameter {
        name: "candidate",
        reason: format!("unknown router configuration {name:?} (known: {})", candidate_names().join(", ")),
    })
}

/// The names of all [`candidates`].
pub fn candidate_names() -> Vec<String> {
    candidates().into_iter().map(|c| c.name).collect()
}

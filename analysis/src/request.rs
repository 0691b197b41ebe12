//! What a recommendation is asked for: the cluster, the balance targets, the constraints, the
//! rule that picks among the eligible, and the effort. Checked once by [`Request::validate`];
//! read by the measuring and the deciding steps.

use std::fmt;
use std::str::FromStr;

use hashroute::{Algorithm, Error, KetamaVariant, NodeSet, Result};

use crate::sweep::SweepConfig;

const DEFAULT_TARGETS: [f64; 4] = [1.05, 1.10, 1.25, 1.50];

const MAX_NODE_COUNT: usize = 1_000_000;

/// The memory budget per router when none is given: 64 MiB.
pub const DEFAULT_MAX_MEMORY: u64 = 64 << 20;

/// The systems `--compatible-with` names besides the Ketama clients (whose names are
/// [`KetamaVariant::name`]'s, plus `ketama` for libketama): the one table the parser and every
/// list of accepted names read.
const SYSTEMS: [(&str, Algorithm); 6] = [
    ("ketama", Algorithm::Ketama),
    ("redis-slots", Algorithm::Slots),
    ("maglev-envoy", Algorithm::Maglev),
    ("nginx", Algorithm::Nginx),
    ("haproxy", Algorithm::Haproxy),
    ("envoy-ring", Algorithm::EnvoyRing),
];

/// Every name [`Request::compatible_with`] accepts, in the order lists show them.
pub fn compatible_names() -> Vec<&'static str> {
    let ketama = KetamaVariant::ALL.iter().map(|v| v.name());
    SYSTEMS.iter().take(1).map(|s| s.0).chain(ketama).chain(SYSTEMS.iter().skip(1).map(|s| s.0)).collect()
}

/// A capability the user needs, used to filter candidates (`--require`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Requirement {
    /// Any node can be removed with only its keys moving (rules out jump, JumpBack, FlipHash,
    /// power and binomial, which only drop their last bucket; JumpBackAnchor qualifies).
    RemoveAny,
    /// Node weights change the share of keys.
    Weights,
    /// A preference list: replicas and failover (rules out Redis slots).
    Replicas,
}

impl Requirement {
    /// Every requirement, in the order lists show them.
    pub const ALL: [Requirement; 3] = [Requirement::RemoveAny, Requirement::Weights, Requirement::Replicas];

    /// Parses a comma-separated list (`remove-any,weights,replicas`); `none` or an empty string
    /// is the empty list.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming an unknown requirement.
    pub fn parse_list(text: &str) -> Result<Vec<Requirement>> {
        let text = text.trim();
        if text.is_empty() || text == "none" {
            return Ok(Vec::new());
        }
        text.split(',').map(|t| t.trim().parse()).collect()
    }

    /// The requirement's name, as `--require` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Requirement::RemoveAny => "remove-any",
            Requirement::Weights => "weights",
            Requirement::Replicas => "replicas",
        }
    }

    pub(crate) fn met_by(self, a: Algorithm) -> bool {
        match self {
            Requirement::RemoveAny => a.removes_any_node(),
            Requirement::Weights => a.supports_weights(),
            Requirement::Replicas => a.has_preference_list(),
        }
    }
}

impl FromStr for Requirement {
    type Err = Error;
    fn from_str(s: &str) -> Result<Requirement> {
        Requirement::ALL.into_iter().find(|r| r.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Requirement::ALL.iter().map(|r| r.name()).collect();
            Error::InvalidParameter {
                name: "requirement",
                reason: format!("unknown requirement {s:?} (expected {} or none)", names.join(", ")),
            }
        })
    }
}

/// The rule that picks the answer among the eligible candidates (`--prefer`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Prefer {
    /// The fastest single-key lookup (the default), then the least memory. Lookup times are
    /// measured on this machine; where they were not measured (smoke runs), the least memory.
    #[default]
    Latency,
    /// The least memory, then the fastest lookup.
    Memory,
    /// The fewest keys moved by one addition and by one removal (the worse of the two, as a
    /// multiple of the ideal), then the fastest lookup.
    Movement,
}

impl Prefer {
    /// Every rule, the default first.
    pub const ALL: [Prefer; 3] = [Prefer::Latency, Prefer::Memory, Prefer::Movement];

    /// The rule's name, as `--prefer` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Prefer::Latency => "latency",
            Prefer::Memory => "memory",
            Prefer::Movement => "movement",
        }
    }

    /// What the rule picks, for the answer line.
    pub fn describe(self) -> &'static str {
        match self {
            Prefer::Latency => "the fastest lookup",
            Prefer::Memory => "the least memory",
            Prefer::Movement => "the fewest keys moved by one addition or removal",
        }
    }
}

impl fmt::Display for Prefer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Prefer {
    type Err = Error;
    fn from_str(s: &str) -> Result<Prefer> {
        Prefer::ALL.into_iter().find(|p| p.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Prefer::ALL.iter().map(|p| p.name()).collect();
            Error::InvalidParameter { name: "prefer", reason: format!("{s:?} (expected {})", names.join(", ")) }
        })
    }
}

/// What to recommend for: a cluster (a node count, or the user's own node list), the balance
/// targets, the constraints, the rule that picks, and how hard to measure. Built with
/// [`Request::for_node_count`] or [`Request::for_nodes`] and the methods below; checked by
/// [`recommend`](crate::recommend).
#[derive(Clone, Debug)]
pub struct Request {
    pub(crate) cluster: Cluster,
    pub(crate) targets: Vec<f64>,
    pub(crate) requirements: Vec<Requirement>,
    pub(crate) compatible_with: Option<String>,
    pub(crate) max_memory: u64,
    pub(crate) max_lookup_ns: Option<f64>,
    pub(crate) prefer: Prefer,
    pub(crate) seed: u64,
    pub(crate) effort: Effort,
    pub(crate) grow: Vec<Grow>,
    pub(crate) measure_lookup: bool,
}

#[derive(Clone, Debug)]
pub(crate) enum Cluster {
    Count(usize),
    Nodes(NodeSet),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Effort {
    Smoke,
    Default,
    Full,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Grow {
    Nodes(usize),
    Percent(f64),
}

impl Request {
    /// The default balance targets: the busiest node's load over the mean at most 5%, 10%, 25%
    /// and 50% above it (the tail quantile over random clusters, or the exact value for a node
    /// list).
    pub const DEFAULT_TARGETS: [f64; 4] = DEFAULT_TARGETS;

    fn new(cluster: Cluster) -> Request {
        Request {
            cluster,
            targets: DEFAULT_TARGETS.to_vec(),
            requirements: vec![Requirement::RemoveAny],
            compatible_with: None,
            max_memory: DEFAULT_MAX_MEMORY,
            max_lookup_ns: None,
            prefer: Prefer::default(),
            seed: 0x5EED,
            effort: Effort::Default,
            grow: vec![Grow::Nodes(1), Grow::Percent(25.0)],
            measure_lookup: true,
        }
    }

    /// A recommendation for random clusters of `nodes` nodes (1 to 1,000,000).
    pub fn for_node_count(nodes: usize) -> Request {
        Request::new(Cluster::Count(nodes))
    }

    /// A recommendation for this node list (names and weights): exact loads where the
    /// algorithm allows, and the spread after the cluster grows ([`Request::grow`]).
    pub fn for_nodes(nodes: NodeSet) -> Request {
        Request::new(Cluster::Nodes(nodes))
    }

    /// The balance targets (max/mean ratios above 1; default [`Request::DEFAULT_TARGETS`]).
    pub fn targets(mut self, targets: &[f64]) -> Request {
        self.targets = targets.to_vec();
        self
    }

    /// The capabilities every answer must have (default: [`Requirement::RemoveAny`], what most
    /// users asking about vnodes need; pass `&[]` for none).
    pub fn require(mut self, requirements: &[Requirement]) -> Request {
        self.requirements = requirements.to_vec();
        self
    }

    /// Only routers that place keys exactly as `name` does: a name of [`compatible_names`] (a
    /// Ketama client, `redis-slots`, `maglev-envoy`, or a proxy). Checked by
    /// [`recommend`](crate::recommend).
    pub fn compatible_with(mut self, name: &str) -> Request {
        self.compatible_with = Some(name.to_string());
        self
    }

    /// The most memory a router may take, in bytes (default [`DEFAULT_MAX_MEMORY`], 64 MiB).
    pub fn max_memory(mut self, bytes: u64) -> Request {
        self.max_memory = bytes;
        self
    }

    /// The slowest single-key lookup allowed, in nanoseconds (measured here, so machine-bound).
    pub fn max_lookup_ns(mut self, ns: f64) -> Request {
        self.max_lookup_ns = Some(ns);
        self
    }

    /// The rule that picks the answer among the eligible candidates (default
    /// [`Prefer::Latency`]).
    pub fn prefer(mut self, prefer: Prefer) -> Request {
        self.prefer = prefer;
        self
    }

    /// The seed of the random clusters, keys and added nodes (default 0x5EED).
    pub fn seed(mut self, seed: u64) -> Request {
        self.seed = seed;
        self
    }

    /// The publication-grade effort (`--full`, `HASHROUTE_FULL`): more clusters per
    /// confirmation, so higher quantiles are supported at larger N; minutes instead of seconds.
    pub fn full(mut self, full: bool) -> Request {
        self.effort = if full { Effort::Full } else { Effort::Default };
        self
    }

    /// The smoke effort (`HASHROUTE_QUICK`): few clusters, no lookup timing; for CI.
    pub fn smoke(mut self) -> Request {
        self.effort = Effort::Smoke;
        self.measure_lookup = false;
        self
    }

    /// Whether to time lookups (≈ 0.1 s per candidate; memory is always exact). Default on.
    pub fn measure_lookup(mut self, on: bool) -> Request {
        self.measure_lookup = on;
        self
    }

    /// How the cluster will grow, for a node list: a comma-separated list of node counts and
    /// percentages (`1,25%`, the default). Each is simulated by adding random names.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an item that is neither a positive count nor a positive
    /// percentage.
    pub fn grow(mut self, spec: &str) -> Result<Request> {
        let bad = |item: &str| Error::InvalidParameter {
            name: "grow",
            reason: format!("{item:?} is not a positive node count or percentage (e.g. 1,25%)"),
        };
        self.grow = spec
            .split(',')
            .map(|item| {
                let item = item.trim();
                match item.strip_suffix('%') {
                    Some(p) => p.parse::<f64>().ok().filter(|p| p.is_finite() && *p > 0.0).map(Grow::Percent),
                    None => item.parse::<usize>().ok().filter(|&n| n > 0).map(Grow::Nodes),
                }
                .ok_or_else(|| bad(item))
            })
            .collect::<Result<_>>()?;
        Ok(self)
    }

    pub(crate) fn node_count(&self) -> usize {
        match &self.cluster {
            Cluster::Count(n) => *n,
            Cluster::Nodes(set) => set.len(),
        }
    }

    pub(crate) fn validate(&self) -> Result<()> {
        let n = self.node_count();
        if n == 0 || n > MAX_NODE_COUNT {
            return Err(Error::InvalidParameter { name: "node count", reason: format!("{n} is not in 1..=1000000") });
        }
        if self.targets.is_empty() {
            return Err(Error::InvalidParameter { name: "max load", reason: "no target given".into() });
        }
        for &t in &self.targets {
            if !t.is_finite() || t <= 1.0 {
                return Err(Error::InvalidParameter {
                    name: "max load",
                    reason: format!("{t} must be a finite ratio above 1.0 (e.g. 1.10)"),
                });
            }
        }
        if let Some(ns) = self.max_lookup_ns.filter(|ns| !ns.is_finite() || *ns <= 0.0) {
            return Err(Error::InvalidParameter { name: "max lookup ns", reason: format!("{ns} is not positive") });
        }
        self.compatibility().map(|_| ())
    }

    /// The algorithm (and Ketama variant) the compatibility constraint admits, if any.
    pub(crate) fn compatibility(&self) -> Result<Option<(Algorithm, Option<KetamaVariant>)>> {
        let Some(name) = self.compatible_with.as_deref() else { return Ok(None) };
        let found = match SYSTEMS.iter().find(|s| s.0 == name) {
            Some(&(_, Algorithm::Ketama)) => Some((Algorithm::Ketama, Some(KetamaVariant::Libketama))),
            Some(&(_, algo)) => Some((algo, None)),
            None => KetamaVariant::from_name(name).ok().map(|v| (Algorithm::Ketama, Some(v))),
        };
        found.map(Some).ok_or_else(|| Error::InvalidParameter {
            name: "compatible-with",
            reason: format!("unknown system {name:?} (expected one of {})", compatible_names().join(", ")),
        })
    }

    pub(crate) fn config(&self) -> SweepConfig {
        let base = match self.effort {
            Effort::Smoke => {
                SweepConfig { clusters: 20, point_budget: 200_000, sample_keys: 10_000, ..SweepConfig::quick() }
            }
            Effort::Default => SweepConfig::quick(),
            Effort::Full => SweepConfig::full(),
        };
        SweepConfig { seed: self.seed, ..base }
    }

    /// Ring points one confirmation (one V over all its clusters) may build.
    pub(crate) fn point_budget(&self) -> u64 {
        match self.effort {
            Effort::Smoke => 2_000_000,
            Effort::Default => 20_000_000,
            Effort::Full => 400_000_000,
        }
    }

    /// The constraints as text, for the recommendation's heading.
    pub(crate) fn constraints_text(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let reqs: Vec<&str> = self.requirements.iter().map(|r| r.name()).collect();
        parts.push(format!("require {}", if reqs.is_empty() { "nothing".to_string() } else { reqs.join(",") }));
        if let Some(c) = &self.compatible_with {
            parts.push(format!("compatible with {c}"));
        }
        parts.push(format!("memory <= {}", crate::present::bytes(Some(self.max_memory as usize))));
        if let Some(ns) = self.max_lookup_ns {
            parts.push(format!("lookup <= {ns} ns"));
        }
        parts.push(format!("prefer {}", self.prefer));
        parts.join(", ")
    }
}

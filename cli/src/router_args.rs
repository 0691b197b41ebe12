//! The router flags every router-building subcommand shares, and their translation into a
//! [`RouterSpec`] (which alone decides what combinations are valid) plus a node set.

use std::path::{Path, PathBuf};

use clap::Args;
use hashroute::jumpback::{JumpBackAnchorBucketSet, JumpBackGenerator};
use hashroute::{Algorithm, AnyRouter, Error, KetamaVariant, KeyHasher, NodeSet, Router, RouterSpec};

use crate::failure::Failure;
use crate::keys::parse_u64_arg;
use crate::names::{self, help_list};

/// Bucket counts above this cannot be turned into a node list (one name per bucket); `route`
/// does not need one and takes any `u32`.
const MAX_BUCKETS_AS_NODES: u32 = 1 << 20;

/// Router flags: the algorithm's ([`AlgoArgs`]) and the nodes' ([`NodesArgs`]), or a proxy
/// configuration, or a tokens file, or a ring stored in etcd. Subcommands that take their nodes some other way
/// (`migrate --from FILE --to FILE`) flatten [`AlgoArgs`] alone and require `--algo` (or their
/// own replacement) with a group of their own.
#[derive(Args, Debug, Clone)]
#[command(group(clap::ArgGroup::new("router").args(["algo", "from_config", "tokens_file", "etcd", "crush_map"]).required(true)))]
pub(crate) struct RouterArgs {
    #[command(flatten)]
    algo: AlgoArgs,
    #[command(flatten)]
    nodes: NodesArgs,
    #[command(flatten)]
    proxy: crate::proxy_args::ConfigArgs,
    #[command(flatten)]
    tokens: crate::tokens_file::TokensFileArgs,
    #[command(flatten)]
    stored: crate::ring::StoredRingArgs,
    #[command(flatten)]
    crush: crate::crush_args::CrushArgs,
}

/// The algorithm and its parameters: everything that becomes a [`RouterSpec`]. New algorithm
/// parameters go here and into `RouterSpec`, which alone decides where they apply.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Router")]
pub(crate) struct AlgoArgs {
    #[arg(long, value_name = "ALGO", help = help_list("Algorithm", &names::algorithms(), ""))]
    algo: Option<String>,
    /// Ring only: virtual nodes per weight-1 node [default: 160]
    #[arg(long, value_name = "V")]
    vnodes: Option<u64>,
    #[arg(long = "hash", value_name = "NAME", help = help_list("Key hasher", &names::hashers(), " [default: xxh3; the proxies' own for theirs]"))]
    hash: Option<String>,
    /// Hasher seed, decimal or 0x hex (murmur3, murmur3-32 and xxh32 take 32 bits; xxh3 and xxh64
    /// 64 bits; the others none) [default: 0]
    #[arg(long, value_name = "S", value_parser = parse_u64_arg)]
    seed: Option<u64>,
    #[arg(long, value_name = "NAME", help = help_list("Ketama only", &names::ketama_variants(), " [default: libketama]"))]
    variant: Option<String>,
    /// Maglev only: lookup-table size, a prime [default: 65537]
    #[arg(long, value_name = "M")]
    table_size: Option<u64>,
    /// Multiprobe only: probes per key [default: 21]
    #[arg(long, value_name = "K")]
    probes: Option<u32>,
    /// Anchor only: total bucket capacity, at least the node count [default: 2 × node count]
    #[arg(long, value_name = "A")]
    capacity: Option<u32>,
    #[arg(long, value_name = "NAME", help = help_list("Jumpback only: random generator", &names::generators(), " [default: splitmix64]"))]
    generator: Option<String>,
    /// Envoy-ring only: minimum_ring_size [default: 1024]
    #[arg(long, value_name = "N")]
    min_ring_size: Option<u64>,
    /// Envoy-ring only: maximum_ring_size [default: 8388608]
    #[arg(long, value_name = "N")]
    max_ring_size: Option<u64>,
    /// Token-ring only: the allocator gives each node of the node list V tokens, one node at a
    /// time in list order (16 is Cassandra's num_tokens); explicit tokens come from --tokens-file
    #[arg(long, value_name = "V")]
    tokens_per_node: Option<u32>,
}

/// Where the nodes come from.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Nodes")]
pub(crate) struct NodesArgs {
    /// Nodes, comma-separated, weight 1 each
    #[arg(long, value_name = "A,B,C", conflicts_with = "nodes_file")]
    nodes: Option<String>,
    /// Nodes file: one `NAME [WEIGHT]` per line (libketama's server file); `#` comments
    #[arg(long, value_name = "FILE")]
    nodes_file: Option<PathBuf>,
    /// Jump, jumpback, fliphash, power, binomial, jumpback-anchor: N numbered buckets 0..N
    /// instead of named nodes (route prints bucket numbers)
    #[arg(long, value_name = "N", conflicts_with_all = ["nodes", "nodes_file"])]
    buckets: Option<u32>,
    /// Jumpback-anchor with --buckets: bucket ids to remove, in this order
    #[arg(long, value_name = "ID,ID", requires = "buckets")]
    removed: Option<String>,
    /// Kafka only: N partitions numbered 0..N (route prints partition numbers)
    #[arg(long, value_name = "N", conflicts_with_all = ["nodes", "nodes_file", "buckets"])]
    partitions: Option<u32>,
}

/// What the router flags describe.
pub(crate) enum Target {
    Router(Box<AnyRouter>),
    /// `--algo jump --buckets N` (or one of jump's successors): a 64-bit hash to a bucket
    /// number, no node list.
    Buckets {
        hasher: KeyHasher,
        bucket: BucketFn,
    },
}

/// A key hash to its bucket number.
pub(crate) type BucketFn = Box<dyn Fn(u64) -> u32>;

impl AlgoArgs {
    /// The configuration the flags describe, validated (nodes not read yet).
    pub(crate) fn spec(&self) -> Result<RouterSpec, Failure> {
        let name =
            self.algo.as_deref().ok_or_else(|| Failure::msg("no router: give --algo ALGO or --from-config FILE"))?;
        let algorithm = Algorithm::from_name(name)?;
        let mut spec = RouterSpec::new(algorithm);
        spec.vnodes = self.vnodes;
        spec.table_size = self.table_size;
        spec.probes = self.probes;
        spec.capacity = self.capacity;
        spec.generator = self.generator.as_deref().map(str::parse::<JumpBackGenerator>).transpose()?;
        spec.min_ring_size = self.min_ring_size;
        spec.max_ring_size = self.max_ring_size;
        spec.ketama_variant = self.variant.as_deref().map(KetamaVariant::from_name).transpose()?;
        spec.hasher = match (&self.hash, self.seed) {
            (None, None) => None,
            (Some(name), seed) => Some(KeyHasher::from_name(name, seed.unwrap_or(0))?),
            (None, Some(seed)) => Some(KeyHasher::from_name(algorithm.default_hasher().name(), seed)?),
        };
        spec.tokens_per_node = self.tokens_per_node;
        spec.validate()?;
        if let (true, Some(v)) = (algorithm.needs_tokens(), spec.tokens_per_node) {
            // The allocator's own range check, reported against the flag before any node is read.
            hashroute::token_ring::TokenAllocator::from_ring([], v)
                .map_err(|e| Failure::context(format!("--tokens-per-node {v}"), e))?;
        }
        if algorithm.needs_tokens() && spec.tokens_per_node.is_none() {
            return Err(Failure::msg(format!(
                "--algo {name} over a node list needs --tokens-per-node V to allocate its tokens (16 is \
                 Cassandra's num_tokens); route, replicas and fingerprint read explicit tokens with \
                 --tokens-file FILE instead"
            )));
        }
        Ok(spec)
    }
}

impl RouterArgs {
    /// Builds what the flags describe. With `--buckets`, a router over nodes named `0..N` when
    /// `buckets_as_nodes` (for subcommands that need a node list), else [`Target::Buckets`].
    pub(crate) fn target(&self, buckets_as_nodes: bool) -> Result<Target, Failure> {
        if self.stored.is_set() {
            return Err(Failure::msg(
                "--etcd: this command does not read a stored ring (hashroute ring status prints its fingerprint)",
            ));
        }
        if self.crush.crush_map.is_some() {
            return Err(Failure::msg(
                "--crush-map: this command does not read a CRUSH map (route, replicas, fingerprint and pg do)",
            ));
        }
        if let Some(config) = self.proxy.config()? {
            return Ok(Target::Router(Box::new(config.router()?)));
        }
        if let Some(ring) = self.tokens.ring()? {
            return Ok(Target::Router(Box::new(ring.into())));
        }
        let spec = self.algo.spec()?;
        if let Some(count) = self.nodes.partitions {
            if spec.algorithm != Algorithm::Kafka {
                return Err(Failure::msg(format!("--partitions applies to kafka only, not {}", spec.algorithm)));
            }
            if count == 0 || count > MAX_BUCKETS_AS_NODES {
                return Err(Failure::msg(format!("--partitions {count}: give 1 to {MAX_BUCKETS_AS_NODES} partitions")));
            }
            return Ok(Target::Router(Box::new(hashroute::Kafka::partitions(count)?.into())));
        }
        if let Some(count) = self.nodes.buckets {
            let algo = spec.algorithm;
            if !algo.is_stateless_bucket_hash() && algo != Algorithm::JumpBackAnchor {
                return Err(Failure::msg(format!(
                    "--buckets applies to jump, jumpback, fliphash, power, binomial and jumpback-anchor only, not {algo}"
                )));
            }
            if count == 0 {
                return Err(Error::ZeroBuckets.into());
            }
            let removed = self.nodes.removed_ids(algo)?;
            if !buckets_as_nodes {
                let bucket = bucket_fn(&spec, count, &removed)?;
                return Ok(Target::Buckets { hasher: spec.effective_hasher(), bucket });
            }
            if count > MAX_BUCKETS_AS_NODES {
                return Err(Failure::msg(format!(
                    "--buckets {count}: this subcommand needs one node per bucket, at most {MAX_BUCKETS_AS_NODES}"
                )));
            }
            let nodes = NodeSet::from_names((0..count).map(|b| b.to_string()))?;
            let router = spec.build(nodes)?;
            if removed.is_empty() {
                return Ok(Target::Router(Box::new(router)));
            }
            // Node `i` is bucket id `i`, so removing node "i" removes bucket i.
            let mut anchor = hashroute::JumpBackAnchor::builder()
                .node_set(router.nodes().clone())
                .hasher(spec.effective_hasher())
                .build()?;
            for id in &removed {
                anchor = anchor.without_node(&id.to_string())?;
            }
            return Ok(Target::Router(Box::new(anchor.into())));
        }
        Ok(Target::Router(Box::new(spec.build(self.nodes.node_set()?)?)))
    }

    /// The CRUSH router of `--crush-map` (route, replicas and fingerprint check this first).
    pub(crate) fn crush(&self) -> Result<Option<hashroute::crush::CrushRouter>, Failure> {
        self.crush.router()
    }

    /// The stored ring's router with `--etcd`/`--prefix` (route and replicas check this first).
    pub(crate) fn stored_ring(&self) -> Result<Option<hashroute_etcd::RingRouter>, Failure> {
        self.stored.router()
    }

    /// A router (`--buckets` becomes nodes named `0..N`).
    pub(crate) fn router(&self) -> Result<AnyRouter, Failure> {
        match self.target(true)? {
            Target::Router(router) => Ok(*router),
            Target::Buckets { .. } => unreachable!("target(true) always builds a router"),
        }
    }
}

/// The bucket function `--algo A --buckets N [--removed ...]` routes with.
fn bucket_fn(spec: &RouterSpec, count: u32, removed: &[u32]) -> Result<BucketFn, Failure> {
    Ok(match spec.algorithm {
        Algorithm::Jump => Box::new(move |h| hashroute::jump::bucket(h, count)),
        Algorithm::JumpBack => {
            let generator = spec.generator.unwrap_or_default();
            // `count >= 1` was checked, so the checked call never fails.
            Box::new(move |h| hashroute::jumpback::try_bucket_with(h, count, generator).unwrap_or(0))
        }
        Algorithm::FlipHash => Box::new(move |h| hashroute::fliphash::bucket(h, count)),
        Algorithm::Power => Box::new(move |h| hashroute::power::bucket(h, count)),
        Algorithm::Binomial => Box::new(move |h| hashroute::binomial::bucket(h, count)),
        Algorithm::JumpBackAnchor => {
            let mut set = JumpBackAnchorBucketSet::with_buckets(count)?;
            for &id in removed {
                if set.num_buckets() == 1 || !set.remove_bucket(id) {
                    return Err(Failure::msg(format!(
                        "--removed {id}: not a working bucket of 0..{count} (or the last one)"
                    )));
                }
            }
            Box::new(move |h| set.bucket(h).unwrap_or(0))
        }
        other => return Err(Failure::msg(format!("--buckets does not apply to {other}"))),
    })
}

impl NodesArgs {
    /// The ids of `--removed` (jumpback-anchor only).
    fn removed_ids(&self, algo: Algorithm) -> Result<Vec<u32>, Failure> {
        let Some(list) = &self.removed else { return Ok(Vec::new()) };
        if algo != Algorithm::JumpBackAnchor {
            return Err(Failure::msg(format!("--removed applies to jumpback-anchor only, not {algo}")));
        }
        list.split(',')
            .map(|id| {
                let id = id.trim();
                id.parse::<u32>().map_err(|_| Failure::msg(format!("--removed: {id:?} is not a bucket id")))
            })
            .collect()
    }

    /// The node set from `--nodes` or `--nodes-file` (`--buckets` is handled by
    /// [`RouterArgs::target`]).
    pub(crate) fn node_set(&self) -> Result<NodeSet, Failure> {
        if let Some(list) = &self.nodes {
            return Ok(NodeSet::from_names(list.split(',').map(str::trim))?);
        }
        if let Some(path) = &self.nodes_file {
            return read_nodes_file(path);
        }
        Err(Failure::msg(
            "no nodes: give --nodes A,B,C or --nodes-file FILE (or --buckets N with jump or a successor, --partitions N with kafka)",
        ))
    }
}

/// The node set of a server file (`NAME [WEIGHT]` per line, `#` comments), errors prefixed with
/// `nodes file PATH`.
pub(crate) fn read_nodes_file(path: &Path) -> Result<NodeSet, Failure> {
    let context = || format!("nodes file {}", path.display());
    let bytes = std::fs::read(path).map_err(|e| Failure::context(context(), e))?;
    let text = String::from_utf8(bytes).map_err(|_| Failure::context(context(), "not valid UTF-8"))?;
    NodeSet::parse(&text).map_err(|e| Failure::context(context(), e))
}

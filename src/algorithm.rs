//! [`Algorithm`]: the one table of facts about every algorithm — its name, capabilities,
//! options, hashers and documentation row. Every list of algorithms (the CLI's `--help`, the
//! "expected one of" errors, the recommendation's capability filters, the crate docs' table) is
//! derived from [`Algorithm::facts`]; nothing else restates them.
//!
//! This module is a leaf: it names no router type, so every router can import it without an
//! import cycle. A new algorithm adds one row to `FACTS` and one variant to [`Algorithm`];
//! `tests/capabilities.rs` then checks that what the row claims is what the router does.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::hash::KeyHasher;

/// A routing algorithm, as named on the command line and in configuration files.
///
/// `#[non_exhaustive]`: more algorithms may be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "kebab-case"))]
pub enum Algorithm {
    /// `hash % N` ([`Modulo`](crate::Modulo)).
    Modulo,
    /// A consistent-hash ring with virtual nodes ([`Ring`](crate::Ring)).
    Ring,
    /// Ketama, compatible with memcached clients ([`Ketama`](crate::Ketama)).
    Ketama,
    /// Jump consistent hash ([`Jump`](crate::Jump)).
    Jump,
    /// Rendezvous (highest random weight) hashing ([`Rendezvous`](crate::Rendezvous)).
    Rendezvous,
    /// Redis Cluster's 16384 hash slots ([`RedisSlots`](crate::RedisSlots)).
    Slots,
    /// Maglev lookup table, Envoy-compatible ([`Maglev`](crate::Maglev)).
    Maglev,
    /// Multi-probe consistent hashing ([`MultiProbe`](crate::MultiProbe)). Spelled `multiprobe`.
    #[cfg_attr(feature = "serde", serde(rename = "multiprobe"))]
    MultiProbe,
    /// MementoHash, jump with arbitrary removals ([`Memento`](crate::Memento)).
    Memento,
    /// AnchorHash over a fixed bucket capacity ([`Anchor`](crate::Anchor)).
    Anchor,
    /// JumpBackHash, constant-time jump ([`JumpBack`](crate::JumpBack)). Spelled `jumpback`.
    #[cfg_attr(feature = "serde", serde(rename = "jumpback"))]
    JumpBack,
    /// FlipHash ([`FlipHash`](crate::FlipHash)). Spelled `fliphash`.
    #[cfg_attr(feature = "serde", serde(rename = "fliphash"))]
    FlipHash,
    /// Power consistent hashing ([`PowerCh`](crate::PowerCh)). Spelled `power`.
    Power,
    /// BinomialHash ([`BinomialHash`](crate::BinomialHash)). Spelled `binomial`.
    Binomial,
    /// JumpBackAnchor, JumpBackHash with arbitrary removals ([`JumpBackAnchor`](crate::JumpBackAnchor)). Spelled
    /// `jumpback-anchor`.
    #[cfg_attr(feature = "serde", serde(rename = "jumpback-anchor"))]
    JumpBackAnchor,
    /// nginx `hash $key consistent` ([`Nginx`](crate::Nginx)).
    Nginx,
    /// HAProxy `hash-type consistent` with `balance uri` ([`Haproxy`](crate::Haproxy)).
    Haproxy,
    /// Envoy's ring hash load balancer ([`EnvoyRing`](crate::EnvoyRing)). Spelled `envoy-ring`.
    EnvoyRing,
    /// Kafka's keyed partitioner, `toPositive(murmur2(key)) % partitions` ([`Kafka`](crate::Kafka)).
    Kafka,
    /// A ring over explicit signed tokens, Cassandra-compatible ([`TokenRing`](crate::TokenRing)). Spelled
    /// `token-ring`. Its nodes must carry their tokens ([`Algorithm::needs_tokens`]).
    TokenRing,
    /// Ceph's CRUSH over a map file ([`CrushRouter`](crate::crush::CrushRouter)). Not in
    /// [`Algorithm::ALL`]: it routes over a CRUSH map, not a node list, so a
    /// [`RouterSpec`](crate::RouterSpec) cannot build it ([`AlgorithmFacts::from_node_list`]).
    Crush,
}

/// An option of [`RouterSpec`](crate::RouterSpec) that only some algorithms take; each
/// algorithm's row in [`Algorithm::facts`] lists the ones it takes, and a spec that sets any
/// other is refused with a one-line error naming it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Param {
    /// `vnodes`: virtual nodes per weight-1 node.
    Vnodes,
    /// `hasher`: the key hasher, free (any [`KeyHasher`]) or from [`AlgorithmFacts::fixed_hashers`].
    Hasher,
    /// `ketama_variant`: the Ketama client to agree with.
    KetamaVariant,
    /// `table_size`: Maglev's lookup-table size.
    TableSize,
    /// `probes`: multi-probe's probes per key.
    Probes,
    /// `capacity`: AnchorHash's bucket capacity.
    Capacity,
    /// `generator`: JumpBackHash's random generator.
    Generator,
    /// `min_ring_size` / `max_ring_size`: Envoy's ring size bounds.
    RingSize,
    /// `uri_whole`: HAProxy's `balance uri whole`.
    UriWhole,
    /// `tokens_per_node`: tokens the allocator gives a node that brings none.
    TokensPerNode,
}

impl Param {
    /// Every option, in [`RouterSpec`](crate::RouterSpec)'s field order.
    pub const ALL: &'static [Param] = &[
        Param::Vnodes,
        Param::Hasher,
        Param::KetamaVariant,
        Param::TableSize,
        Param::Probes,
        Param::Capacity,
        Param::Generator,
        Param::RingSize,
        Param::UriWhole,
        Param::TokensPerNode,
    ];

    /// The option's name in errors (`vnodes`, `hash`, `variant`, `table size`, …).
    pub fn name(self) -> &'static str {
        match self {
            Param::Vnodes => "vnodes",
            Param::Hasher => "hash",
            Param::KetamaVariant => "variant",
            Param::TableSize => "table size",
            Param::Probes => "probes",
            Param::Capacity => "capacity",
            Param::Generator => "generator",
            Param::RingSize => "ring size",
            Param::UriWhole => "uri whole",
            Param::TokensPerNode => "tokens per node",
        }
    }

    /// What the option is, as the "applies to … only" errors say it.
    fn described(self) -> &'static str {
        match self {
            Param::Vnodes => "a vnode count",
            Param::Hasher => "a key hasher",
            Param::KetamaVariant => "a Ketama variant",
            Param::TableSize => "a lookup-table size",
            Param::Probes => "a probe count",
            Param::Capacity => "a bucket capacity",
            Param::Generator => "a random generator",
            Param::RingSize => "a minimum or maximum ring size",
            Param::UriWhole => "balance uri whole",
            Param::TokensPerNode => "a tokens-per-node count",
        }
    }

    /// The algorithms that take this option, from their rows.
    pub fn algorithms(self) -> impl Iterator<Item = Algorithm> {
        Algorithm::ALL.iter().copied().filter(move |a| a.takes(self))
    }

    /// The error for this option set on `algorithm`, which does not take it.
    pub(crate) fn refused(self, algorithm: Algorithm) -> Error {
        let owners = names_list(self.algorithms().map(Algorithm::name));
        let reason = match (self, algorithm) {
            (Param::Vnodes, Algorithm::Ketama) => {
                format!("ketama has a fixed 160 points per server; only {owners} takes a vnode count")
            }
            (Param::Vnodes, _) => format!("{algorithm} has no virtual nodes; only {owners} takes a vnode count"),
            _ => format!("{} applies to {owners} only, not {algorithm}", self.described()),
        };
        Error::InvalidParameter { name: self.name(), reason }
    }
}

/// Everything the crate states about one algorithm: its row in the one table. Read it with
/// [`Algorithm::facts`]; `tests/capabilities.rs` builds every algorithm and checks each claim
/// against what the router does.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct AlgorithmFacts {
    /// The algorithm this row describes.
    pub algorithm: Algorithm,
    /// Its name on the command line and in configuration files.
    pub name: &'static str,
    /// The router type's name (the crate docs link it).
    pub type_name: &'static str,
    /// The hasher it uses when none is configured.
    pub default_hasher: KeyHasher,
    /// The hashers it accepts when the hasher is fixed by the system it agrees with (default
    /// first; for Ketama, the union over its variants, each of which accepts fewer); empty when
    /// any hasher goes.
    pub fixed_hashers: &'static [KeyHasher],
    /// The [`RouterSpec`](crate::RouterSpec) options it takes besides the hasher.
    pub params: &'static [Param],
    /// Node weights change the share of keys (`with_weight` works, weighted nodes build).
    pub weights: bool,
    /// Any node can be removed with only its keys moving (`without_node` of any node works).
    pub removes_any_node: bool,
    /// A membership change moves about the minimum (1/N of the keys).
    pub consistent: bool,
    /// It has a preference list: replicas and failover work.
    pub preference_list: bool,
    /// It exposes its exact division of the key space ([`Router::arcs`](crate::Router::arcs)):
    /// exact loads and migration plans instead of sampled ones.
    pub exact_arcs: bool,
    /// Every node's expected share is exactly its fair share for uniform keys, whatever the
    /// names: measured imbalance is key sampling alone.
    pub balanced_in_expectation: bool,
    /// It maps a 64-bit hash onto buckets `0..n` with no state but `n`.
    pub stateless_bucket_hash: bool,
    /// Its routes come from the nodes' tokens rather than their names.
    pub needs_tokens: bool,
    /// [`RouterSpec::build`](crate::RouterSpec::build) builds it from a node list (all but
    /// CRUSH, which routes over a map file); [`Algorithm::ALL`] lists exactly these.
    pub from_node_list: bool,
    /// With weights, a join, a leave or a weight change moves keys only to or from the changed
    /// node (false where the system it agrees with redistributes, e.g. Ketama's formula).
    pub weight_changes_move_only_the_node: bool,
    /// Docs: memory.
    pub memory: &'static str,
    /// Docs: cost per key.
    pub per_key: &'static str,
    /// Docs: what moves on a resize.
    pub moves: &'static str,
    /// Docs: when to use it.
    pub use_when: &'static str,
}

const XXH3: KeyHasher = KeyHasher::Xxh3 { seed: 0 };

/// A row with the common defaults, so each row below states only what is particular to its
/// algorithm (struct update syntax keeps every field visible in one place: here).
const BASE: AlgorithmFacts = AlgorithmFacts {
    algorithm: Algorithm::Modulo,
    name: "",
    type_name: "",
    default_hasher: XXH3,
    fixed_hashers: &[],
    params: &[],
    weights: false,
    removes_any_node: true,
    consistent: true,
    preference_list: true,
    exact_arcs: false,
    balanced_in_expectation: false,
    stateless_bucket_hash: false,
    needs_tokens: false,
    from_node_list: true,
    weight_changes_move_only_the_node: false,
    memory: "",
    per_key: "",
    moves: "≈ 1/N",
    use_when: "",
};

/// Jump and its constant-time successors: no state but `n`, the last bucket only.
const BUCKET_FN: AlgorithmFacts = AlgorithmFacts {
    removes_any_node: false,
    balanced_in_expectation: true,
    stateless_bucket_hash: true,
    memory: "none",
    moves: "1/N, append/remove at the end only",
    ..BASE
};

/// The table, in [`Algorithm::ALL`]'s order (checked at compile time below).
const FACTS: &[AlgorithmFacts] = &[
    AlgorithmFacts {
        algorithm: Algorithm::Modulo,
        name: "modulo",
        type_name: "Modulo",
        removes_any_node: false,
        consistent: false,
        balanced_in_expectation: true,
        memory: "none",
        per_key: "O(1)",
        moves: "almost all keys",
        use_when: "the node count never changes",
        ..BASE
    },
    AlgorithmFacts {
        algorithm: Algorithm::Ring,
        name: "ring",
        type_name: "Ring",
        params: &[Param::Vnodes],
        weights: true,
        exact_arcs: true,
        weight_changes_move_only_the_node: true,
        memory: "12 B × V × N",
        per_key: "O(log VN)",
        use_when: "the general default (V ≈ 100-200)",
        ..BASE
    },
    AlgorithmFacts {
        algorithm: Algorithm::Ketama,
        name: "ketama",
        type_name: "Ketama",
        default_hasher: KeyHasher::Md5,
        fixed_hashers: &[KeyHasher::Md5, KeyHasher::Fnv1a32, KeyHasher::Oaat],
        params: &[Param::KetamaVariant],
        weights: true,
        exact_arcs: true,
        memory: "8 B × 160 × N",
        per_key: "O(log 160N) + MD5",
        use_when: "talking to memcached clients",
        ..BASE
    },
    AlgorithmFacts {
        algorithm: Algorithm::Jump,
        name: "jump",
        type_name: "Jump",
        per_key: "O(log N)",
        use_when: "numbered shards that only grow (see `Failover` for removals)",
        ..BUCKET_FN
    },
    AlgorithmFacts {
        algorithm: Algorithm::Rendezvous,
        name: "rendezvous",
        type_name: "Rendezvous",
        weights: true,
        balanced_in_expectation: true,
        weight_changes_move_only_the_node: true,
        memory: "12 B × N (20 weighted)",
        per_key: "O(N)",
        moves: "1/N",
        use_when: "few nodes, weights, simplicity",
        ..BASE
    },
    AlgorithmFacts {
        algorithm: Algorithm::Slots,
        name: "slots",
        type_name: "RedisSlots",
        default_hasher: KeyHasher::Crc16,
        fixed_hashers: &[KeyHasher::Crc16],
        consistent: false,
        preference_list: false,
        exact_arcs: true,
        memory: "16384 slots",
        per_key: "O(1) + CRC16",
        moves: "the slots you move",
        use_when: "Redis Cluster",
        ..BASE
    },
    AlgorithmFacts {
        algorithm: Algorithm::Maglev,
        name: "maglev",
        type_name: "Maglev",
        params: &[Param::TableSize],
        exact_arcs: true,
        weights: true,
        memory: "4 B × M (M = 65537)",
        per_key: "O(1)",
        moves: "more than 1/N (the report measures it)",
        use_when: "L4/L7 load balancers, Envoy compatibility",
        ..BASE
    },
    AlgorithmFacts {
        algorithm: Algorithm::MultiProbe,
        name: "multiprobe",
        type_name: "MultiProbe",
        params: &[Param::Probes],
        memory: "12 B × N",
        per_key: "O(k log N), k = 21",
        moves: "1/N",
        use_when: "big node counts, little memory, ≈ 1.05 peak-to-mean",
        ..BASE
    },
    AlgorithmFacts {
        algorithm: Algorithm::Memento,
        name: "memento",
        type_name: "Memento",
        balanced_in_expectation: true,
        memory: "12 B per removed bucket",
        per_key: "O(log N)",
        moves: "1/N",
        use_when: "jump's speed with arbitrary removal",
        ..BASE
    },
    AlgorithmFacts {
        algorithm: Algorithm::Anchor,
        name: "anchor",
        type_name: "Anchor",
        params: &[Param::Capacity],
        balanced_in_expectation: true,
        memory: "24 B × capacity",
        per_key: "O(1 + ln(a/w))",
        moves: "1/N",
        use_when: "arbitrary removal, capacity known up front",
        ..BASE
    },
    AlgorithmFacts {
        algorithm: Algorithm::JumpBack,
        name: "jumpback",
        type_name: "JumpBack",
        params: &[Param::Generator],
        per_key: "expected O(1)",
        use_when: "numbered shards that only grow: jump at constant cost (hash4j-exact)",
        ..BUCKET_FN
    },
    AlgorithmFacts {
        algorithm: Algorithm::FlipHash,
        name: "fliphash",
        type_name: "FlipHash",
        per_key: "O(1)",
        use_when: "agreeing with the `fliphash` crate",
        ..BUCKET_FN
    },
    AlgorithmFacts {
        algorithm: Algorithm::Power,
        name: "power",
        type_name: "PowerCh",
        per_key: "O(1)",
        use_when: "agreeing with the `power-consistent-hash` crate",
        ..BUCKET_FN
    },
    AlgorithmFacts {
        algorithm: Algorithm::Binomial,
        name: "binomial",
        type_name: "BinomialHash",
        per_key: "O(1)",
        use_when: "agreeing with SUPSI's BinomialHash",
        ..BUCKET_FN
    },
    AlgorithmFacts {
        algorithm: Algorithm::JumpBackAnchor,
        name: "jumpback-anchor",
        type_name: "JumpBackAnchor",
        balanced_in_expectation: true,
        memory: "12 B × ids",
        per_key: "O(1) + a draw per removed id met",
        moves: "1/N",
        use_when: "constant-time arbitrary removal, no fixed capacity (hash4j-exact)",
        ..BASE
    },
    AlgorithmFacts {
        algorithm: Algorithm::Nginx,
        name: "nginx",
        type_name: "Nginx",
        default_hasher: KeyHasher::Crc32,
        fixed_hashers: &[KeyHasher::Crc32],
        exact_arcs: true,
        weights: true,
        weight_changes_move_only_the_node: true,
        memory: "8 B × 160 × Σweights",
        per_key: "O(log points) + CRC32",
        use_when: "agreeing with nginx `hash $key consistent`",
        ..BASE
    },
    AlgorithmFacts {
        algorithm: Algorithm::Haproxy,
        name: "haproxy",
        type_name: "Haproxy",
        default_hasher: KeyHasher::SdbmAvalanche,
        fixed_hashers: &[KeyHasher::SdbmAvalanche, KeyHasher::Sdbm],
        params: &[Param::UriWhole],
        exact_arcs: true,
        weights: true,
        weight_changes_move_only_the_node: true,
        memory: "8 B × 16 × Σweights",
        per_key: "O(log points)",
        use_when: "agreeing with HAProxy `hash-type consistent`",
        ..BASE
    },
    AlgorithmFacts {
        algorithm: Algorithm::EnvoyRing,
        name: "envoy-ring",
        type_name: "EnvoyRing",
        default_hasher: KeyHasher::Xxh64 { seed: 0 },
        fixed_hashers: &[KeyHasher::Xxh64 { seed: 0 }, KeyHasher::Murmur64aEnvoy],
        params: &[Param::RingSize],
        exact_arcs: true,
        weights: true,
        memory: "12 B × ring size (1024 to 8M)",
        per_key: "O(log ring size)",
        use_when: "agreeing with Envoy's ring hash load balancer",
        ..BASE
    },
    AlgorithmFacts {
        algorithm: Algorithm::Kafka,
        name: "kafka",
        type_name: "Kafka",
        default_hasher: KeyHasher::Murmur2Kafka,
        fixed_hashers: &[KeyHasher::Murmur2Kafka],
        removes_any_node: false,
        consistent: false,
        preference_list: false,
        balanced_in_expectation: true,
        memory: "none",
        per_key: "O(1) + murmur2",
        moves: "almost all keys",
        use_when: "agreeing with Kafka's keyed partitioner",
        ..BASE
    },
    AlgorithmFacts {
        algorithm: Algorithm::TokenRing,
        name: "token-ring",
        type_name: "TokenRing",
        default_hasher: KeyHasher::CassandraMurmur3,
        fixed_hashers: &[KeyHasher::CassandraMurmur3],
        params: &[Param::TokensPerNode],
        weights: true,
        exact_arcs: true,
        needs_tokens: true,
        weight_changes_move_only_the_node: true,
        memory: "12 B per token (16 per node by default)",
        per_key: "O(log T) + Murmur3",
        moves: "1/N (the allocator moves only the changed node's keys)",
        use_when: "a few chosen tokens instead of many random vnodes; Cassandra token-aware routing",
        ..BASE
    },
    AlgorithmFacts {
        algorithm: Algorithm::Crush,
        name: "crush",
        type_name: "crush::CrushRouter",
        weights: true,
        from_node_list: false,
        memory: "the map: buckets and items",
        per_key: "O(depth × bucket size) + rjenkins",
        moves: "near the changed item's share (the report measures adding a host)",
        use_when: "agreeing with Ceph (`--crush-map`, `hashroute pg`)",
        ..BASE
    },
];

// Every row sits at its variant's index, so `facts` is an array read; `ALL` is the rows built
// from a node list, in order, and CRUSH (built from a map) comes last.
const _: () = {
    assert!(FACTS.len() == ALL_ARRAY.len() + 1);
    let mut i = 0;
    while i < FACTS.len() {
        assert!(FACTS[i].algorithm as usize == i);
        assert!(FACTS[i].from_node_list == (i < ALL_ARRAY.len()));
        i += 1;
    }
};

const ALL_ARRAY: [Algorithm; 20] = [
    Algorithm::Modulo,
    Algorithm::Ring,
    Algorithm::Ketama,
    Algorithm::Jump,
    Algorithm::Rendezvous,
    Algorithm::Slots,
    Algorithm::Maglev,
    Algorithm::MultiProbe,
    Algorithm::Memento,
    Algorithm::Anchor,
    Algorithm::JumpBack,
    Algorithm::FlipHash,
    Algorithm::Power,
    Algorithm::Binomial,
    Algorithm::JumpBackAnchor,
    Algorithm::Nginx,
    Algorithm::Haproxy,
    Algorithm::EnvoyRing,
    Algorithm::Kafka,
    Algorithm::TokenRing,
];

impl Algorithm {
    /// Every algorithm a [`RouterSpec`](crate::RouterSpec) builds from a node list, in the
    /// order the documentation lists them (CRUSH, built from a map, is not among them).
    pub const ALL: &'static [Algorithm] = &ALL_ARRAY;

    /// The algorithm's row in the one table of facts. O(1).
    pub fn facts(self) -> &'static AlgorithmFacts {
        &FACTS[self as usize]
    }

    /// The algorithm's name as the CLI's `--algo` and configuration files spell it; equal to
    /// [`Router::algorithm`](crate::Router::algorithm) of the router it builds.
    pub fn name(self) -> &'static str {
        self.facts().name
    }

    /// The algorithm named `name` (exact, lowercase, as in [`Algorithm::name`]).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming the accepted names.
    pub fn from_name(name: &str) -> Result<Algorithm> {
        Algorithm::ALL.iter().copied().find(|a| a.name() == name).ok_or_else(|| Error::InvalidParameter {
            name: "algorithm",
            reason: format!("{name:?} (expected {})", names_list(Algorithm::ALL.iter().map(|a| a.name()))),
        })
    }

    /// Whether the algorithm takes `param` (its row's [`params`](AlgorithmFacts::params); the
    /// hasher when [`takes_hasher`](Algorithm::takes_hasher)).
    pub fn takes(self, param: Param) -> bool {
        match param {
            Param::Hasher => self.takes_hasher(),
            _ => self.facts().params.contains(&param),
        }
    }

    /// The hasher the algorithm uses when none is configured: MD5 for Ketama, CRC16 for Redis
    /// slots (both fixed by the protocols they match), xxh3 with seed 0 otherwise.
    pub fn default_hasher(self) -> KeyHasher {
        self.facts().default_hasher
    }

    /// Whether the algorithm takes a virtual-node count (only the ring does: Ketama's 160
    /// points per server are part of its definition).
    pub fn takes_vnodes(self) -> bool {
        self.takes(Param::Vnodes)
    }

    /// Whether the algorithm takes a lookup-table size (only Maglev).
    pub fn takes_table_size(self) -> bool {
        self.takes(Param::TableSize)
    }

    /// Whether the algorithm takes a probe count (only multi-probe).
    pub fn takes_probes(self) -> bool {
        self.takes(Param::Probes)
    }

    /// Whether the algorithm takes a bucket capacity (only AnchorHash).
    pub fn takes_capacity(self) -> bool {
        self.takes(Param::Capacity)
    }

    /// Whether the algorithm takes a random generator (only JumpBackHash).
    pub fn takes_generator(self) -> bool {
        self.takes(Param::Generator)
    }

    /// Whether the algorithm maps a 64-bit hash onto buckets `0..n` with no state but `n`
    /// (jump and its constant-time successors), so `--buckets N` can route without node names.
    pub fn is_stateless_bucket_hash(self) -> bool {
        self.facts().stateless_bucket_hash
    }

    /// Whether the key hasher can be chosen freely (not where the system the algorithm agrees
    /// with fixes it: see [`fixed_hashers`](Algorithm::fixed_hashers)).
    pub fn takes_hasher(self) -> bool {
        self.facts().fixed_hashers.is_empty() && self.facts().from_node_list
    }

    /// Whether the routes come from the nodes' ring tokens ([`Node::with_tokens`](crate::Node::with_tokens),
    /// a cluster configuration's `tokens`, a tokens file) rather than from the names: only the
    /// token ring. Nodes without tokens get them from the allocator when the configuration
    /// sets [`RouterSpec::tokens_per_node`](crate::RouterSpec::tokens_per_node), and are refused otherwise.
    pub fn needs_tokens(self) -> bool {
        self.facts().needs_tokens
    }

    /// The hashers an algorithm accepts when [`takes_hasher`](Algorithm::takes_hasher) is
    /// false (its default first): the proxies' own choices (HAProxy `sdbm`, Envoy
    /// `MURMUR_HASH_2`). For Ketama, the union over its variants; each variant accepts its own
    /// subset ([`KetamaVariant::hashers`](crate::KetamaVariant::hashers)). Empty when any
    /// hasher goes.
    pub fn fixed_hashers(self) -> &'static [KeyHasher] {
        self.facts().fixed_hashers
    }

    /// Whether a membership change moves about the minimum (1/N of the keys). False for modulo
    /// (almost every key moves) and for Redis slots rebuilt from a node list (a fresh
    /// `redis-cli` layout shifts every range; a live cluster moves slots explicitly instead).
    pub fn is_consistent(self) -> bool {
        self.facts().consistent
    }

    /// Whether any node can be removed with only its keys moving. False for jump and its
    /// constant-time successors (JumpBack, FlipHash, power, binomial), which can only drop their
    /// last bucket, and for modulo, where a removal moves almost everything. JumpBackAnchor can.
    pub fn removes_any_node(self) -> bool {
        self.facts().removes_any_node
    }

    /// Whether node weights change the share of keys (ring, Ketama, rendezvous, Maglev, the
    /// proxies' rings and the token ring).
    pub fn supports_weights(self) -> bool {
        self.facts().weights
    }

    /// Whether every node's expected share is exactly its fair share for uniformly random keys,
    /// whatever the node names (modulo, jump, Memento, Anchor, rendezvous): their measured
    /// imbalance is key sampling alone. False for rings, Ketama, Maglev and multi-probe, whose
    /// shares depend on where the names hash.
    pub fn balanced_in_expectation(self) -> bool {
        self.facts().balanced_in_expectation
    }

    /// Whether the router has a preference list, so replicas and failover work (all but Redis
    /// slots and Kafka, where the cluster, not the client, decides failover).
    pub fn has_preference_list(self) -> bool {
        self.facts().preference_list
    }

    /// The crate docs' table of algorithms (Markdown), generated from the facts: the crate
    /// docs include `src/algorithms.md`, and a test checks that it equals this.
    pub fn markdown_table() -> String {
        let yes = |b: bool| if b { "yes" } else { "no" };
        let weights = |f: &AlgorithmFacts| match (f.weights, f.weight_changes_move_only_the_node) {
            (false, _) => "no",
            (true, true) => "yes; a change moves only that node's keys",
            (true, false) => "yes; a change moves others' keys too",
        };
        let mut out = String::from(
            "| algorithm | memory | per key | moves on resize | weights | remove any node | use when |\n\
             |---|---|---|---|---|---|---|\n",
        );
        for f in FACTS {
            out.push_str(&format!(
                "| [`{}`] (`{}`) | {} | {} | {} | {} | {} | {} |\n",
                f.type_name,
                f.name,
                f.memory,
                f.per_key,
                f.moves,
                weights(f),
                yes(f.removes_any_node),
                f.use_when
            ));
        }
        out
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Algorithm {
    type Err = Error;
    fn from_str(s: &str) -> Result<Algorithm> {
        Algorithm::from_name(s)
    }
}

/// "a, b or c": how every error lists the accepted names.
pub(crate) fn names_list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => (*last).to_owned(),
        None => String::new(),
    }
}

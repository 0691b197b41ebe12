//! Node identity: [`NodeId`], [`Node`] and the validated [`NodeSet`].
//!
//! Names, weights and labels live here and only here. Routers map keys to dense [`NodeId`]s
//! (indices into the set, in the order nodes were given) and never touch strings on the hot
//! path; [`NodeSet::name`] turns an id back into a name.

use std::collections::{BTreeMap, HashMap};

use crate::error::{Error, Result};

/// A node's dense index in its [`NodeSet`] (the order the nodes were given in).
///
/// Ids are only meaningful for the router (or node set) that produced them: a membership change
/// builds a new set whose ids may differ, so compare nodes across routers by name.
#[derive(Copy, Clone, Default, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct NodeId(u32);

impl NodeId {
    /// The id of the node at `index` in its set.
    #[inline]
    pub const fn from_index(index: u32) -> NodeId {
        NodeId(index)
    }

    /// The node's index in its set.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The node's index as `u32` (how routers store owners).
    #[inline]
    pub const fn as_u32(self) -> u32 {
        self.0
    }
}

/// One node: a unique name, a positive finite weight (default 1.0), optional labels (`zone`,
/// `rack`, `host`, … used by topology-aware placement) and optional ring tokens (signed 64-bit,
/// Cassandra's `Murmur3Partitioner` space, used by [`TokenRing`](crate::TokenRing) and ignored by
/// every other router).
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    name: String,
    weight: f64,
    labels: BTreeMap<String, String>,
    /// Sorted ascending (one canonical value per token list); a boxed slice, so a node without
    /// tokens costs no allocation.
    tokens: Box<[i64]>,
}

impl Node {
    /// A node of weight 1.0 and no labels.
    pub fn new(name: impl Into<String>) -> Node {
        Node { name: name.into(), weight: 1.0, labels: BTreeMap::new(), tokens: Box::default() }
    }

    /// Sets the weight (validated when the [`NodeSet`] is built).
    pub fn with_weight(mut self, weight: f64) -> Node {
        self.weight = weight;
        self
    }

    /// Adds (or replaces) a label.
    pub fn with_label(mut self, key: impl Into<String>, value: impl Into<String>) -> Node {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// Sets the node's ring tokens (replacing any given before), stored sorted ascending so that
    /// two nodes with the same tokens compare equal whatever order they were given in. Only
    /// [`TokenRing`](crate::TokenRing) reads them; it refuses a token given twice (by one node
    /// or two) when it is built. O(T log T) for T tokens.
    pub fn with_tokens(mut self, tokens: impl IntoIterator<Item = i64>) -> Node {
        let mut tokens: Vec<i64> = tokens.into_iter().collect();
        tokens.sort_unstable();
        self.tokens = tokens.into_boxed_slice();
        self
    }

    /// The node's ring tokens, sorted ascending (empty unless set with [`Node::with_tokens`]).
    pub fn tokens(&self) -> &[i64] {
        &self.tokens
    }

    /// The node's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The node's weight.
    pub fn weight(&self) -> f64 {
        self.weight
    }

    /// The node's labels, sorted by key.
    pub fn labels(&self) -> &BTreeMap<String, String> {
        &self.labels
    }

    /// The value of one label, if set.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels.get(key).map(String::as_str)
    }

    fn validate(&self) -> Result<()> {
        if self.name.is_empty() {
            return Err(Error::EmptyNodeName);
        }
        if !(self.weight.is_finite() && self.weight > 0.0) {
            return Err(Error::InvalidWeight { node: self.name.clone(), weight: self.weight });
        }
        Ok(())
    }
}

/// A validated, non-empty list of nodes with unique names and valid weights.
///
/// Building one is O(n) (a hash map of names); lookups by id are O(1), by name O(1) expected.
/// Memory: the names, labels, and one hash-map entry per node ([`NodeSet::memory_bytes`]).
#[derive(Clone, Debug)]
pub struct NodeSet {
    nodes: Vec<Node>,
    by_name: HashMap<String, NodeId>,
    all_unit_weight: bool,
}

impl PartialEq for NodeSet {
    fn eq(&self, other: &NodeSet) -> bool {
        self.nodes == other.nodes
    }
}

/// The largest number of nodes a set may hold (ids are `u32`).
pub(crate) const MAX_NODES: usize = 1 << 24;

impl NodeSet {
    /// The largest node count a set accepts (2^24).
    pub const MAX_NODES: usize = MAX_NODES;

    /// Validates `nodes`: at least one, at most [`NodeSet::MAX_NODES`], non-empty unique names, weights
    /// finite and greater than zero.
    ///
    /// # Errors
    /// [`Error::NoNodes`], [`Error::EmptyNodeName`], [`Error::DuplicateNode`],
    /// [`Error::InvalidWeight`], or [`Error::InvalidParameter`] past [`NodeSet::MAX_NODES`] or
    /// when the weights sum past `f64::MAX`.
    pub fn new(nodes: impl IntoIterator<Item = Node>) -> Result<NodeSet> {
        let nodes: Vec<Node> = nodes.into_iter().collect();
        if nodes.is_empty() {
            return Err(Error::NoNodes);
        }
        if nodes.len() > MAX_NODES {
            return Err(Error::InvalidParameter {
                name: "node count",
                reason: format!("{} nodes exceed the cap of {MAX_NODES}", nodes.len()),
            });
        }
        let mut by_name = HashMap::with_capacity(nodes.len());
        for (i, node) in nodes.iter().enumerate() {
            node.validate()?;
            if by_name.insert(node.name.clone(), NodeId(i as u32)).is_some() {
                return Err(Error::DuplicateNode { name: node.name.clone() });
            }
        }
        // Routers divide by the total weight: an infinite sum would make every share 0 and
        // silently give the lightest node as many keys as the heaviest.
        if !nodes.iter().map(|n| n.weight).sum::<f64>().is_finite() {
            return Err(Error::InvalidParameter {
                name: "weights",
                reason: format!("they sum past {:e}, the largest f64; scale them down", f64::MAX),
            });
        }
        let all_unit_weight = nodes.iter().all(|n| n.weight == 1.0);
        Ok(NodeSet { nodes, by_name, all_unit_weight })
    }

    /// A set of weight-1 nodes from names.
    ///
    /// # Errors
    /// As [`NodeSet::new`].
    pub fn from_names<I>(names: I) -> Result<NodeSet>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        NodeSet::new(names.into_iter().map(|n| Node::new(n.as_ref())))
    }

    /// Parses libketama's server-file format: one node per line, `NAME [WEIGHT]` separated by
    /// whitespace; `#` starts a comment; blank lines are ignored. A leading byte-order mark
    /// (Windows editors write one) is skipped, never made part of the first name; one anywhere
    /// else in a name is refused (a name must read back the same from a written file).
    ///
    /// # Errors
    /// [`Error::Malformed`] naming the line for a bad weight or extra fields, and the
    /// [`NodeSet::new`] errors.
    pub fn parse(text: &str) -> Result<NodeSet> {
        let text = strip_bom(text);
        let mut nodes = Vec::new();
        for (lineno, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let mut fields = line.split_whitespace();
            let name = fields.next().unwrap_or_default();
            if name.contains(BOM) {
                return Err(Error::Malformed(format!(
                    "line {}: a byte-order mark (U+FEFF) inside the name {name:?}",
                    lineno + 1
                )));
            }
            let mut node = Node::new(name);
            if let Some(w) = fields.next() {
                let weight: f64 = w
                    .parse()
                    .map_err(|_| Error::Malformed(format!("line {}: weight {w:?} is not a number", lineno + 1)))?;
                node = node.with_weight(weight);
            }
            if let Some(extra) = fields.next() {
                return Err(Error::Malformed(format!(
                    "line {}: unexpected field {extra:?} (expected `NAME [WEIGHT]`)",
                    lineno + 1
                )));
            }
            nodes.push(node);
        }
        NodeSet::new(nodes)
    }

    /// Number of nodes (at least 1).
    #[inline]
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Always `false`: a `NodeSet` is never empty. Present for API symmetry with collections.
    #[inline]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The node behind `id`.
    ///
    /// # Panics
    /// If `id` does not belong to this set (index out of range).
    #[inline]
    pub fn get(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    /// The name of node `id`.
    ///
    /// # Panics
    /// If `id` does not belong to this set.
    #[inline]
    pub fn name(&self, id: NodeId) -> &str {
        &self.nodes[id.index()].name
    }

    /// The weight of node `id`.
    ///
    /// # Panics
    /// If `id` does not belong to this set.
    #[inline]
    pub fn weight(&self, id: NodeId) -> f64 {
        self.nodes[id.index()].weight
    }

    /// Whether every node has weight 1.0 (routers take their unweighted fast path).
    #[inline]
    pub fn all_unit_weight(&self) -> bool {
        self.all_unit_weight
    }

    /// Sum of all weights.
    pub fn total_weight(&self) -> f64 {
        self.nodes.iter().map(|n| n.weight).sum()
    }

    /// The id of the node named `name`, if any. O(1) expected.
    pub fn id_of(&self, name: &str) -> Option<NodeId> {
        self.by_name.get(name).copied()
    }

    /// Like [`NodeSet::id_of`], but an [`Error::UnknownNode`] when absent.
    ///
    /// # Errors
    /// [`Error::UnknownNode`].
    pub fn require(&self, name: &str) -> Result<NodeId> {
        self.id_of(name).ok_or_else(|| Error::UnknownNode { name: name.to_owned() })
    }

    /// Node ids sorted by name (byte order): the order in which the order-independent
    /// routers break ties and fingerprints list names. O(N log N).
    pub fn ids_by_name(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = (0..self.len() as u32).collect();
        self.sort_by_name(&mut ids);
        ids
    }

    /// Sorts `ids` (indices of this set) by their nodes' names.
    ///
    /// # Panics
    /// If an id is not an index of this set.
    pub fn sort_by_name(&self, ids: &mut [u32]) {
        ids.sort_unstable_by(|&a, &b| self.name(NodeId::from_index(a)).cmp(self.name(NodeId::from_index(b))));
    }

    /// Ids and nodes in id order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (NodeId, &Node)> + '_ {
        self.nodes.iter().enumerate().map(|(i, n)| (NodeId(i as u32), n))
    }

    /// The nodes in id order.
    pub fn as_slice(&self) -> &[Node] {
        &self.nodes
    }

    /// A new set with `node` appended (it gets id `len()`).
    ///
    /// # Errors
    /// As [`NodeSet::new`] (duplicate name, bad weight).
    pub fn with_node(&self, node: Node) -> Result<NodeSet> {
        NodeSet::new(self.nodes.iter().cloned().chain(std::iter::once(node)))
    }

    /// A new set without the node named `name`. Ids after it shift down by one.
    ///
    /// # Errors
    /// [`Error::UnknownNode`], or [`Error::NoNodes`] when it was the last node.
    pub fn without_node(&self, name: &str) -> Result<NodeSet> {
        let id = self.require(name)?;
        NodeSet::new(self.nodes.iter().enumerate().filter(|(i, _)| *i != id.index()).map(|(_, n)| n.clone()))
    }

    /// A new set with node `name`'s weight changed.
    ///
    /// # Errors
    /// [`Error::UnknownNode`], [`Error::InvalidWeight`].
    pub fn with_weight(&self, name: &str, weight: f64) -> Result<NodeSet> {
        let id = self.require(name)?;
        let mut nodes = self.nodes.clone();
        nodes[id.index()].weight = weight;
        NodeSet::new(nodes)
    }

    /// Heap bytes held: names, labels, tokens, the node vector and the name index (estimated from its
    /// capacity: `HashMap` does not expose its exact allocation).
    pub fn memory_bytes(&self) -> usize {
        let strings: usize = self
            .nodes
            .iter()
            .map(|n| {
                n.name.capacity()
                    + n.labels.iter().map(|(k, v)| k.capacity() + v.capacity() + 64).sum::<usize>()
                    + std::mem::size_of_val(&*n.tokens)
            })
            .sum();
        let names_in_index: usize = self.by_name.keys().map(String::capacity).sum();
        let map = self.by_name.capacity() * (std::mem::size_of::<(String, NodeId)>() + 1);
        std::mem::size_of::<NodeSet>()
            + self.nodes.capacity() * std::mem::size_of::<Node>()
            + strings
            + names_in_index
            + map
    }
}

/// Which nodes a preference walk has already produced. Inline for up to 128 nodes, a heap
/// bitset beyond (one bit per node).
pub(crate) enum Visited {
    Inline(u128),
    Heap(Vec<u64>),
}

impl Visited {
    pub(crate) fn new(node_count: usize) -> Visited {
        if node_count <= 128 {
            Visited::Inline(0)
        } else {
            Visited::Heap(vec![0; node_count.div_ceil(64)])
        }
    }

    /// Marks `id`; returns `true` when it was not marked before.
    #[inline]
    pub(crate) fn insert(&mut self, id: NodeId) -> bool {
        let i = id.index();
        match self {
            Visited::Inline(bits) => {
                let m = 1u128 << i;
                let fresh = *bits & m == 0;
                *bits |= m;
                fresh
            }
            Visited::Heap(words) => {
                let (w, m) = (i / 64, 1u64 << (i % 64));
                let fresh = words[w] & m == 0;
                words[w] |= m;
                fresh
            }
        }
    }
}

/// `text` without a leading UTF-8 byte-order mark: every file reader's first step, so that a
/// file saved by an editor that writes one routes like the same file without it.
pub(crate) fn strip_bom(text: &str) -> &str {
    text.strip_prefix(BOM).unwrap_or(text)
}

/// The byte-order mark, U+FEFF: skipped at the start of a file, refused inside a name.
pub(crate) const BOM: char = '\u{feff}';

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_sets() {
        assert_eq!(NodeSet::from_names(Vec::<String>::new()), Err(Error::NoNodes));
        assert_eq!(NodeSet::from_names(["a", "b", "a"]), Err(Error::DuplicateNode { name: "a".into() }));
        assert_eq!(NodeSet::from_names(["a", ""]), Err(Error::EmptyNodeName));
        for w in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let err = NodeSet::new([Node::new("a").with_weight(w)]).unwrap_err();
            assert!(matches!(err, Error::InvalidWeight { .. }), "{w}: {err}");
        }
    }

    /// Regression (tests/hostile_cli.rs): weights that each fit in f64 but sum past it made
    /// every router's share 0, so a weight-1 node took as many keys as a 1e308 one.
    #[test]
    fn rejects_weights_summing_past_f64_max() {
        let nodes = [Node::new("a").with_weight(1e308), Node::new("b").with_weight(1e308), Node::new("c")];
        let err = NodeSet::new(nodes).unwrap_err();
        assert!(matches!(err, Error::InvalidParameter { name: "weights", .. }), "{err}");
        assert!(NodeSet::new([Node::new("a").with_weight(1e308), Node::new("c").with_weight(1e-300)]).is_ok());
        let set = NodeSet::new([Node::new("a").with_weight(1.5e308)]).unwrap();
        assert!(set.with_node(Node::new("b").with_weight(1e308)).is_err());
        assert!(set.with_node(Node::new("b").with_weight(1e-300)).is_ok());
    }

    #[test]
    fn parses_server_files() {
        let set = NodeSet::parse("# servers\n10.0.1.1:11211\t600\n\n10.0.1.2:11211 300 # half\nx\n").unwrap();
        assert_eq!(set.len(), 3);
        assert_eq!(set.weight(NodeId(0)), 600.0);
        assert_eq!(set.name(NodeId(1)), "10.0.1.2:11211");
        assert_eq!(set.weight(NodeId(2)), 1.0);
        assert!(matches!(NodeSet::parse("a 1 2"), Err(Error::Malformed(_))));
        assert!(matches!(NodeSet::parse("a x"), Err(Error::Malformed(_))));
        assert!(matches!(NodeSet::parse("a 0"), Err(Error::InvalidWeight { .. })));
        assert_eq!(NodeSet::parse("# nothing\n"), Err(Error::NoNodes));
    }

    #[test]
    fn membership_changes() {
        let set = NodeSet::from_names(["a", "b", "c"]).unwrap();
        let fewer = set.without_node("b").unwrap();
        assert_eq!(fewer.id_of("c"), Some(NodeId(1)));
        assert!(set.with_node(Node::new("a")).is_err());
        assert_eq!(set.with_node(Node::new("d")).unwrap().id_of("d"), Some(NodeId(3)));
        assert_eq!(NodeSet::from_names(["a"]).unwrap().without_node("a"), Err(Error::NoNodes));
        assert!(matches!(set.without_node("zz"), Err(Error::UnknownNode { .. })));
    }

    #[test]
    fn parse_skips_a_byte_order_mark() {
        let with = NodeSet::parse("\u{feff}a 2\nb\n").unwrap();
        let without = NodeSet::parse("a 2\nb\n").unwrap();
        assert_eq!(with.name(NodeId::from_index(0)), "a");
        assert_eq!(with.as_slice(), without.as_slice());
        let inside = NodeSet::parse("a\n\u{feff}b\n").unwrap_err().to_string();
        assert!(inside.contains("line 2") && inside.contains("U+FEFF"), "{inside}");
    }
}

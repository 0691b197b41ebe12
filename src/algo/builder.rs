//! One builder for every algorithm.
//!
//! `X::builder()` returns a [`Builder<X>`]; the node methods are shared, and each algorithm's
//! file adds the options it takes (`vnodes` for [`Ring`](crate::Ring), `table_size` for
//! [`Maglev`](crate::Maglev), …) and its `build` in an `impl Builder<X>` block, so an option an
//! algorithm does not take does not exist for it. The builder holds that router's options and
//! no other's ([`Configure::Options`]).

use crate::error::Result;
use crate::node::{Node, NodeSet};

mod sealed {
    /// The routers a [`Builder`](crate::Builder) builds, each with its own options type
    /// (sealed: the set of routers is the crate's).
    pub trait Configure {
        /// The options this router's builder holds, at their defaults until set.
        type Options: Clone + std::fmt::Debug + Default;
    }
}
pub(crate) use sealed::Configure;

/// Configures a router: `Ring::builder().vnodes(160).nodes(["a", "b"]).build()`.
///
/// Nodes come from [`nodes`](Builder::nodes) (weight-1 names), [`node`](Builder::node) (with
/// weight and labels), [`weighted_nodes`](Builder::weighted_nodes), or an already validated
/// [`node_set`](Builder::node_set). `build` validates everything and returns a typed
/// [`Error`](crate::Error), never panics. Each router's page lists the options it takes.
///
/// ```
/// use hashroute::{KeyHasher, Maglev, Memento, Node, Ring, Router};
/// let ring = Ring::builder().vnodes(100).hasher(KeyHasher::Xxh3 { seed: 7 }).nodes(["a", "b", "c"]).build()?;
/// let maglev = Maglev::builder().table_size(4099).weighted_nodes([("a", 1.0), ("b", 2.0)]).build()?;
/// let memento = Memento::from_names(["a", "b", "c", "d"])?.without_node("b")?;
/// let bigger = ring.with_node(Node::new("d"))?;
/// assert_eq!(bigger.node_count(), 4);
/// assert_eq!(maglev.with_weight("a", 2.0)?.node_count(), 2);
/// assert_eq!(memento.with_node(Node::new("b"))?.node_count(), 4); // restores b's keys exactly
/// # Ok::<(), hashroute::Error>(())
/// ```
#[derive(Clone, Debug)]
#[must_use]
pub struct Builder<R: Configure> {
    nodes: Vec<Node>,
    set: Option<NodeSet>,
    /// The router's own options (its `impl Builder<X>` block sets them).
    pub(crate) options: R::Options,
}

impl<R: Configure> Default for Builder<R> {
    fn default() -> Builder<R> {
        Builder { nodes: Vec::new(), set: None, options: R::Options::default() }
    }
}

impl<R: Configure> Builder<R> {
    /// Adds weight-1 nodes by name.
    pub fn nodes<I>(mut self, names: I) -> Builder<R>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        self.nodes.extend(names.into_iter().map(|n| Node::new(n.as_ref())));
        self
    }

    /// Adds one node (with its weight and labels).
    pub fn node(mut self, node: Node) -> Builder<R> {
        self.nodes.push(node);
        self
    }

    /// Adds `(name, weight)` pairs.
    pub fn weighted_nodes<I, S>(mut self, nodes: I) -> Builder<R>
    where
        I: IntoIterator<Item = (S, f64)>,
        S: AsRef<str>,
    {
        self.nodes.extend(nodes.into_iter().map(|(n, w)| Node::new(n.as_ref()).with_weight(w)));
        self
    }

    /// Uses an already validated node set (replacing any nodes added so far); nodes added
    /// after it are appended to it.
    pub fn node_set(mut self, set: NodeSet) -> Builder<R> {
        self.set = Some(set);
        self.nodes.clear();
        self
    }

    /// The node set: the one given plus the nodes added after it, validated ([`NodeSet::new`]
    /// for the added ones).
    pub(crate) fn take_nodes(&mut self) -> Result<NodeSet> {
        let added = std::mem::take(&mut self.nodes);
        match self.set.take() {
            Some(set) if added.is_empty() => Ok(set),
            Some(set) => NodeSet::new(set.iter().map(|(_, n)| n.clone()).chain(added)),
            None => NodeSet::new(added),
        }
    }
}

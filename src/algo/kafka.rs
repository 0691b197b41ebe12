//! Kafka's default partitioner for keyed records (`BuiltInPartitioner.partitionForKey`):
//! `toPositive(murmur2(key)) % partitions`, `toPositive` clearing the sign bit.
//!
//! Exact on `../shared/vectors/kafka_murmur2*.csv` (apache/kafka 4.0.0-SNAPSHOT; librdkafka's
//! `murmur2_random` partitioner and kafka-python agree). A null key (sticky partitioning) has
//! no place here; the empty key is hashed like any other.

use crate::algo::builder::Configure;
use crate::algorithm::Algorithm;
use crate::error::Result;
use crate::hash::KeyHasher;
use crate::node::{NodeId, NodeSet};
use crate::router::Router;
use crate::Builder;

/// Kafka's keyed partitioner over a node set: node i is partition i (order matters), so the
/// CLI's `--partitions N` names them `0..N`.
///
/// - **Cost**: one 32-bit MurmurHash2 and a modulo; no memory beyond the node set.
/// - **Movement**: adding a partition moves almost every key (as in Kafka: it is a modulo);
///   no preference list (replicas live on brokers, not in the partitioner).
///
/// ```
/// use hashroute::{Kafka, Router};
/// let kafka = Kafka::partitions(12)?;
/// assert_eq!(kafka.node_name(kafka.route(b"key-0")), "1");
/// # Ok::<(), hashroute::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Kafka {
    nodes: NodeSet,
}

impl Kafka {
    /// A builder for this router (see [`Builder`]).
    pub fn builder() -> Builder<Kafka> {
        Builder::default()
    }

    /// A router over weight-1 nodes named `names`, with the default options.
    ///
    /// # Errors
    /// As [`NodeSet::from_names`](crate::NodeSet::from_names) and the builder's `build`.
    pub fn from_names<I>(names: I) -> Result<Kafka>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        Kafka::builder().nodes(names).build()
    }
}

/// The options of [`Builder<Kafka>`].
#[derive(Clone, Debug, Default)]
pub struct KafkaOptions {}

impl Configure for Kafka {
    type Options = KafkaOptions;
}

impl Builder<Kafka> {
    /// Builds the partitioner (O(1) beyond the node set). Weights are refused: Kafka's
    /// partitioner has none.
    ///
    /// # Errors
    /// The [`NodeSet::new`] errors; [`crate::Error::Unsupported`] for weighted nodes.
    pub fn build(mut self) -> Result<Kafka> {
        let nodes = self.take_nodes()?;
        if !nodes.all_unit_weight() {
            return Err(crate::Error::Unsupported { algorithm: "kafka", operation: "weighted nodes" });
        }
        Ok(Kafka { nodes })
    }
}

impl Kafka {
    /// A new partitioner with `node` appended as the last partition (moves almost every key,
    /// as adding a partition does in Kafka).
    ///
    /// # Errors
    /// As [`NodeSet::with_node`]; [`crate::Error::Unsupported`] for a weight other than 1.
    pub fn with_node(&self, node: crate::Node) -> Result<Kafka> {
        Kafka::builder().node_set(self.nodes.with_node(node)?).build()
    }

    /// A new partitioner without the node named `name` (the partitions after it shift down).
    ///
    /// # Errors
    /// [`crate::Error::UnknownNode`], [`crate::Error::NoNodes`] for the last node.
    pub fn without_node(&self, name: &str) -> Result<Kafka> {
        Ok(Kafka { nodes: self.nodes.without_node(name)? })
    }

    /// `n` partitions named `0..n`.
    ///
    /// # Errors
    /// [`crate::Error::NoNodes`] for 0; the [`NodeSet::new`] cap.
    pub fn partitions(n: u32) -> Result<Kafka> {
        Kafka::from_names((0..n).map(|i| i.to_string()))
    }

    /// Kafka's partition for `key` among `partitions`: `(murmur2(key) & 0x7fffffff) % partitions`.
    ///
    /// # Panics
    /// If `partitions` is 0.
    #[inline]
    pub fn partition(key: &[u8], partitions: u32) -> u32 {
        (KeyHasher::Murmur2Kafka.hash(key) as u32 & 0x7fff_ffff) % partitions
    }

    #[inline]
    fn route_key(&self, key: &[u8]) -> NodeId {
        NodeId::from_index(Kafka::partition(key, self.nodes.len() as u32))
    }

    fn heap_bytes(&self) -> usize {
        0
    }
}

impl Router for Kafka {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Kafka
    }
    fn nodes(&self) -> &NodeSet {
        &self.nodes
    }
    fn memory_bytes(&self) -> usize {
        crate::algo::memory_bytes::<Self>(self.heap_bytes(), &self.nodes)
    }
    #[inline]
    fn route(&self, key: &[u8]) -> NodeId {
        self.route_key(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Router;

    #[test]
    fn sign_bit_cleared_not_abs() {
        // "21" hashes to -973932308 as a Java int (UtilsTest.testMurmur2).
        assert_eq!(KeyHasher::Murmur2Kafka.hash(b"21") as u32 as i32, -973_932_308);
        assert_eq!(Kafka::partition(b"21", 1000), ((-973_932_308i32 as u32) & 0x7fff_ffff) % 1000);
        let k = Kafka::partitions(3).unwrap();
        assert_eq!(k.node_count(), 3);
        assert!(Kafka::partitions(0).is_err());
        assert!(k.replicas(b"x", 1).is_err(), "no preference list");
        let weighted = NodeSet::new([crate::Node::new("0").with_weight(2.0)]).unwrap();
        assert!(Kafka::builder().node_set(weighted).build().is_err());
    }
}

//! Membership changes: a ring over a new node set that reuses this ring's sorted points
//! instead of generating and sorting all of them again.

use super::build::{generate_sorted, point_counts};
use super::Ring;
use crate::error::Result;
use crate::node::{Node, NodeId, NodeSet};

/// Sorted points and their owners.
type Points = (Vec<u64>, Vec<u32>);

impl Ring {
    /// A ring over `new_nodes` (same hasher, vnodes, layout) reusing this ring's sorted points:
    /// nodes whose name and point count are unchanged keep their points; the others' points are
    /// generated, sorted and merged in. Identical to a full build (tested), O(P + k log k).
    fn rebuilt(&self, new_nodes: NodeSet) -> Result<Ring> {
        let new_counts = point_counts(&new_nodes, self.params.vnodes)?;
        let old_counts = point_counts(&self.nodes, self.params.vnodes)?;
        // Old id -> new id for nodes whose points carry over unchanged.
        let mut remap = vec![u32::MAX; self.nodes.len()];
        let mut kept_new = vec![false; new_nodes.len()];
        for (old, node) in self.nodes.iter() {
            if let Some(new) = new_nodes.id_of(node.name()) {
                if new_counts[new.index()] == old_counts[old.index()] {
                    remap[old.index()] = new.as_u32();
                    kept_new[new.index()] = true;
                }
            }
        }
        let fresh_total: usize = (0..new_nodes.len()).filter(|&i| !kept_new[i]).map(|i| new_counts[i] as usize).sum();
        let total: usize = new_counts.iter().map(|&c| c as usize).sum();
        if 2 * fresh_total > total {
            return Ring::from_parts(new_nodes, self.params);
        }
        // Only the fresh nodes need their name order (sorting all names cost more than the merge).
        let mut by_name: Vec<u32> = (0..new_nodes.len() as u32).filter(|&id| !kept_new[id as usize]).collect();
        new_nodes.sort_by_name(&mut by_name);
        let fresh = generate_sorted(&new_nodes, &self.params.hasher, &new_counts, &by_name, self.params.parallel);
        let merged = if remap.iter().enumerate().all(|(old, &new)| new == old as u32) {
            self.merge_added(&new_nodes, &fresh, total)
        } else if let Some(gone) = one_removed(&remap).filter(|_| fresh.0.is_empty()) {
            self.drop_one(gone, total)
        } else {
            self.merge_remapped(&new_nodes, &remap, &fresh, total)
        };
        Ok(Ring::assemble(new_nodes, self.params, merged.0, merged.1))
    }

    /// Every old node kept under its id (an added node): copies the runs of old points between
    /// fresh points wholesale instead of visiting each old point, which a per-point merge
    /// spent most of an add's time on.
    fn merge_added(&self, new_nodes: &NodeSet, (fp, fo): &Points, total: usize) -> Points {
        let (old_points, old_owners) = (self.circle.points(), self.circle.owners());
        let (mut points, mut owners) = (Vec::with_capacity(total), Vec::with_capacity(total));
        let name_of = |o: u32| new_nodes.name(NodeId::from_index(o));
        let mut from = 0;
        for (&x, &o) in fp.iter().zip(fo) {
            let mut at = from + old_points[from..].partition_point(|&p| p < x);
            // Equal points are ordered by name.
            while at < old_points.len() && old_points[at] == x && name_of(old_owners[at]) < name_of(o) {
                at += 1;
            }
            points.extend_from_slice(&old_points[from..at]);
            owners.extend_from_slice(&old_owners[from..at]);
            points.push(x);
            owners.push(o);
            from = at;
        }
        points.extend_from_slice(&old_points[from..]);
        owners.extend_from_slice(&old_owners[from..]);
        (points, owners)
    }

    /// Old node `gone` removed, every other kept (ids above it shift down by one): copies the
    /// runs between its points wholesale, renumbering owners arithmetically.
    fn drop_one(&self, gone: u32, total: usize) -> Points {
        let (old_points, old_owners) = (self.circle.points(), self.circle.owners());
        let (mut points, mut owners) = (Vec::with_capacity(total), Vec::with_capacity(total));
        let renumber = |o: &u32| o - u32::from(*o > gone);
        let mut from = 0;
        for (i, _) in old_owners.iter().enumerate().filter(|(_, &o)| o == gone) {
            points.extend_from_slice(&old_points[from..i]);
            owners.extend(old_owners[from..i].iter().map(renumber));
            from = i + 1;
        }
        points.extend_from_slice(&old_points[from..]);
        owners.extend(old_owners[from..].iter().map(renumber));
        (points, owners)
    }

    /// The general case: kept points under their new ids (`remap`, `u32::MAX` = dropped) merged
    /// point by point with the fresh ones, equal points in name order.
    fn merge_remapped(&self, new_nodes: &NodeSet, remap: &[u32], (fp, fo): &Points, total: usize) -> Points {
        let (mut points, mut owners) = (Vec::with_capacity(total), Vec::with_capacity(total));
        let name_of = |o: u32| new_nodes.name(NodeId::from_index(o));
        let mut f = 0;
        for (&p, &o) in self.circle.points().iter().zip(self.circle.owners()) {
            let o = remap[o as usize];
            if o == u32::MAX {
                continue;
            }
            // Fresh points that sort before (p, o): smaller point, or equal point and smaller name.
            while f < fp.len() && (fp[f] < p || (fp[f] == p && name_of(fo[f]) < name_of(o))) {
                points.push(fp[f]);
                owners.push(fo[f]);
                f += 1;
            }
            points.push(p);
            owners.push(o);
        }
        points.extend_from_slice(&fp[f..]);
        owners.extend_from_slice(&fo[f..]);
        (points, owners)
    }

    /// A new ring with `node` added (same vnodes and hasher).
    ///
    /// # Errors
    /// As [`NodeSet::with_node`] and [`Builder::<Ring>::build`](crate::Builder::build).
    ///
    /// Merges the new node's points into this ring's sorted arrays (O(P), no re-sort) when the
    /// other nodes' point counts do not change (always with unit weights).
    pub fn with_node(&self, node: Node) -> Result<Ring> {
        self.rebuilt(self.nodes.with_node(node)?)
    }

    /// A new ring without the node named `name`.
    ///
    /// # Errors
    /// [`Error::UnknownNode`](crate::Error::UnknownNode), [`Error::NoNodes`](crate::Error::NoNodes) for the last node.
    ///
    /// Filters the node's points out of this ring's arrays (O(P)) when the other nodes' point
    /// counts do not change.
    pub fn without_node(&self, name: &str) -> Result<Ring> {
        self.rebuilt(self.nodes.without_node(name)?)
    }

    /// A new ring with node `name`'s weight changed.
    ///
    /// # Errors
    /// [`Error::UnknownNode`](crate::Error::UnknownNode), [`Error::InvalidWeight`](crate::Error::InvalidWeight), [`Error::TooManyPoints`](crate::Error::TooManyPoints).
    pub fn with_weight(&self, name: &str, weight: f64) -> Result<Ring> {
        self.rebuilt(self.nodes.with_weight(name, weight)?)
    }
}

/// `Some(r)` when `remap` drops exactly old id `r` and shifts the ids above it down by one
/// (what [`NodeSet::without_node`] does), every other node kept.
fn one_removed(remap: &[u32]) -> Option<u32> {
    let gone = remap.iter().position(|&n| n == u32::MAX)? as u32;
    let shifted = remap.iter().enumerate().all(|(old, &new)| {
        let old = old as u32;
        old == gone || new == old - u32::from(old > gone)
    });
    shifted.then_some(gone)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::KeyHasher;
    use crate::Router;

    fn same(a: &Ring, b: &Ring) {
        assert_eq!(a.points(), b.points());
        assert_eq!(a.owners(), b.owners());
        assert_eq!(a.collisions(), b.collisions());
        assert_eq!(a.nodes(), b.nodes());
    }

    #[test]
    fn incremental_matches_rebuild() {
        for hasher in [KeyHasher::default(), KeyHasher::Crc16] {
            let names: Vec<String> = (0..40).map(|i| format!("s{i}")).collect();
            let r = Ring::builder().vnodes(50).hasher(hasher).nodes(&names).build().unwrap();
            // Names sorting first, between and last: equal points order by name.
            for extra in ["s7x", "a", "zz"] {
                let added = r.with_node(Node::new(extra)).unwrap();
                let full = Ring::builder().vnodes(50).hasher(hasher).node_set(added.nodes().clone()).build().unwrap();
                same(&added, &full);
            }
            for gone in ["s0", "s7", "s39"] {
                let removed = r.without_node(gone).unwrap();
                let full = Ring::builder().vnodes(50).hasher(hasher).node_set(removed.nodes().clone()).build().unwrap();
                same(&removed, &full);
            }
            let w = r.with_weight("s3", 2.0).unwrap();
            let full = Ring::builder().vnodes(50).hasher(hasher).node_set(w.nodes().clone()).build().unwrap();
            same(&w, &full);
        }
    }
}

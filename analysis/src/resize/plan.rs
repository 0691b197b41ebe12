//! The path from one node list to the other: the changes in order, the routers along the way,
//! and the cache slots (one per node name that appears in either list).

use std::collections::BTreeMap;

use hashroute::{AnyRouter, Error, Node, NodeSet, Result, Router, RouterSpec};

/// One membership change.
#[derive(Clone, Debug)]
enum Change {
    Add(Node),
    Reweight { name: String, from: f64, to: f64 },
    Remove(String),
}

impl Change {
    fn label(&self) -> String {
        match self {
            Change::Add(node) => format!("+{}", node.name()),
            Change::Reweight { name, from, to } => format!("{name} weight {from}→{to}"),
            Change::Remove(name) => format!("-{name}"),
        }
    }

    fn apply(&self, router: &AnyRouter) -> Result<AnyRouter> {
        match self {
            Change::Add(node) => router.with_node(node.clone()),
            Change::Reweight { name, to, .. } => router.with_weight(name, *to),
            Change::Remove(name) => router.without_node(name),
        }
    }
}

/// The routers a resize passes through and the caches it involves.
pub(super) struct Plan {
    /// `routers[0]` is built from the first list, `routers[i + 1]` is `routers[i]` after
    /// `labels[i]`; the last one is the final router. Only the first and the last are kept
    /// when no strategy steps through the intermediate ones.
    pub routers: Vec<AnyRouter>,
    /// The change between consecutive routers (empty when only the ends are kept).
    pub labels: Vec<String>,
    /// The whole change in a few words (`+4 nodes`, `+e -a`).
    pub all_label: String,
    /// One cache slot per node name of either list: the first list's order, then the new names
    /// in the second list's order.
    pub slot_names: Vec<String>,
    /// Each slot's weight: in the first list if it is there, else in the second.
    pub slot_weights: Vec<f64>,
    /// Total weight of the first list (caches are sized against it).
    pub weight_before: f64,
}

impl Plan {
    /// The path from `from` to `to`; keeps every intermediate router when `keep_steps`.
    pub(super) fn new(spec: &RouterSpec, from: &NodeSet, to: &NodeSet, keep_steps: bool) -> Result<Plan> {
        let changes = changes(from, to);
        if changes.is_empty() {
            return Err(Error::InvalidParameter {
                name: "nodes",
                reason: "the two node lists hold the same nodes and weights: nothing to resize".into(),
            });
        }
        let mut routers = vec![spec.build(from.clone())?];
        for change in &changes {
            let next = change.apply(routers.last().expect("at least the first router"))?;
            if !keep_steps && routers.len() == 2 {
                routers.pop();
            }
            routers.push(next);
        }
        let labels = if keep_steps { changes.iter().map(Change::label).collect() } else { Vec::new() };
        let (mut slot_names, mut slot_weights): (Vec<String>, Vec<f64>) =
            from.iter().map(|(_, n)| (n.name().to_owned(), n.weight())).unzip();
        for (_, n) in to.iter().filter(|(_, n)| from.id_of(n.name()).is_none()) {
            slot_names.push(n.name().to_owned());
            slot_weights.push(n.weight());
        }
        Ok(Plan {
            routers,
            labels,
            all_label: all_label(&changes),
            slot_names,
            slot_weights,
            weight_before: from.total_weight(),
        })
    }

    /// For each node id of `router`, its cache slot.
    pub(super) fn slots_of(&self, router: &AnyRouter) -> Vec<u32> {
        let index: BTreeMap<&str, u32> =
            self.slot_names.iter().enumerate().map(|(i, n)| (n.as_str(), i as u32)).collect();
        router.nodes().iter().map(|(_, n)| index[n.name()]).collect()
    }

    /// The first router.
    pub(super) fn first(&self) -> &AnyRouter {
        &self.routers[0]
    }

    /// The final router.
    pub(super) fn last(&self) -> &AnyRouter {
        self.routers.last().expect("at least two routers")
    }
}

/// Additions (second list's order), then weight changes, then removals (first list's order,
/// last node first, so routers that can only drop their last node, such as jump, can shrink):
/// capacity arrives before capacity leaves, so a replacement never runs a node short.
fn changes(from: &NodeSet, to: &NodeSet) -> Vec<Change> {
    let mut out: Vec<Change> =
        to.iter().filter(|(_, n)| from.id_of(n.name()).is_none()).map(|(_, n)| Change::Add(n.clone())).collect();
    for (_, n) in to.iter() {
        if let Some(id) = from.id_of(n.name()) {
            let old = from.weight(id);
            if old != n.weight() {
                out.push(Change::Reweight { name: n.name().to_owned(), from: old, to: n.weight() });
            }
        }
    }
    out.extend(
        from.as_slice().iter().rev().filter(|n| to.id_of(n.name()).is_none()).map(|n| Change::Remove(n.name().into())),
    );
    out
}

/// `+e -a` for one or two changes, else counts: `+4 nodes`, `+4 -2 nodes, 1 reweighted`.
fn all_label(changes: &[Change]) -> String {
    if changes.len() <= 2 {
        return changes.iter().map(Change::label).collect::<Vec<_>>().join(" ");
    }
    let count = |f: fn(&Change) -> bool| changes.iter().filter(|c| f(c)).count();
    let adds = count(|c| matches!(c, Change::Add(_)));
    let removes = count(|c| matches!(c, Change::Remove(_)));
    let reweights = count(|c| matches!(c, Change::Reweight { .. }));
    let mut moves = Vec::new();
    if adds > 0 {
        moves.push(format!("+{adds}"));
    }
    if removes > 0 {
        moves.push(format!("-{removes}"));
    }
    let mut label = if moves.is_empty() { String::new() } else { format!("{} nodes", moves.join(" ")) };
    if reweights > 0 {
        let sep = if label.is_empty() { "" } else { ", " };
        label = format!("{label}{sep}{reweights} reweighted");
    }
    label
}

#[cfg(test)]
mod tests {
    use super::*;
    use hashroute::Algorithm;

    fn set(text: &str) -> NodeSet {
        NodeSet::parse(text).unwrap()
    }

    #[test]
    fn changes_come_in_a_fixed_order() {
        let from = set("a\nb 2\nc\nd\n");
        let to = set("f\nb 3\nc\ne\n");
        let labels: Vec<String> = changes(&from, &to).iter().map(Change::label).collect();
        assert_eq!(labels, ["+f", "+e", "b weight 2→3", "-d", "-a"]);
        assert_eq!(all_label(&changes(&from, &to)), "+2 -2 nodes, 1 reweighted");
        assert_eq!(all_label(&changes(&set("a\n"), &set("a\nb\n"))), "+b");
        assert_eq!(all_label(&changes(&set("a\nb\nc\n"), &set("a\nb 2\nc 2\nd 2\n"))), "+1 nodes, 2 reweighted");
    }

    #[test]
    fn the_path_ends_on_the_same_router_whether_or_not_steps_are_kept() {
        let spec = RouterSpec::new(Algorithm::Ring);
        let (from, to) = (set("a\nb\nc\n"), set("b\nc\nd\ne\n"));
        let steps = Plan::new(&spec, &from, &to, true).unwrap();
        let ends = Plan::new(&spec, &from, &to, false).unwrap();
        assert_eq!(steps.routers.len(), 4);
        assert_eq!(steps.labels, ["+d", "+e", "-a"]);
        assert_eq!(ends.routers.len(), 2);
        assert_eq!(ends.all_label, "+2 -1 nodes");
        assert_eq!(steps.slot_names, ["a", "b", "c", "d", "e"]);
        for k in 0..2000u32 {
            let key = k.to_le_bytes();
            let (x, y) = (steps.last(), ends.last());
            assert_eq!(x.nodes().name(x.route(&key)), y.nodes().name(y.route(&key)));
        }
        let same = Plan::new(&spec, &from, &set("c\nb\na\n"), false);
        assert!(matches!(same, Err(Error::InvalidParameter { name: "nodes", .. })), "{:?}", same.err());
    }
}

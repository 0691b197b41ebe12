//! Bookkeeping: each node's state (its ranges, cap and load), the load order, and the ring's
//! tokens; every change to the ring goes through these methods.

use super::*;

/// Internal state of one node.
#[derive(Debug, Clone)]
pub(super) struct NodeState {
    pub(super) name: Arc<str>,
    pub(super) weight: f64,
    pub(super) zone: String,
    pub(super) rack: String,
    /// The ring parameter `V` the node came with: its budget is `V` times its weight over the
    /// mean weight, and its cap twice `V`.
    pub(super) nominal: u32,
    /// The node never gains tokens beyond this: twice `nominal`, or the count it was loaded with
    /// if that is more.
    pub(super) cap: usize,
    /// `(token, length of the range the token closes)`, sorted by token.
    pub(super) ranges: Vec<(i64, u128)>,
    /// Sum of the range lengths.
    pub(super) owned: u128,
    /// The load under which the node is filed in [`TokenAllocator::load`].
    pub(super) filed: f64,
}

impl NodeState {
    /// Positions owned per unit of weight: what the allocator balances.
    pub(super) fn load(&self) -> f64 {
        self.owned as f64 / self.weight
    }

    /// Tokens the node may still gain.
    pub(super) fn room(&self) -> usize {
        self.cap.saturating_sub(self.ranges.len())
    }

    pub(super) fn index(&self, token: i64) -> usize {
        self.ranges.binary_search_by_key(&token, |r| r.0).expect("the node owns the token")
    }

    pub(super) fn add(&mut self, token: i64, len: u128) {
        let at = self.ranges.binary_search_by_key(&token, |r| r.0).expect_err("a new token");
        self.ranges.insert(at, (token, len));
        self.owned += len;
    }

    pub(super) fn take(&mut self, token: i64) -> u128 {
        let (_, len) = self.ranges.remove(self.index(token));
        self.owned -= len;
        len
    }

    pub(super) fn set_len(&mut self, token: i64, len: u128) {
        let at = self.index(token);
        self.owned = self.owned - self.ranges[at].1 + len;
        self.ranges[at].1 = len;
    }

    /// The node's `k` largest ranges that can be cut (length >= 2), not ending at a token of
    /// `except`: largest first, ties by token.
    pub(super) fn largest_ranges(&self, k: usize, except: &BTreeSet<i64>) -> Vec<(i64, u128)> {
        let mut all: Vec<(i64, u128)> =
            self.ranges.iter().copied().filter(|&(t, len)| len >= 2 && !except.contains(&t)).collect();
        all.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        all.truncate(k);
        all
    }
}

/// A node's place in the load order: by load, then by name (never by insertion order, so a
/// ring loaded in any line order behaves the same).
#[derive(Debug, Clone)]
pub(super) struct LoadKey {
    pub(super) load: f64,
    pub(super) name: Arc<str>,
    pub(super) slot: u32,
}

impl PartialEq for LoadKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for LoadKey {}

impl PartialOrd for LoadKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for LoadKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.load.total_cmp(&other.load).then_with(|| self.name.cmp(&other.name))
    }
}

/// Bookkeeping: slots, the load order, and the ring's tokens.
impl TokenAllocator {
    pub(super) fn view(&self, slot: u32) -> AllocatedNode<'_> {
        AllocatedNode { node: self.slot(slot), total_weight: self.total_weight }
    }

    /// The weights' sum, in name order, with `replace` = `(slot, weight)` standing for a new
    /// weight. A removal or a weight change re-adds them (O(N)) rather than subtract: a running
    /// difference could drift, even to 0 or below when the weights span many magnitudes.
    pub(super) fn weight_sum(&self, replace: Option<(u32, f64)>) -> f64 {
        self.by_name
            .values()
            .map(|&slot| match replace {
                Some((s, w)) if s == slot => w,
                _ => self.slot(slot).weight,
            })
            .sum()
    }

    pub(super) fn require(&self, name: &str) -> Result<u32> {
        self.by_name.get(name).copied().ok_or_else(|| Error::UnknownNode { name: name.to_string() })
    }

    pub(super) fn slot(&self, slot: u32) -> &NodeState {
        self.slots[slot as usize].as_ref().expect("live slot")
    }

    pub(super) fn slot_mut(&mut self, slot: u32) -> &mut NodeState {
        self.dirty.push(slot);
        self.slots[slot as usize].as_mut().expect("live slot")
    }

    /// Files a new node without tokens (the caller checked the name is free).
    pub(super) fn create(&mut self, name: String, weight: f64, zone: String, rack: String, nominal: u32) -> u32 {
        let name: Arc<str> = name.into();
        let cap = 2 * nominal as usize;
        let node = NodeState {
            name: name.clone(),
            weight,
            zone,
            rack,
            nominal,
            cap,
            ranges: Vec::new(),
            owned: 0,
            filed: 0.0,
        };
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(node);
                slot
            }
            None => {
                self.slots.push(Some(node));
                (self.slots.len() - 1) as u32
            }
        };
        self.by_name.insert(name.clone(), slot);
        self.load.insert(LoadKey { load: 0.0, name, slot });
        self.total_weight += weight;
        slot
    }

    /// Refiles the nodes whose load changed.
    pub(super) fn refresh(&mut self) {
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.sort_unstable();
        dirty.dedup();
        for slot in dirty {
            let Some(node) = self.slots[slot as usize].as_mut() else { continue };
            let load = node.load();
            if load.to_bits() != node.filed.to_bits() {
                self.load.remove(&LoadKey { load: node.filed, name: node.name.clone(), slot });
                node.filed = load;
                self.load.insert(LoadKey { load, name: node.name.clone(), slot });
            }
        }
    }

    /// The last token before position `t` (wrapping); `t` itself when it is the only token.
    pub(super) fn pred_token(&self, t: i64) -> i64 {
        let prev = self.tokens.range(..t).next_back().or_else(|| self.tokens.iter().next_back());
        *prev.expect("non-empty ring").0
    }

    /// The first token after position `t` (wrapping); `t` itself when it is the only token.
    pub(super) fn succ_token(&self, t: i64) -> i64 {
        let next = self.tokens.range((Bound::Excluded(t), Bound::Unbounded)).next();
        *next.or_else(|| self.tokens.iter().next()).expect("non-empty ring").0
    }

    /// Adds token `t` (not yet in the ring) for `owner`: it takes the lower part of the range
    /// that contained it.
    pub(super) fn insert_token(&mut self, t: i64, owner: u32) {
        debug_assert!(!self.tokens.contains_key(&t));
        if self.tokens.is_empty() {
            self.slot_mut(owner).add(t, RING);
            self.tokens.insert(t, owner);
        } else {
            self.insert_between(t, owner, self.pred_token(t), self.succ_token(t));
        }
    }

    /// [`TokenAllocator::insert_token`] when the neighbouring tokens `p < t < q` (on the ring) are
    /// known.
    pub(super) fn insert_between(&mut self, t: i64, owner: u32, p: i64, q: i64) {
        debug_assert!(!self.tokens.contains_key(&t) && (self.pred_token(t), self.succ_token(t)) == (p, q));
        let q_owner = self.tokens[&q];
        self.slot_mut(q_owner).set_len(q, dist(t, q));
        self.slot_mut(owner).add(t, dist(p, t));
        self.tokens.insert(t, owner);
    }

    /// Deletes token `t` (not the last one): its range joins the next token's.
    pub(super) fn remove_token(&mut self, t: i64) {
        let q = self.succ_token(t);
        debug_assert_ne!(q, t);
        let owner = self.tokens.remove(&t).expect("token present");
        let len = self.slot_mut(owner).take(t);
        let q_owner = self.tokens[&q];
        let q_node = self.slot_mut(q_owner);
        let q_len = q_node.ranges[q_node.index(q)].1;
        q_node.set_len(q, q_len + len);
    }

    /// Gives token `t` and its range to `owner`.
    pub(super) fn set_owner(&mut self, t: i64, owner: u32) {
        let old = self.tokens.insert(t, owner).expect("token present");
        let len = self.slot_mut(old).take(t);
        self.slot_mut(owner).add(t, len);
    }

    /// Merges token `t` with the adjacent tokens of its owner, keeping the last of the run: the
    /// owner's ranges join, no key moves.
    pub(super) fn merge_run(&mut self, t: i64) {
        let Some(&owner) = self.tokens.get(&t) else { return };
        loop {
            let p = self.pred_token(t);
            if p == t || self.tokens[&p] != owner {
                break;
            }
            self.remove_token(p);
        }
        let mut cur = t;
        loop {
            let s = self.succ_token(cur);
            if s == cur || self.tokens[&s] != owner {
                break;
            }
            self.remove_token(cur);
            cur = s;
        }
    }

    /// Merges the runs of adjacent tokens of node `slot`, so each of its ranges borders other
    /// nodes.
    pub(super) fn merge_own_runs(&mut self, slot: u32) {
        let tokens: Vec<i64> = self.slot(slot).ranges.iter().map(|r| r.0).collect();
        for t in tokens {
            self.merge_run(t);
        }
    }

    /// The nodes from the most loaded down, skipping `skip`.
    pub(super) fn most_loaded(&self, skip: Option<u32>) -> impl Iterator<Item = (u32, &NodeState)> + '_ {
        self.load.iter().rev().filter(move |k| Some(k.slot) != skip).map(|k| (k.slot, self.slot(k.slot)))
    }
}

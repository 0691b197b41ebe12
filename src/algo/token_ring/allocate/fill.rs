//! The arithmetic of the plans: the hand-over book of a removal or a weight decrease, water
//! filling over donors, how many ranges each donor gives, and spreading cuts over ranges.

use super::*;

/// What the nodes below the level of a hand-over still take: the chosen recipients, then the
/// neighbours of the pieces met on the way (which take only for free when they lack room).
pub(super) struct Book {
    pub(super) giver: u32,
    pub(super) level: f64,
    /// `(slot, demand, room)`, in the order met: the recipients by load, then the neighbours.
    pub(super) entries: Vec<(u32, i128, usize)>,
    pub(super) index: BTreeMap<u32, usize>,
}

impl Book {
    pub(super) fn new(alloc: &TokenAllocator, giver: u32, level: f64, recipients: &[u32]) -> Book {
        let mut book = Book { giver, level, entries: Vec::new(), index: BTreeMap::new() };
        for &slot in recipients {
            book.entry(alloc, slot);
        }
        book
    }

    /// The index of `slot`'s entry, filed at its demand at the level if new: negative above
    /// the level, so that a loaded neighbour never looks as hungry as a recipient.
    pub(super) fn entry(&mut self, alloc: &TokenAllocator, slot: u32) -> usize {
        if let Some(&i) = self.index.get(&slot) {
            return i;
        }
        let node = alloc.slot(slot);
        let want = node.weight * (self.level - node.load());
        let demand = match slot == self.giver {
            true => i128::MIN / 2,
            false if want >= 0.0 => to_positions(want, RING) as i128,
            false => -(to_positions(-want, RING) as i128),
        };
        self.entries.push((slot, demand, node.room()));
        self.index.insert(slot, self.entries.len() - 1);
        self.entries.len() - 1
    }

    /// What `slot` takes of `left` positions for free: its demand, or all when the rest would
    /// be a sliver and it stays within [`OVERSHOOT`]; 0 for the giver.
    pub(super) fn free_take(&mut self, alloc: &TokenAllocator, slot: u32, left: u128, sliver: u128) -> u128 {
        let i = self.entry(alloc, slot);
        let d = self.entries[i].1;
        if d <= 0 {
            return 0;
        }
        let d = d as u128;
        let take =
            if left <= d || (left - d < sliver && left as f64 <= d as f64 * (1.0 + OVERSHOOT)) { left } else { d };
        self.entries[i].1 -= take as i128;
        take
    }

    /// The entry with room and the largest demand (the first met on ties).
    pub(super) fn best(&self) -> Option<usize> {
        (0..self.entries.len())
            .filter(|&i| self.entries[i].2 > 0)
            .max_by(|&i, &j| self.entries[i].1.cmp(&self.entries[j].1).then(j.cmp(&i)))
    }

    /// Entry `i` takes a piece of `left` positions, costing it a token: all of it unless that
    /// exceeds its demand by more than [`OVERSHOOT`] and more than a sliver.
    pub(super) fn take(&mut self, i: usize, left: u128, sliver: u128) -> (u32, u128) {
        let d = self.entries[i].1;
        let whole =
            d < sliver as i128 || left as f64 <= d as f64 * (1.0 + OVERSHOOT) || left as i128 - d < sliver as i128;
        let take = if whole { left } else { d as u128 };
        self.entries[i].1 -= take as i128;
        self.entries[i].2 -= 1;
        (self.entries[i].0, take)
    }
}

/// Water filling from above over `(load, weight, cap)` donors: each gives
/// `min(cap, weight * (load - L))` (at least 0) for the level `L` where they give `need` in all;
/// everything when the caps sum to less.
pub(super) fn drain(donors: &[(f64, f64, f64)], need: f64) -> Vec<f64> {
    let caps: f64 = donors.iter().map(|d| d.2).sum();
    if need >= caps {
        return donors.iter().map(|d| d.2).collect();
    }
    // What the donors give is piecewise linear in the level: a donor starts at its load and
    // stops at its load minus cap / weight.
    let mut events: Vec<(f64, f64)> = Vec::with_capacity(2 * donors.len());
    for &(load, w, cap) in donors {
        events.push((load, w));
        events.push((load - cap / w, -w));
    }
    events.sort_by(|a, b| b.0.total_cmp(&a.0));
    let (mut x, mut given, mut slope) = (events[0].0, 0.0, 0.0);
    let mut level = f64::NEG_INFINITY;
    for &(at, delta) in &events {
        let at_event = if slope > 0.0 { given + slope * (x - at) } else { given };
        if at_event >= need && slope > 0.0 {
            level = x - (need - given) / slope;
            break;
        }
        (given, x) = (at_event, at);
        slope += delta;
    }
    donors.iter().map(|&(load, w, cap)| (w * (load - level)).clamp(0.0, cap)).collect()
}

/// Water filling over `cands` with `counts[i]` ranges of candidate `i`: the amounts, and the
/// highest load a candidate is left with (what the choice of ranges minimises).
pub(super) fn evaluate(cands: &[Candidate], counts: &[usize], need: f64) -> (f64, Vec<f64>) {
    let donors: Vec<(f64, f64, f64)> =
        cands.iter().zip(counts).map(|(c, &k)| (c.load, c.weight, c.prefix[k])).collect();
    let amounts = drain(&donors, need);
    let worst = cands.iter().zip(&amounts).map(|(c, a)| c.load - a / c.weight).fold(f64::NEG_INFINITY, f64::max);
    (worst, amounts)
}

/// How many ranges to cut in each candidate donor so that `v` cuts bring the highest remaining
/// load as low as possible: one each to start; while the donor left highest is held up by the
/// size of its ranges, it gets another range (a spare cut, or the cut of the donor giving least
/// per cut if that lowers the highest load); the cuts of donors that give nothing and the spare
/// cuts go to the donor giving most per cut, which evens the new node's ranges.
pub(super) fn choose_counts(cands: &[Candidate], v: usize, need: f64) -> Vec<usize> {
    let n = cands.len();
    let mut counts: Vec<usize> = cands.iter().map(|c| usize::from(c.prefix.len() > 1)).collect();
    for _ in 0..4 * v {
        let (worst, amounts) = evaluate(cands, &counts, need);
        let used: usize = counts.iter().sum();
        let after = |i: usize| cands[i].load - amounts[i] / cands[i].weight;
        let can_grow = |i: usize| counts[i] + 1 < cands[i].prefix.len();
        let per_cut = |i: usize| amounts[i] / counts[i] as f64;
        let idle = (0..n).find(|&i| counts[i] > 0 && amounts[i] <= 0.0);
        let limiting = (0..n)
            .filter(|&i| counts[i] > 0 && can_grow(i) && amounts[i] >= cands[i].prefix[counts[i]] && after(i) >= worst)
            .max_by(|&i, &j| after(i).total_cmp(&after(j)).then(j.cmp(&i)));
        if let Some(i) = limiting {
            let mut next = counts.clone();
            next[i] += 1;
            if used >= v {
                let giver = idle.or_else(|| {
                    (0..n)
                        .filter(|&j| j != i && counts[j] > 0)
                        .min_by(|&a, &b| per_cut(a).total_cmp(&per_cut(b)).then(b.cmp(&a)))
                });
                let Some(j) = giver else { break };
                next[j] -= 1;
                // A spare cut never hurts; one taken from another donor must pay off.
                if evaluate(cands, &next, need).0 >= worst {
                    break;
                }
            }
            counts = next;
            continue;
        }
        if used >= v && idle.is_none() {
            break;
        }
        let best = (0..n)
            .filter(|&i| counts[i] > 0 && amounts[i] > 0.0 && can_grow(i))
            .max_by(|&a, &b| per_cut(a).total_cmp(&per_cut(b)).then(b.cmp(&a)));
        let Some(best) = best else { break };
        if let (true, Some(i)) = (used >= v, idle) {
            counts[i] -= 1;
        }
        counts[best] += 1;
    }
    counts
}

/// Splits `total` positions over units of capacities `caps`, as evenly as the caps allow (each
/// unit at least 1 when `at_least_one`).
pub(super) fn spread(total: u128, caps: &[u128], at_least_one: bool) -> Vec<u128> {
    let mut order: Vec<usize> = (0..caps.len()).collect();
    order.sort_by_key(|&i| (caps[i], i));
    let mut out = vec![0; caps.len()];
    let mut left = total;
    for (k, &i) in order.iter().enumerate() {
        let share = left / (caps.len() - k) as u128;
        out[i] = share.max(u128::from(at_least_one)).min(caps[i]);
        left = left.saturating_sub(out[i]);
    }
    out
}

/// How much to cut off ranges whose cuttable lengths are `caps` so that `total` positions come
/// off in all, the largest first, down towards one common length.
pub(super) fn shave(caps: &[u128], total: u128) -> Vec<u128> {
    let mut order: Vec<usize> = (0..caps.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(caps[i]), i));
    let mut out = vec![0; caps.len()];
    // The m largest come down to a level between the (m+1)-th cap and the m-th.
    let (mut m, mut sum) = (0usize, 0u128);
    while m < order.len() {
        sum += caps[order[m]];
        m += 1;
        let next = order.get(m).map_or(0, |&j| caps[j]);
        if sum - m as u128 * next >= total {
            break;
        }
    }
    if m == 0 {
        return out;
    }
    let kept = sum - total.min(sum);
    let level = kept / m as u128;
    let mut extra = kept - level * m as u128;
    for &i in &order[..m] {
        let keep = level + u128::from(extra > 0);
        extra = extra.saturating_sub(1);
        out[i] = caps[i] - keep;
    }
    out
}

/// The receiver's cuts `(start, end, amount)`: the donors come down to a common level, each within
/// its units' caps, so that the receiver collects `need` positions; a donor's amount goes to its
/// free units first, then evenly over its other units (each at least 1 when `exact`, so that the
/// receiver gets one token per unit).
pub(super) fn plan_cuts(donors: &[Donor], need: f64, exact: bool) -> Vec<(Unit, u128)> {
    let capped: Vec<(f64, f64, f64)> =
        donors.iter().map(|d| (d.load, d.weight, d.units.iter().map(|u| u.cap as f64).sum())).collect();
    let amounts = if donors.is_empty() { Vec::new() } else { drain(&capped, need) };
    let mut cuts = Vec::new();
    for (d, &amount) in donors.iter().zip(&amounts) {
        let mut left = to_positions(amount, RING);
        if left == 0 && !exact {
            continue;
        }
        for &u in &d.units[..d.free_units] {
            let take = left.min(u.cap);
            if take > 0 {
                cuts.push((u, take));
                left -= take;
            }
        }
        let paid = &d.units[d.free_units..];
        let caps: Vec<u128> = paid.iter().map(|u| u.cap).collect();
        for (&u, take) in paid.iter().zip(spread(left, &caps, exact)) {
            if take > 0 {
                cuts.push((u, take));
            }
        }
    }
    cuts
}

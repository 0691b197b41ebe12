//! Planning: who gives what to whom in an addition, a removal or a weight change, and applying
//! the cuts.

use super::*;

/// A donor of an addition or a weight increase, with the ranges the receiver may cut.
#[derive(Debug, Clone)]
pub(super) struct Donor {
    /// The load the water filling sees (the node's load, shifted by its ramp offset).
    pub(super) load: f64,
    pub(super) weight: f64,
    /// The stretches the receiver may take; the free units (next to the receiver's own ranges:
    /// taking them costs it no token) come first.
    pub(super) units: Vec<Unit>,
    pub(super) free_units: usize,
}

/// A stretch of at most `cap` positions that a receiver may take from a donor's range
/// `(start, end]`: its lower end (a new receiver token, or the receiver's token at `start`
/// moving forward), or with `back` its upper end (the donor's token at `end` moving back over
/// it, when the receiver's range follows).
#[derive(Debug, Clone, Copy)]
pub(super) struct Unit {
    pub(super) start: i64,
    pub(super) end: i64,
    pub(super) cap: u128,
    pub(super) back: bool,
}

impl Unit {
    /// The lower end of the range closed by token `t` of length `len`, all but one position.
    pub(super) fn lower(t: i64, len: u128) -> Unit {
        Unit { start: range_start(t, len), end: t, cap: len - 1, back: false }
    }
}

/// A possible donor of an addition: its (shifted) load, weight, and `prefix[k]`, the positions
/// its `k` largest ranges can give.
#[derive(Debug, Clone)]
pub(super) struct Candidate {
    pub(super) load: f64,
    pub(super) weight: f64,
    pub(super) prefix: Vec<f64>,
}

/// A stretch `(start, start + len]` to hand over in a removal or a weight decrease; its end is
/// the giver's token when `whole`, a new cut otherwise.
#[derive(Debug, Clone, Copy)]
pub(super) struct Piece {
    pub(super) start: i64,
    pub(super) len: u128,
    pub(super) whole: bool,
}

/// Planning: who gives what to whom.
impl TokenAllocator {
    /// The donors of an addition of `need` positions (`total` is the weight sum with the new
    /// node): the V most loaded nodes, with as many of their largest ranges as [`choose_counts`] picks.
    ///
    /// Each donor's load is shifted by a ramp offset (largest for the most loaded), so that the
    /// donors come down to staggered levels: levelled to one value, they would climb back to the
    /// top together and outnumber the cuts of a later addition. The ramp spans about what one
    /// addition of a mean-weight node lifts the loads by (one N-th of the mean load), in steps of
    /// a `V`-th of that (`nominal` is `V`), or of a `v`-th when the node has more than `V`
    /// donors: a wider ramp would leave the most loaded donors of a small ring above the rest.
    pub(super) fn addition_donors(&self, v: usize, nominal: u32, total: f64, need: f64) -> Vec<Donor> {
        let none = BTreeSet::new();
        // Nodes left with single positions only (tiny weights) cannot give: the next ones do.
        let top: Vec<(&NodeState, Vec<(i64, u128)>)> = self
            .most_loaded(None)
            .map(|(_, n)| (n, n.largest_ranges(v, &none)))
            .filter(|(_, ranges)| !ranges.is_empty())
            .take(v)
            .collect();
        let ranks = (nominal as usize).max(top.len()) as f64;
        let spacing = RING_F / total / (ranks * (self.len() + 1) as f64);
        let middle = (top.len() as f64 - 1.0) / 2.0;
        let shifted = |j: usize, n: &NodeState| n.load() - spacing * (middle - j as f64);
        let cands: Vec<Candidate> = top
            .iter()
            .enumerate()
            .map(|(j, (n, ranges))| {
                let mut prefix = vec![0.0];
                for r in ranges {
                    prefix.push(prefix[prefix.len() - 1] + (r.1 - 1) as f64);
                }
                Candidate { load: shifted(j, n), weight: n.weight, prefix }
            })
            .collect();
        let counts = choose_counts(&cands, v, need);
        top.iter()
            .enumerate()
            .zip(&counts)
            .filter(|(_, &c)| c > 0)
            .map(|((j, (n, ranges)), &c)| Donor {
                load: shifted(j, n),
                weight: n.weight,
                units: ranges[..c].iter().map(|&(t, len)| Unit::lower(t, len)).collect(),
                free_units: 0,
            })
            .collect()
    }

    /// The donors of a weight increase of `slot`: the owners of the ranges right after its
    /// tokens and right before its ranges (free units: taking them moves its token forward or
    /// the neighbour's back), and the most loaded nodes, one new token each, `paid` of them as
    /// far as its token room allows.
    pub(super) fn increase_donors(&self, slot: u32, paid: usize) -> Vec<Donor> {
        let node = self.slot(slot);
        let mut free: BTreeMap<u32, Vec<Unit>> = BTreeMap::new();
        // The ranges free units cut into: no paid unit may cut them too.
        let mut taken = BTreeSet::new();
        for &(t, _) in &node.ranges {
            let q = self.succ_token(t);
            let owner = self.tokens[&q];
            if owner != slot && dist(t, q) >= 2 {
                free.entry(owner).or_default().push(Unit::lower(q, dist(t, q)));
                taken.insert(q);
            }
        }
        for &(t, len) in &node.ranges {
            // The range before this one, unless a forward unit already cuts into it.
            let p = range_start(t, len);
            let owner = self.tokens[&p];
            let pp = self.pred_token(p);
            if owner != slot && !taken.contains(&p) && dist(pp, p) >= 2 {
                free.entry(owner).or_default().push(Unit { start: pp, end: p, cap: dist(pp, p) - 1, back: true });
                taken.insert(p);
            }
        }
        let paid = paid.min(node.room());
        let mut donors = Vec::new();
        for (donor, n) in self.most_loaded(Some(slot)).take(paid) {
            let mut units = free.remove(&donor).unwrap_or_default();
            let free_units = units.len();
            units.extend(n.largest_ranges(1, &taken).into_iter().map(|(t, len)| Unit::lower(t, len)));
            donors.push(Donor { load: n.load(), weight: n.weight, units, free_units });
        }
        for (donor, units) in free {
            let n = self.slot(donor);
            donors.push(Donor { load: n.load(), weight: n.weight, free_units: units.len(), units });
        }
        donors
    }

    /// Gives the receiver what `cuts` say (a unit and the positions it takes), then, with
    /// `merge`, merges the receiver's adjacent tokens (the free units; an addition's cuts are
    /// never adjacent).
    pub(super) fn apply_cuts(&mut self, receiver: u32, cuts: &[(Unit, u128)], merge: bool) {
        let mut touched = Vec::with_capacity(cuts.len());
        for &(u, amount) in cuts {
            if u.back {
                let donor = self.tokens[&u.end];
                self.insert_between(range_start(u.end, amount), donor, u.start, u.end);
                self.set_owner(u.end, receiver);
                touched.push(u.end);
            } else {
                let t = advance(u.start, amount);
                self.insert_between(t, receiver, u.start, u.end);
                touched.push(t);
            }
        }
        if merge {
            for t in touched {
                self.merge_run(t);
            }
        }
        self.refresh();
    }

    /// Makes token room for a weight increase of `slot`: its smallest ranges (half of what it
    /// owns at most) join the range of the less loaded neighbour (a merge: the neighbour gains
    /// no token), until it has room for `paid` new cuts. A node near its cap would otherwise
    /// reach few of the most loaded nodes; its small ranges are worth less than the cuts.
    pub(super) fn shed(&mut self, slot: u32, paid: usize) {
        let node = self.slot(slot);
        let want = paid.saturating_sub(node.room());
        let mut small: Vec<(i64, u128)> = node.ranges.clone();
        small.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
        let limit = node.owned / 2;
        let mut shed = 0u128;
        let mut touched = Vec::new();
        for &(t, len) in small.iter().take(want) {
            if shed + len > limit || self.slot(slot).ranges.len() <= 1 {
                break;
            }
            let (bp, bq) = (self.tokens[&self.pred_token(t)], self.tokens[&self.succ_token(t)]);
            if bp == slot || bq == slot {
                continue;
            }
            let owner = match self.slot(bp).load().total_cmp(&self.slot(bq).load()) {
                Ordering::Greater => bq,
                Ordering::Less => bp,
                Ordering::Equal => std::cmp::min_by_key(bp, bq, |&s| self.slot(s).name.clone()),
            };
            self.set_owner(t, owner);
            touched.push(t);
            shed += len;
        }
        for t in touched {
            self.merge_run(t);
        }
        self.refresh();
    }

    /// The stretches node `slot` hands over to lose `amount` positions: whole ranges (the
    /// smallest first) while it has more than `keep` tokens (its new budget), then the lower
    /// parts of its largest ranges, cut down towards one common length.
    pub(super) fn decrease_pieces(&self, slot: u32, amount: f64, keep: usize) -> Vec<Piece> {
        let node = self.slot(slot);
        let mut left = to_positions(amount, node.owned);
        let mut by_len: Vec<(i64, u128)> = node.ranges.clone();
        by_len.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
        let (mut pieces, mut kept) = (Vec::new(), Vec::new());
        let mut count = by_len.len();
        for (t, len) in by_len {
            if count > keep && len <= left {
                pieces.push(Piece { start: range_start(t, len), len, whole: true });
                left -= len;
                count -= 1;
            } else {
                kept.push((t, len));
            }
        }
        let caps: Vec<u128> = kept.iter().map(|r| r.1 - 1).collect();
        for (&(t, len), cut) in kept.iter().zip(shave(&caps, left)) {
            if cut > 0 {
                pieces.push(Piece { start: range_start(t, len), len: cut, whole: false });
            }
        }
        pieces
    }

    /// The least loaded nodes (not `giver`, with token room) to raise by `amount` positions in
    /// all, as many as it takes to weigh `weight` together (at most `max`), and the level they
    /// come up to (water filling from below; infinite when no node has room). Counting weight
    /// rather than nodes makes the rise of their ratios about the same whether they are light
    /// or heavy.
    pub(super) fn recipients(&self, giver: u32, amount: f64, weight: f64, max: usize) -> (f64, Vec<u32>) {
        let mut chosen = Vec::new();
        let (mut sum_w, mut sum_wl) = (0.0, 0.0);
        for key in &self.load {
            if chosen.len() == max || sum_w >= weight {
                break;
            }
            let node = self.slot(key.slot);
            if key.slot == giver || node.room() == 0 {
                continue;
            }
            if !chosen.is_empty() && key.load >= (sum_wl + amount) / sum_w {
                break;
            }
            sum_w += node.weight;
            sum_wl += node.weight * key.load;
            chosen.push(key.slot);
        }
        let level = if chosen.is_empty() { f64::INFINITY } else { (sum_wl + amount) / sum_w };
        (level, chosen)
    }

    /// Hands `pieces` (`amount` positions in all) of node `giver` to nodes below a common level:
    /// first, for free, to the owners of the tokens around each piece (the one before moves its
    /// token forward over the piece's lower end, the one after absorbs its upper end when the
    /// piece ends at the giver's token), then, largest piece first, to the recipients with the
    /// largest remaining demand, a new token each. A piece is cut only where it exceeds that
    /// demand by more than [`OVERSHOOT`] (a cut costs a token). The recipients weigh together
    /// about twice the giver's nominal count times the weight `amount` stands for, so that their
    /// ratios rise by about one part in 2V whatever their weights. Free takes spare the token
    /// room of nodes near their cap, which could otherwise take nothing.
    pub(super) fn give(&mut self, giver: u32, mut pieces: Vec<Piece>, amount: f64) {
        pieces.sort_by(|a, b| b.len.cmp(&a.len).then(a.start.cmp(&b.start)));
        let weight = 2.0 * f64::from(self.slot(giver).nominal) * amount / RING_F * self.total_weight;
        let max = 16 * pieces.len().max(1);
        let (level, recipients) = self.recipients(giver, amount, weight, max);
        let mut book = Book::new(self, giver, level, &recipients);
        let sliver = (to_positions(amount, RING) / (8 * recipients.len().max(1) as u128)).max(1);
        let mut touched = Vec::new();
        for piece in pieces {
            let (mut start, mut left) = (piece.start, piece.len);
            let last = advance(piece.start, piece.len);
            // The lower end, to the owner of the token before it.
            let before = self.tokens[&start];
            let take = book.free_take(self, before, left, sliver);
            if take > 0 {
                if take == left && piece.whole {
                    self.set_owner(last, before);
                } else {
                    self.insert_token(advance(start, take), before);
                }
                touched.push(advance(start, take));
                start = advance(start, take);
                left -= take;
            }
            // The upper end, to the owner of the token after the giver's.
            let mut upper = None;
            if piece.whole && left > 0 {
                let after = self.tokens[&self.succ_token(last)];
                let take = book.free_take(self, after, left, sliver);
                if take > 0 {
                    upper = Some(after);
                    left -= take;
                }
            }
            while left > 0 {
                let (owner, take) = match book.best() {
                    Some(i) => book.take(i, left, sliver),
                    // No room anywhere: the rest joins the previous owner's range, which the
                    // merge below absorbs without a new token.
                    None => (self.tokens[&start], left),
                };
                let end = advance(start, take);
                if take == left && piece.whole && upper.is_none() {
                    self.set_owner(end, owner);
                } else {
                    self.insert_token(end, owner);
                }
                touched.push(end);
                start = end;
                left -= take;
            }
            if let Some(after) = upper {
                self.set_owner(last, after);
                touched.push(last);
            }
        }
        for t in touched {
            self.merge_run(t);
        }
    }
}

//! Rendezvous scoring: the first index of the maximum score over node hashes.

/// How many scores [`argmax_blocks`] computes before reducing them: a fixed-size block the
/// compiler can unroll, then a short scalar argmax.
const BLOCK: usize = 8;

/// The plain scalar oracle: one score `f(h)` at a time, strictly greater replaces. `hashes`
/// must be non-empty.
#[cfg(test)]
pub(crate) fn argmax_scalar(hashes: &[u64], f: impl Fn(u64) -> u64) -> usize {
    let mut best = 0;
    let mut best_score = f(hashes[0]);
    for (i, &h) in hashes.iter().enumerate().skip(1) {
        let s = f(h);
        if s > best_score {
            best = i;
            best_score = s;
        }
    }
    best
}

/// Index of the first maximum of `f(h)` over non-empty `hashes`, computing scores in fixed
/// blocks: the portable kernel.
#[inline]
pub(crate) fn argmax_blocks(hashes: &[u64], f: impl Fn(u64) -> u64) -> usize {
    let mut best = 0usize;
    let mut best_score = f(hashes[0]);
    let mut base = 0usize;
    let mut chunks = hashes.chunks_exact(BLOCK);
    for chunk in &mut chunks {
        let mut scores = [0u64; BLOCK];
        for (s, &h) in scores.iter_mut().zip(chunk) {
            *s = f(h);
        }
        for (j, &s) in scores.iter().enumerate() {
            if s > best_score {
                best_score = s;
                best = base + j;
            }
        }
        base += BLOCK;
    }
    for (j, &h) in chunks.remainder().iter().enumerate() {
        let s = f(h);
        if s > best_score {
            best_score = s;
            best = base + j;
        }
    }
    best
}

//! Device-class shadow trees: for every class, a copy of each hierarchy holding only that
//! class's devices (`host0~ssd`), which `step take ROOT class C` walks. Built as Ceph builds
//! them before the first rule: roots in id order, classes in id order, depth first; a copy
//! keeps its original's item order and weights, a child copy weighs what it holds; a copy's id
//! is the one the text gives (`id -6 class ssd`) or the first free id from -1 down.

use std::collections::{BTreeSet, HashMap};

use super::algs::make_bucket;
use super::map::CrushMap;
use super::parse::add_bucket;

/// Builds every shadow bucket; returns `(original id, class) -> shadow id`.
pub(crate) fn populate(
    map: &mut CrushMap,
    given: &HashMap<(i32, u32), i32>,
    used: &BTreeSet<i32>,
) -> HashMap<(i32, u32), i32> {
    let mut contained = BTreeSet::new();
    for b in map.buckets.iter().flatten() {
        contained.extend(b.items.iter().copied().filter(|&i| i < 0));
    }
    let roots: Vec<i32> = map
        .buckets
        .iter()
        .flatten()
        .map(|b| b.id)
        .filter(|id| !contained.contains(id))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut out = HashMap::new();
    // The first free id only moves down (nothing is freed), so the search resumes where the
    // last one stopped instead of rescanning from -1 (quadratic on large maps).
    let mut free = -1;
    for root in roots {
        for class in 0..map.classes.len() as u32 {
            if clone(map, root, class, given, used, &mut out, &mut free).is_none() {
                // Ceph stops populating at the first copy it cannot make, and the rules that
                // take a class under it are then refused for want of a shadow bucket.
                return out;
            }
        }
    }
    out
}

/// The shadow copy of `original` for `class`, made (children first) unless it exists; `None`
/// where Ceph's copy fails: a uniform bucket takes only items of the weight it was made with,
/// and a copy is made empty (weight 0), so a uniform copy holding any weight cannot be built.
/// Iterative: a hostile map may nest deeper than the thread's stack.
fn clone(
    map: &mut CrushMap,
    original: i32,
    class: u32,
    given: &HashMap<(i32, u32), i32>,
    used: &BTreeSet<i32>,
    out: &mut HashMap<(i32, u32), i32>,
    free: &mut i32,
) -> Option<i32> {
    let mut stack = vec![original];
    while let Some(&b) = stack.last() {
        if out.contains_key(&(b, class)) {
            stack.pop();
            continue;
        }
        let Some(bucket) = map.bucket(b) else {
            stack.pop();
            continue;
        };
        let pending: Vec<i32> =
            bucket.items.iter().copied().filter(|&i| i < 0 && !out.contains_key(&(i, class))).collect();
        if let Some(&child) = pending.first() {
            stack.push(child);
            continue;
        }
        let (type_id, alg) = (bucket.type_id, bucket.alg);
        let mut items = Vec::new();
        let mut weights = Vec::new();
        for (&item, &w) in bucket.items.iter().zip(&bucket.weights) {
            if item >= 0 {
                if map.device_class.get(item as usize).copied().flatten() == Some(class) {
                    items.push(item);
                    weights.push(w);
                }
            } else {
                let copy = out[&(item, class)];
                items.push(copy);
                weights.push(map.bucket(copy).map_or(0, |c| c.weight));
            }
        }
        if alg == super::map::BucketAlg::Uniform && weights.iter().any(|&w| w != 0) {
            return None;
        }
        let id = match given.get(&(b, class)) {
            Some(&id) => id,
            None => {
                while map.bucket(*free).is_some() || used.contains(free) {
                    *free -= 1;
                }
                *free
            }
        };
        let name = format!("{}~{}", map.bucket_names.get(&b).map_or("", String::as_str), map.classes[class as usize]);
        add_bucket(map, make_bucket(id, type_id, alg, items, weights));
        map.bucket_names.insert(id, name);
        out.insert((b, class), id);
        stack.pop();
    }
    out.get(&(original, class)).copied()
}

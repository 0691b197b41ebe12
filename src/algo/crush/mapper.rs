//! The rule interpreter (`crush_do_rule`): `take`, `choose`/`chooseleaf` in `firstn` and
//! `indep` modes with Ceph's retry schedule and tunables, `emit`, and the `set_*` steps.

use super::hash::hash2;
use super::map::{CrushMap, Step};

/// The hole an `indep` rule leaves where it found no device (`CRUSH_ITEM_NONE`).
pub const ITEM_NONE: i32 = 0x7fff_ffff;
/// A position not filled yet during `indep` (`CRUSH_ITEM_UNDEF`).
const ITEM_UNDEF: i32 = 0x7fff_fffe;

/// Retry parameters of one `choose` step.
#[derive(Clone, Copy)]
struct Tries {
    tries: u32,
    recurse_tries: u32,
    local_retries: u32,
    local_fallback_retries: u32,
    vary_r: u32,
    stable: u32,
}

/// One mapping's inputs.
struct Ctx<'a> {
    map: &'a CrushMap,
    weights: &'a [u32],
    x: u32,
}

impl Ctx<'_> {
    /// Whether device `item` is out for this input: the reweight vector's hash test.
    #[inline]
    fn is_out(&self, item: i32) -> bool {
        let Some(&w) = self.weights.get(item as usize) else { return true };
        if w >= 0x10000 {
            return false;
        }
        if w == 0 {
            return true;
        }
        (hash2(self.x, item as u32) & 0xffff) >= w
    }

    #[inline]
    fn item_type(&self, item: i32) -> Option<i32> {
        if item >= 0 {
            Some(0)
        } else {
            self.map.bucket(item).map(|b| b.type_id)
        }
    }

    /// `crush_choose_firstn`: up to `numrep` distinct items of `type_id` under `bucket` into
    /// `out[outpos..]`, depth first, each replica retried by descending again with a higher `r`.
    #[allow(clippy::too_many_arguments)]
    fn choose_firstn(
        &self,
        bucket: i32,
        numrep: i32,
        type_id: i32,
        out: &mut [i32],
        mut outpos: usize,
        out_size: i32,
        t: Tries,
        recurse_to_leaf: bool,
        mut out2: Option<&mut [i32]>,
        parent_r: i32,
    ) -> usize {
        let mut count = out_size;
        let mut rep: i32 = if t.stable != 0 { 0 } else { outpos as i32 };
        while rep < numrep && count > 0 {
            let mut ftotal: u32 = 0;
            let mut skip_rep = false;
            let mut item = 0i32;
            'descent: loop {
                let mut in_id = bucket;
                let mut flocal: u32 = 0;
                loop {
                    let (mut collide, mut reject) = (false, true);
                    let r = (rep + parent_r).wrapping_add(ftotal as i32);
                    let Some(inb) = self.map.bucket(in_id) else {
                        skip_rep = true;
                        break 'descent;
                    };
                    if !inb.items.is_empty() {
                        item = if t.local_fallback_retries > 0
                            && flocal >= (inb.items.len() as u32 >> 1)
                            && flocal > t.local_fallback_retries
                        {
                            inb.perm_choose(self.x, r as u32)
                        } else {
                            inb.choose(self.x, r as u32)
                        };
                        if item >= self.map.max_devices() as i32 {
                            skip_rep = true;
                            break 'descent;
                        }
                        let Some(itemtype) = self.item_type(item) else {
                            skip_rep = true;
                            break 'descent;
                        };
                        if itemtype != type_id {
                            if item >= 0 {
                                skip_rep = true;
                                break 'descent;
                            }
                            in_id = item;
                            continue;
                        }
                        let checked = self.firstn_check(
                            item,
                            itemtype,
                            r,
                            out,
                            outpos,
                            count,
                            t,
                            recurse_to_leaf,
                            out2.as_deref_mut(),
                        );
                        (collide, reject) = checked;
                    }
                    if reject || collide {
                        ftotal += 1;
                        flocal += 1;
                        match firstn_retry(collide, flocal, ftotal, inb.items.len() as u32, &t) {
                            Retry::Bucket => continue,
                            Retry::Descent => continue 'descent,
                            Retry::GiveUp => skip_rep = true,
                        }
                    }
                    break 'descent;
                }
            }
            if !skip_rep {
                out[outpos] = item;
                outpos += 1;
                count -= 1;
            }
            rep += 1;
        }
        outpos
    }

    /// An item of the wanted type, checked: `(collides with an earlier replica, refused)`. A
    /// `chooseleaf` first descends under it for one leaf (into `out2[outpos]`, with its own
    /// tries and `r` as the tunables say); a device is refused when its reweight puts it out.
    #[allow(clippy::too_many_arguments)]
    fn firstn_check(
        &self,
        item: i32,
        itemtype: i32,
        r: i32,
        out: &[i32],
        outpos: usize,
        count: i32,
        t: Tries,
        recurse_to_leaf: bool,
        out2: Option<&mut [i32]>,
    ) -> (bool, bool) {
        let collide = out[..outpos].contains(&item);
        let mut reject = false;
        if !collide && recurse_to_leaf {
            let leaf_out = out2.expect("chooseleaf has a leaf vector");
            if item < 0 {
                let sub_r = if t.vary_r != 0 { r.wrapping_shr(t.vary_r - 1) } else { 0 };
                let sub = Tries { tries: t.recurse_tries, recurse_tries: 0, ..t };
                let numrep = if t.stable != 0 { 1 } else { outpos as i32 + 1 };
                let got = self.choose_firstn(item, numrep, 0, leaf_out, outpos, count, sub, false, None, sub_r);
                reject = got <= outpos;
            } else {
                leaf_out[outpos] = item;
            }
        }
        if !reject && itemtype == 0 {
            reject = self.is_out(item);
        }
        (collide, reject)
    }

    /// `crush_choose_indep`: `left` items of `type_id` into the fixed positions
    /// `out[outpos..outpos + left]`, breadth first; a position that finds nothing keeps a hole.
    #[allow(clippy::too_many_arguments)]
    fn choose_indep(
        &self,
        bucket: i32,
        mut left: i32,
        numrep: i32,
        type_id: i32,
        out: &mut [i32],
        outpos: usize,
        tries: u32,
        recurse_tries: u32,
        recurse_to_leaf: bool,
        mut out2: Option<&mut [i32]>,
        parent_r: i32,
    ) {
        let endpos = outpos + left.max(0) as usize;
        for rep in outpos..endpos {
            out[rep] = ITEM_UNDEF;
            if let Some(o2) = out2.as_deref_mut() {
                o2[rep] = ITEM_UNDEF;
            }
        }
        let mut ftotal: u32 = 0;
        while left > 0 && ftotal < tries {
            for rep in outpos..endpos {
                if out[rep] != ITEM_UNDEF {
                    continue;
                }
                let draw = Draw { bucket, rep, numrep, type_id, ftotal, parent_r, recurse_tries, recurse_to_leaf };
                match self.indep_draw(&draw, &out[outpos..endpos], out2.as_deref_mut()) {
                    Some(ITEM_NONE) => {
                        out[rep] = ITEM_NONE;
                        if let Some(o2) = out2.as_deref_mut() {
                            o2[rep] = ITEM_NONE;
                        }
                        left -= 1;
                    }
                    Some(item) => {
                        out[rep] = item;
                        left -= 1;
                    }
                    None => {}
                }
            }
            ftotal += 1;
        }
        for rep in outpos..endpos {
            if out[rep] == ITEM_UNDEF {
                out[rep] = ITEM_NONE;
            }
            if let Some(o2) = out2.as_deref_mut() {
                if o2[rep] == ITEM_UNDEF {
                    o2[rep] = ITEM_NONE;
                }
            }
        }
    }
}

/// One `indep` draw's inputs: position `rep` on attempt `ftotal`.
struct Draw {
    bucket: i32,
    rep: usize,
    numrep: i32,
    type_id: i32,
    ftotal: u32,
    parent_r: i32,
    recurse_tries: u32,
    recurse_to_leaf: bool,
}

impl Ctx<'_> {
    /// Descends from `d.bucket` for position `d.rep`: `Some(item)` to place, `Some(ITEM_NONE)`
    /// for a position that can never be filled (a hole), `None` to try again on the next
    /// attempt (a collision with `taken`, a leaf descent that found nothing, a device out). A
    /// `chooseleaf` writes its leaf to `out2[rep]` on the way, as Ceph does (even when the
    /// device then turns out to be out).
    fn indep_draw(&self, d: &Draw, taken: &[i32], mut out2: Option<&mut [i32]>) -> Option<i32> {
        let mut in_id = d.bucket;
        while let Some(inb) = self.map.bucket(in_id) {
            let uniform_fit =
                inb.alg == super::map::BucketAlg::Uniform && d.numrep != 0 && inb.items.len() as i32 % d.numrep == 0;
            let step = if uniform_fit { d.numrep + 1 } else { d.numrep };
            let r = (d.rep as i32).wrapping_add(d.parent_r).wrapping_add(step.wrapping_mul(d.ftotal as i32));
            if inb.items.is_empty() {
                return None;
            }
            let item = inb.choose(self.x, r as u32);
            if item >= self.map.max_devices() as i32 {
                return Some(ITEM_NONE);
            }
            let Some(itemtype) = self.item_type(item) else { return Some(ITEM_NONE) };
            if itemtype != d.type_id {
                if item >= 0 {
                    return Some(ITEM_NONE);
                }
                in_id = item;
                continue;
            }
            if taken.contains(&item) {
                return None;
            }
            if d.recurse_to_leaf {
                let o2 = out2.as_deref_mut().expect("chooseleaf has a leaf vector");
                if item < 0 {
                    self.choose_indep(item, 1, d.numrep, 0, o2, d.rep, d.recurse_tries, 0, false, None, r);
                    if o2[d.rep] == ITEM_NONE {
                        return None;
                    }
                } else {
                    o2[d.rep] = item;
                }
            }
            if itemtype == 0 && self.is_out(item) {
                return None;
            }
            return Some(item);
        }
        None
    }
}

/// Where `choose_firstn` goes after a refused item.
enum Retry {
    /// Draw again in the same bucket (local retries, the permutation fallback).
    Bucket,
    /// Descend again from the step's bucket with the next `r`.
    Descent,
    /// Leave this replica out.
    GiveUp,
}

/// Ceph's retry schedule: local retries on a collision, then the exhaustive local fallback,
/// then new descents until the tries run out.
fn firstn_retry(collide: bool, flocal: u32, ftotal: u32, size: u32, t: &Tries) -> Retry {
    let local = collide && flocal <= t.local_retries;
    let fallback = t.local_fallback_retries > 0 && flocal <= size + t.local_fallback_retries;
    if local || fallback {
        Retry::Bucket
    } else if ftotal < t.tries {
        Retry::Descent
    } else {
        Retry::GiveUp
    }
}

/// Scratch space for [`CrushRouter::map_x`](super::CrushRouter::map_x) and [`Pool::up`](super::Pool::up):
/// three vectors of the replica count, reused across calls (no allocation per mapping).
#[derive(Default, Clone, Debug)]
pub struct Workspace {
    a: Vec<i32>,
    b: Vec<i32>,
    c: Vec<i32>,
}

/// `crush_do_rule`: the devices rule `rule` maps input `x` to, at most `result_max` of them,
/// into `result` (cleared first). Holes of `indep` steps are [`ITEM_NONE`]. `weights` is the
/// reweight vector (16.16, one per device id; missing ids are out).
pub(crate) fn do_rule(
    map: &CrushMap,
    rule: u32,
    x: u32,
    result: &mut Vec<i32>,
    result_max: usize,
    weights: &[u32],
    ws: &mut Workspace,
) {
    result.clear();
    let Some(rule) = map.rule(rule) else { return };
    let tun = map.tunables;
    let ctx = Ctx { map, weights, x };
    for v in [&mut ws.a, &mut ws.b, &mut ws.c] {
        v.clear();
        v.resize(result_max, 0);
    }
    let (mut w, mut o, c) = (&mut ws.a, &mut ws.b, &mut ws.c);
    let mut wsize = 0usize;
    let mut choose_tries = tun.choose_total_tries + 1;
    let mut choose_leaf_tries = 0u32;
    let mut local_retries = tun.choose_local_tries;
    let mut local_fallback = tun.choose_local_fallback_tries;
    let mut vary_r = tun.chooseleaf_vary_r;
    let mut stable = tun.chooseleaf_stable;
    for &step in &rule.steps {
        match step {
            Step::Take(id) if result_max > 0 => {
                w[0] = id;
                wsize = 1;
            }
            Step::SetChooseTries(v) if v > 0 => choose_tries = v as u32,
            Step::SetChooseleafTries(v) if v > 0 => choose_leaf_tries = v as u32,
            Step::SetChooseLocalTries(v) if v >= 0 => local_retries = v as u32,
            Step::SetChooseLocalFallbackTries(v) if v >= 0 => local_fallback = v as u32,
            Step::SetChooseleafVaryR(v) if v >= 0 => vary_r = v as u32,
            Step::SetChooseleafStable(v) if v >= 0 => stable = v as u32,
            Step::Choose { leaf, firstn, num, type_id } => {
                if wsize == 0 {
                    continue;
                }
                let mut osize = 0usize;
                for &bno in &w[..wsize] {
                    let mut numrep = num;
                    if numrep <= 0 {
                        numrep += result_max as i32;
                        if numrep <= 0 {
                            continue;
                        }
                    }
                    if bno >= 0 || map.bucket(bno).is_none() {
                        continue;
                    }
                    if firstn {
                        let recurse_tries = if choose_leaf_tries != 0 {
                            choose_leaf_tries
                        } else if tun.chooseleaf_descend_once != 0 {
                            1
                        } else {
                            choose_tries
                        };
                        let t = Tries {
                            tries: choose_tries,
                            recurse_tries,
                            local_retries,
                            local_fallback_retries: local_fallback,
                            vary_r,
                            stable,
                        };
                        let room = (result_max - osize) as i32;
                        osize += ctx.choose_firstn(
                            bno,
                            numrep,
                            type_id,
                            &mut o[osize..],
                            0,
                            room,
                            t,
                            leaf,
                            Some(&mut c[osize..]),
                            0,
                        );
                    } else {
                        let out_size = (numrep as usize).min(result_max - osize);
                        let rt = if choose_leaf_tries != 0 { choose_leaf_tries } else { 1 };
                        ctx.choose_indep(
                            bno,
                            out_size as i32,
                            numrep,
                            type_id,
                            &mut o[osize..],
                            0,
                            choose_tries,
                            rt,
                            leaf,
                            Some(&mut c[osize..]),
                            0,
                        );
                        osize += out_size;
                    }
                }
                if leaf {
                    o[..osize].copy_from_slice(&c[..osize]);
                }
                std::mem::swap(&mut w, &mut o);
                wsize = osize;
            }
            Step::Emit => {
                for &item in &w[..wsize] {
                    if result.len() >= result_max {
                        break;
                    }
                    result.push(item);
                }
                wsize = 0;
            }
            _ => {}
        }
    }
}

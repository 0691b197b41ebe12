//! Objects to placement groups to devices, as a Ceph OSD map computes them for a pool.

use std::sync::Arc;

use super::hash::{hash2, str_hash};
use super::map::CrushMap;
use super::mapper::{do_rule, Workspace, ITEM_NONE};
use crate::error::{Error, Result};

/// `ceph_stable_mod`: `x` folded onto `b` buckets with `bmask` the next power of two minus one,
/// so that growing `b` splits buckets one at a time instead of reshuffling them.
#[inline]
pub fn ceph_stable_mod(x: u32, b: u32, bmask: u32) -> u32 {
    if (x & bmask) < b {
        x & bmask
    } else {
        x & (bmask >> 1)
    }
}

/// The mask Ceph keeps beside a pg count: the next power of two minus one.
fn pg_mask(n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        u32::MAX >> (n - 1).leading_zeros()
    }
}

/// A pool: its id, placement-group count and size, the rule it maps with and the reweight
/// vector of the OSD map (`ceph osd reweight`/`out`). `pgp_num` equals `pg_num` and the
/// `hashpspool` flag is set, as on every pool Ceph creates today.
///
/// Not modelled: upmap exceptions, `pg_temp`, primary affinity, down OSDs (every device is
/// taken as up).
#[derive(Clone, Debug)]
pub struct Pool {
    map: Arc<CrushMap>,
    id: u32,
    pg_num: u32,
    pg_mask: u32,
    size: usize,
    rule: u32,
    erasure: bool,
    weights: Vec<u32>,
}

impl Pool {
    /// Pool `id` over `map` with `pg_num` placement groups of `size` replicas, mapped by rule
    /// `rule` (name or id), every device in.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a missing rule, `pg_num` 0 or `size` 0 or above 64.
    pub fn new(map: Arc<CrushMap>, id: u32, pg_num: u32, size: usize, rule: &str) -> Result<Pool> {
        let rule_id = map.rule_id(rule).ok_or_else(|| Error::InvalidParameter {
            name: "rule",
            reason: format!("{rule:?} is not a rule of the map"),
        })?;
        if pg_num == 0 {
            return Err(Error::InvalidParameter { name: "pg_num", reason: "must be at least 1".into() });
        }
        if size == 0 || size > 64 {
            return Err(Error::InvalidParameter { name: "size", reason: format!("{size} must be between 1 and 64") });
        }
        let weights = vec![0x10000; map.max_devices()];
        let erasure = map.rule_is_erasure(rule_id);
        Ok(Pool { map, id, pg_num, pg_mask: pg_mask(pg_num), size, rule: rule_id, erasure, weights })
    }

    /// The same pool with device `name` reweighted to `weight` (0..=1; 0 = out).
    ///
    /// # Errors
    /// [`Error::UnknownNode`], or [`Error::InvalidParameter`] for a weight outside 0..=1.
    pub fn with_reweight(mut self, name: &str, weight: f64) -> Result<Pool> {
        let id = self.map.device_id(name).ok_or_else(|| Error::UnknownNode { name: name.to_owned() })?;
        self.weights[id as usize] = super::reweight_fixed(weight)?;
        Ok(self)
    }

    /// The pool id.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The placement-group count.
    pub fn pg_num(&self) -> u32 {
        self.pg_num
    }

    /// The map.
    pub fn map(&self) -> &Arc<CrushMap> {
        &self.map
    }

    /// The placement group (its seed, `ps`) object `name` belongs to.
    pub fn object_pg(&self, name: &[u8]) -> u32 {
        ceph_stable_mod(str_hash(name), self.pg_num, self.pg_mask)
    }

    /// The pg id as Ceph prints it: `POOL.PS` with `PS` in hex (`1.4b`).
    pub fn pgid(&self, ps: u32) -> String {
        format!("{}.{ps:x}", self.id)
    }

    /// CRUSH's input for placement group `ps`: the `hashpspool` seed.
    pub fn placement_seed(&self, ps: u32) -> u32 {
        hash2(ceph_stable_mod(ps, self.pg_num, self.pg_mask), self.id)
    }

    /// The up set of placement group `ps` into `out`: the rule's devices for the pool's size;
    /// a replicated pool drops holes, an erasure pool keeps them as [`ITEM_NONE`].
    pub fn up(&self, ps: u32, out: &mut Vec<i32>, ws: &mut Workspace) {
        do_rule(&self.map, self.rule, self.placement_seed(ps), out, self.size, &self.weights, ws);
        if !self.erasure {
            out.retain(|&d| d != ITEM_NONE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_folding() {
        assert_eq!(pg_mask(1), 0);
        assert_eq!(pg_mask(2), 1);
        assert_eq!(pg_mask(768), 1023);
        assert_eq!(pg_mask(1024), 1023);
        // 768 PGs: 0x3ff & x below 768 stays, above folds onto the lower half.
        assert_eq!(ceph_stable_mod(0x2ff, 768, 1023), 0x2ff);
        assert_eq!(ceph_stable_mod(0x3ff, 768, 1023), 0x1ff);
    }
}

//! A compiled CRUSH map: devices, types, buckets (with the device-class shadow trees), rules and
//! tunables, as `crushtool -c` builds them from the text form.

use std::collections::HashMap;

/// A bucket's selection algorithm. Only [`BucketAlg::Straw2`] (every bucket Ceph has created since
/// Luminous) and the three simple legacy algorithms are computed; `straw` (v1) is refused when
/// the map is parsed, naming the bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BucketAlg {
    /// A random permutation of equally weighted items.
    Uniform,
    /// A linked list: each item is tested against the weight of the items after it.
    List,
    /// A weighted binary tree.
    Tree,
    /// Exponential draws `ln(u) / weight`; the highest wins.
    Straw2,
}

impl BucketAlg {
    /// The name the map text uses.
    pub fn name(self) -> &'static str {
        match self {
            BucketAlg::Uniform => "uniform",
            BucketAlg::List => "list",
            BucketAlg::Tree => "tree",
            BucketAlg::Straw2 => "straw2",
        }
    }
}

/// One bucket: its items (devices `>= 0`, buckets `< 0`) with their 16.16 fixed-point weights.
#[derive(Clone, Debug)]
pub(crate) struct Bucket {
    pub(crate) id: i32,
    pub(crate) type_id: i32,
    pub(crate) alg: BucketAlg,
    pub(crate) items: Vec<i32>,
    pub(crate) weights: Vec<u32>,
    /// Straw2 buckets: each weight's divisor (unused for a zero weight).
    pub(crate) divisors: Vec<super::ln::Divisor>,
    /// The sum of `weights` (what a parent bucket's item carries by default).
    pub(crate) weight: u32,
    /// List buckets: the running sum of the weights up to and including each item.
    pub(crate) sum_weights: Vec<u32>,
    /// Tree buckets: the node weights of the implicit binary tree.
    pub(crate) node_weights: Vec<u32>,
}

/// The rules' tunables (`tunable NAME VALUE` lines). A map without a line for a tunable gets
/// the legacy (argonaut) value, as `crushtool -c` does, so a file maps the same forever.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tunables {
    /// Local retries on a collision (legacy 2, current 0).
    pub choose_local_tries: u32,
    /// Local exhaustive retries through a permutation (legacy 5, current 0).
    pub choose_local_fallback_tries: u32,
    /// Total descents before a replica is given up (legacy 19, current 50).
    pub choose_total_tries: u32,
    /// One descent per leaf in `chooseleaf` (legacy 0, bobtail and later 1).
    pub chooseleaf_descend_once: u32,
    /// Pass the parent's `r` down to `chooseleaf` (legacy 0, firefly and later 1).
    pub chooseleaf_vary_r: u32,
    /// Start every `chooseleaf` descent at replica 0 (legacy and hammer 0, jewel and later 1).
    pub chooseleaf_stable: u32,
    /// How straw (v1) buckets compute their straws; kept for round trips only.
    pub straw_calc_version: u32,
    /// Bucket algorithms a cluster may create; kept for round trips only.
    pub allowed_bucket_algs: u32,
}

impl Tunables {
    /// The legacy (argonaut) profile: what a map without `tunable` lines has.
    pub const LEGACY: Tunables = Tunables {
        choose_local_tries: 2,
        choose_local_fallback_tries: 5,
        choose_total_tries: 19,
        chooseleaf_descend_once: 0,
        chooseleaf_vary_r: 0,
        chooseleaf_stable: 0,
        straw_calc_version: 0,
        allowed_bucket_algs: 22,
    };

    /// The current (jewel and later, `optimal`) profile.
    pub const OPTIMAL: Tunables = Tunables {
        choose_local_tries: 0,
        choose_local_fallback_tries: 0,
        choose_total_tries: 50,
        chooseleaf_descend_once: 1,
        chooseleaf_vary_r: 1,
        chooseleaf_stable: 1,
        straw_calc_version: 1,
        allowed_bucket_algs: 54,
    };

    pub(crate) fn set(&mut self, name: &str, value: u32) -> bool {
        let slot = match name {
            "choose_local_tries" => &mut self.choose_local_tries,
            "choose_local_fallback_tries" => &mut self.choose_local_fallback_tries,
            "choose_total_tries" => &mut self.choose_total_tries,
            "chooseleaf_descend_once" => &mut self.chooseleaf_descend_once,
            "chooseleaf_vary_r" => &mut self.chooseleaf_vary_r,
            "chooseleaf_stable" => &mut self.chooseleaf_stable,
            "straw_calc_version" => &mut self.straw_calc_version,
            "allowed_bucket_algs" => &mut self.allowed_bucket_algs,
            _ => return false,
        };
        *slot = value;
        true
    }
}

/// One step of a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// `take ITEM [class C]` (the class already resolved to the shadow bucket's id).
    Take(i32),
    /// `choose|chooseleaf firstn|indep N type T`.
    Choose {
        leaf: bool,
        firstn: bool,
        num: i32,
        type_id: i32,
    },
    Emit,
    SetChooseTries(i32),
    SetChooseleafTries(i32),
    SetChooseLocalTries(i32),
    SetChooseLocalFallbackTries(i32),
    SetChooseleafVaryR(i32),
    SetChooseleafStable(i32),
}

/// A rule: its id, name and steps.
#[derive(Clone, Debug)]
pub(crate) struct Rule {
    pub(crate) id: u32,
    pub(crate) name: String,
    pub(crate) erasure: bool,
    pub(crate) steps: Vec<Step>,
}

/// A parsed and compiled CRUSH map. Build it with [`CrushMap::parse`] from the text
/// `crushtool -d` prints (what `ceph osd getcrushmap | crushtool -d -` gives an operator).
///
/// Cost: one pass over the text; the shadow trees of device classes double (per class) the
/// bucket count, as in Ceph. Immutable once built; cheap to share behind an `Arc`.
#[derive(Clone, Debug)]
pub struct CrushMap {
    pub(crate) tunables: Tunables,
    /// Device names by id (`None` for unused ids below the largest).
    pub(crate) devices: Vec<Option<String>>,
    /// Device class ids by device id.
    pub(crate) device_class: Vec<Option<u32>>,
    pub(crate) types: HashMap<i32, String>,
    /// Buckets by `-1 - id`, shadow buckets included.
    pub(crate) buckets: Vec<Option<Bucket>>,
    pub(crate) bucket_names: HashMap<i32, String>,
    pub(crate) rules: Vec<Option<Rule>>,
    pub(crate) classes: Vec<String>,
}

impl CrushMap {
    /// The map's tunables.
    pub fn tunables(&self) -> Tunables {
        self.tunables
    }

    /// The name of bucket type `id` (`host`), if the map defines it.
    pub fn type_name(&self, id: i32) -> Option<&str> {
        self.types.get(&id).map(String::as_str)
    }

    /// One more than the largest device id (CRUSH's `max_devices`).
    pub fn max_devices(&self) -> usize {
        self.devices.len()
    }

    /// The name of device `id` (`osd.3`), if the map defines it.
    pub fn device_name(&self, id: i32) -> Option<&str> {
        usize::try_from(id).ok().and_then(|i| self.devices.get(i)).and_then(|d| d.as_deref())
    }

    /// The id of the device named `name`.
    pub fn device_id(&self, name: &str) -> Option<i32> {
        self.devices.iter().position(|d| d.as_deref() == Some(name)).map(|i| i as i32)
    }

    /// The devices, `(id, name)`, in id order.
    pub fn devices(&self) -> impl Iterator<Item = (i32, &str)> {
        self.devices.iter().enumerate().filter_map(|(i, d)| d.as_deref().map(|n| (i as i32, n)))
    }

    /// The rule with this id, or named `name` (a name is tried first, then a number).
    pub fn rule_id(&self, name: &str) -> Option<u32> {
        let named = self.rules.iter().flatten().find(|r| r.name == name).map(|r| r.id);
        named.or_else(|| name.parse::<u32>().ok().filter(|&id| self.rule(id).is_some()))
    }

    /// The rules, `(id, name)`, in id order.
    pub fn rules(&self) -> impl Iterator<Item = (u32, &str)> {
        self.rules.iter().flatten().map(|r| (r.id, r.name.as_str()))
    }

    /// Whether rule `id` is an erasure rule (its holes are kept in place).
    pub fn rule_is_erasure(&self, id: u32) -> bool {
        self.rule(id).is_some_and(|r| r.erasure)
    }

    pub(crate) fn rule(&self, id: u32) -> Option<&Rule> {
        self.rules.get(id as usize).and_then(|r| r.as_ref())
    }

    #[inline]
    pub(crate) fn bucket(&self, id: i32) -> Option<&Bucket> {
        let index = usize::try_from(-1i64 - i64::from(id)).ok()?;
        self.buckets.get(index).and_then(|b| b.as_ref())
    }

    /// The weights every device has before any reweight: 1.0 (0x10000) for a device that
    /// some bucket holds, 0 for an id no bucket holds (as `crushtool --test` sets them).
    pub fn default_reweights(&self) -> Vec<u32> {
        let mut w = vec![0u32; self.devices.len()];
        for b in self.buckets.iter().flatten() {
            for &item in &b.items {
                if let Ok(i) = usize::try_from(item) {
                    if let Some(slot) = w.get_mut(i) {
                        *slot = 0x10000;
                    }
                }
            }
        }
        w
    }

    /// Bytes that identify what the map computes (tunables, devices, buckets with their
    /// weights, rules): equal maps give equal bytes, whatever the text's comments and order.
    pub fn canonical_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let t = self.tunables;
        for v in [
            t.choose_local_tries,
            t.choose_local_fallback_tries,
            t.choose_total_tries,
            t.chooseleaf_descend_once,
            t.chooseleaf_vary_r,
            t.chooseleaf_stable,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for (id, name) in self.devices() {
            out.extend_from_slice(&id.to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.push(0);
        }
        for b in self.buckets.iter().flatten() {
            out.extend_from_slice(&b.id.to_le_bytes());
            out.extend_from_slice(&b.type_id.to_le_bytes());
            out.extend_from_slice(b.alg.name().as_bytes());
            for (&i, &w) in b.items.iter().zip(&b.weights) {
                out.extend_from_slice(&i.to_le_bytes());
                out.extend_from_slice(&w.to_le_bytes());
            }
            out.push(0xff);
        }
        for r in self.rules.iter().flatten() {
            out.extend_from_slice(&r.id.to_le_bytes());
            out.extend_from_slice(format!("{:?}", r.steps).as_bytes());
        }
        out
    }
}

//! The Rust cores of the drop-ins in `hashroute.compat`: uhashring's `HashRing` (both modes)
//! and pymemcache's `RendezvousHash`. The Python classes subclass these, so `get_node` is one
//! call into Rust with no Python frame in between; configuration handling stays in Python,
//! where it mirrors the original line by line.
//!
//! Why not the kernel's `Ketama` here: uhashring lets every node have its own `vnodes`, takes
//! `replicas` in ketama mode, and keeps the *last* node written on equal points (a Python
//! dict); the kernel's `uhashring` / `uhashring-md5` variants cover the default settings (and
//! the CLI), this core covers every setting. Both are checked against the real uhashring.

use md5::{Digest, Md5};
use pyo3::exceptions::{PyIndexError, PyMemoryError};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::keys::{formatted_low_bytes, str_utf8};

/// The most points a continuum takes (2^25: about 1 GB while it is built).
const MAX_POINTS: u64 = 1 << 25;

/// A uhashring continuum: sorted points and the node object owning each.
#[pyclass(module = "hashroute._hashroute", subclass)]
pub(crate) struct UhashringCore {
    /// Ketama mode (`hash_fn="ketama"`): 32-bit points; else whole 128-bit MD5 points.
    ketama: bool,
    points: Vec<u128>,
    /// The top 64 bits of each point (ketama: the point): searched first, branch-free; the
    /// whole points decide only between points sharing the key's top 64 bits.
    top: Vec<u64>,
    /// `radix[b]`: the first point whose top `RADIX_BITS` bits are `>= b` (`2^bits + 1`
    /// entries): a key's search starts within its bucket, a few points wide.
    radix: Vec<u32>,
    radix_bits: u32,
    owners: Vec<u32>,
    /// The node objects, in the order they were written.
    nodes: Vec<Py<PyAny>>,
}

/// uhashring's key hash of UTF-8 bytes: `int(md5(x).hexdigest(), 16)`, or ketama's
/// little-endian `u32` of digest bytes `4r..4r+4` for replica `r`.
fn md5(bytes: &[u8]) -> [u8; 16] {
    Md5::digest(bytes).into()
}

fn ketama_word(d: &[u8; 16], replica: usize) -> u128 {
    let r = replica * 4;
    u128::from(u32::from_le_bytes([d[r], d[r + 1], d[r + 2], d[r + 3]]))
}

impl UhashringCore {
    /// uhashring's key hash of `str(key)`, as the top 64 bits (ketama: the 32-bit hash) and,
    /// when that is not enough to place the key, the whole 128-bit value.
    fn key_pos(&self, key: &Bound<'_, PyAny>) -> PyResult<usize> {
        with_str_utf8(key, |bytes| {
            // The kernel's MD5: the digest's first 8 bytes, little-endian.
            let head = hashroute::KeyHasher::Md5.hash(bytes);
            if self.ketama {
                return self.wrap(self.search(head & 0xFFFF_FFFF));
            }
            let t = head.swap_bytes();
            let i = self.search(t);
            if i > 0 && self.top[i - 1] == t {
                // A point shares the key's top 64 bits: compare all 128.
                let h = u128::from_be_bytes(md5(bytes));
                return self.wrap(self.points.partition_point(|&x| x <= h));
            }
            self.wrap(i)
        })
    }

    fn key_point(&self, key: &Bound<'_, PyAny>) -> PyResult<u128> {
        with_str_utf8(key, |bytes| {
            let d = md5(bytes);
            if self.ketama {
                ketama_word(&d, 0)
            } else {
                u128::from_be_bytes(d)
            }
        })
    }

    /// The first point whose `top` is greater than `t`: its radix bucket, then a branch-free
    /// search inside it.
    fn search(&self, t: u64) -> usize {
        let shift = if self.ketama { 32 - self.radix_bits } else { 64 - self.radix_bits };
        let b = (t >> shift) as usize;
        let (lo, hi) = (self.radix[b] as usize, self.radix[b + 1] as usize);
        lo + upper_bound(&self.top[lo..hi], t)
    }

    /// Sets `top` and its radix index from the sorted `points`.
    fn index(&mut self) {
        let ketama = self.ketama;
        self.top = self.points.iter().map(|&p| if ketama { p as u64 } else { (p >> 64) as u64 }).collect();
        // About one point per bucket, at most 2^16 buckets (256 KB).
        let bits = (usize::BITS - self.top.len().leading_zeros()).clamp(1, 16);
        let shift = if ketama { 32 - bits } else { 64 - bits };
        let mut radix = vec![0u32; (1 << bits) + 1];
        let mut i = 0usize;
        for (b, slot) in radix.iter_mut().enumerate() {
            while i < self.top.len() && ((self.top[i] >> shift) as usize) < b {
                i += 1;
            }
            *slot = i as u32;
        }
        self.radix = radix;
        self.radix_bits = bits;
    }

    /// uhashring's `_get_pos` wrap: past the last point is position 0.
    fn wrap(&self, p: usize) -> usize {
        if p == self.points.len() {
            0
        } else {
            p
        }
    }
}

/// `f` of the UTF-8 of `str(key)` (uhashring hashes `str(key).encode("utf-8")`).
fn with_str_utf8<R>(key: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
    if let Ok(s) = key.downcast_exact::<PyString>() {
        return Ok(f(s.to_cow()?.as_bytes()));
    }
    let mut buf = Vec::new();
    str_utf8(key, &mut buf)?;
    Ok(f(&buf))
}

/// The first index whose value is greater than `x` (`len` when none): a branch-free binary
/// search (conditional moves), since a key's position is unpredictable.
fn upper_bound(v: &[u64], x: u64) -> usize {
    if v.is_empty() {
        return 0;
    }
    let (mut base, mut size) = (0usize, v.len());
    while size > 1 {
        let half = size / 2;
        let mid = base + half;
        base = if v[mid] <= x { mid } else { base };
        size -= half;
    }
    base + usize::from(v[base] <= x)
}

#[pymethods]
impl UhashringCore {
    /// An empty continuum (the Python subclass's `__init__` configures it).
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyAny>, _kwargs: Option<&Bound<'_, PyAny>>) -> UhashringCore {
        UhashringCore {
            ketama: false,
            points: Vec::new(),
            top: Vec::new(),
            radix: vec![0, 0, 0],
            radix_bits: 1,
            owners: Vec::new(),
            nodes: Vec::new(),
        }
    }

    /// Rebuilds the continuum from `entries`, `(node, points)` in the ring dict's write order:
    /// point `w` of `node` is `MD5(f"{node}-{w}")` (ketama: `replicas` words of it). On equal
    /// points the node written last keeps it, as in uhashring's dict. The digests are computed
    /// with the GIL released.
    fn _build(
        &mut self,
        py: Python<'_>,
        entries: Vec<(Py<PyAny>, u64)>,
        ketama: bool,
        replicas: usize,
    ) -> PyResult<()> {
        if ketama && replicas > 4 {
            return Err(PyIndexError::new_err("index out of range"));
        }
        let mut names = Vec::with_capacity(entries.len());
        let mut buf = Vec::new();
        for (node, _) in &entries {
            let formatted = node.bind(py).call_method1(pyo3::intern!(py, "__format__"), ("",))?;
            str_utf8(&formatted, &mut buf)?;
            names.push(buf.clone());
        }
        let counts: Vec<u64> = entries.iter().map(|(_, c)| *c).collect();
        let per = if ketama { replicas as u64 } else { 1 };
        let total = counts.iter().fold(0u64, |t, &c| t.saturating_add(c.saturating_mul(per)));
        if total > MAX_POINTS {
            // uhashring would build it (for hours, in Python); a continuum of this size is a
            // mistake, refused before any memory is taken.
            return Err(PyMemoryError::new_err(format!(
                "a ring of {total} points exceeds hashroute's cap of {MAX_POINTS} (vnodes x weight per node)"
            )));
        }
        let (points, owners) = py.allow_threads(move || continuum(&names, &counts, ketama, replicas));
        self.ketama = ketama;
        self.points = points;
        self.owners = owners;
        self.nodes = entries.into_iter().map(|(n, _)| n).collect();
        self.index();
        Ok(())
    }

    /// The node owning `key` (`str(key)` hashed as uhashring does), or `None` when the ring is
    /// empty.
    fn get_node(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyAny>>> {
        if self.points.is_empty() {
            return Ok(None);
        }
        let pos = self.key_pos(key)?;
        Ok(Some(self.nodes[self.owners[pos] as usize].clone_ref(py)))
    }

    /// The index of `key`'s point (uhashring's `get_node_pos`), `None` when empty.
    fn _pos(&self, key: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        if self.points.is_empty() {
            return Ok(None);
        }
        Ok(Some(self.key_pos(key)?))
    }

    /// uhashring's `hashi(key)`.
    fn _hashi(&self, key: &Bound<'_, PyAny>) -> PyResult<u128> {
        self.key_point(key)
    }

    /// `(point, node)` at index `pos`.
    fn _at(&self, py: Python<'_>, pos: usize) -> Option<(u128, Py<PyAny>)> {
        let p = *self.points.get(pos)?;
        Some((p, self.nodes[self.owners[pos] as usize].clone_ref(py)))
    }

    /// Every `(point, node)`, ascending.
    fn _points(&self, py: Python<'_>) -> Vec<(u128, Py<PyAny>)> {
        self.points.iter().zip(&self.owners).map(|(&p, &o)| (p, self.nodes[o as usize].clone_ref(py))).collect()
    }

    /// The nodes uhashring's `range(key, size, unique)` visits, in order: clockwise from the
    /// key's point, once each when `unique`, stopping when `size` are produced.
    #[pyo3(signature = (key, size, unique))]
    fn _walk(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        size: Option<usize>,
        unique: bool,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let mut out = Vec::new();
        if self.points.is_empty() {
            return Ok(out);
        }
        let pos = self.key_pos(key)?;
        let mut seen = vec![false; self.nodes.len()];
        let n = self.points.len();
        for i in (pos..n).chain(0..pos) {
            let o = self.owners[i] as usize;
            if unique {
                if seen[o] {
                    continue;
                }
                seen[o] = true;
            }
            out.push(self.nodes[o].clone_ref(py));
            if Some(out.len()) == size {
                break;
            }
        }
        Ok(out)
    }

    /// Number of distinct points.
    fn _size(&self) -> usize {
        self.points.len()
    }
}

/// The sorted continuum: points and owner indices, the last writer keeping equal points.
fn continuum(names: &[Vec<u8>], counts: &[u64], ketama: bool, replicas: usize) -> (Vec<u128>, Vec<u32>) {
    let per = if ketama { replicas } else { 1 };
    let total: u64 = counts.iter().map(|&c| c.saturating_mul(per as u64)).sum();
    let mut pairs: Vec<(u128, u32)> = Vec::with_capacity(total as usize);
    let mut buf = Vec::with_capacity(64);
    for (owner, (name, &count)) in names.iter().zip(counts).enumerate() {
        for w in 0..count {
            buf.clear();
            buf.extend_from_slice(name);
            buf.push(b'-');
            buf.extend_from_slice(w.to_string().as_bytes());
            let d = md5(&buf);
            if ketama {
                pairs.extend((0..replicas).map(|r| (ketama_word(&d, r), owner as u32)));
            } else {
                pairs.push((u128::from_be_bytes(d), owner as u32));
            }
        }
    }
    // Stable: equal points stay in write order, and the last of them is kept.
    pairs.sort_by_key(|&(p, _)| p);
    let mut points: Vec<u128> = Vec::with_capacity(pairs.len());
    let mut owners: Vec<u32> = Vec::with_capacity(pairs.len());
    for (p, o) in pairs {
        if points.last() == Some(&p) {
            *owners.last_mut().unwrap_or(&mut 0) = o;
        } else {
            points.push(p);
            owners.push(o);
        }
    }
    (points, owners)
}

/// pymemcache's rendezvous hash: `murmur3_32(f"{node}-{key}", seed)`, highest score wins.
#[pyclass(module = "hashroute._hashroute", subclass)]
pub(crate) struct RendezvousCore {
    seed: u32,
    nodes: Vec<RendezvousNode>,
}

/// One node of [`RendezvousCore`].
struct RendezvousNode {
    object: Py<PyAny>,
    /// `f"{node}-"` as pymemcache's murmur3_32 sees it (one byte per character).
    prefix: Vec<u8>,
    /// `str(node)`, compared on equal scores, and the same as a Python `str`.
    text: String,
    py_text: Py<PyString>,
}

/// The winner so far: a node, or (after a tie) the larger of two `str`s, as pymemcache keeps.
enum Winner {
    Node(usize),
    Str(String, Py<PyString>),
}

#[pymethods]
impl RendezvousCore {
    /// No nodes (the Python subclass's `__init__` configures it).
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyAny>, _kwargs: Option<&Bound<'_, PyAny>>) -> RendezvousCore {
        RendezvousCore { seed: 0, nodes: Vec::new() }
    }

    /// Sets the node list (in order) and the seed (its low 32 bits are what murmur3_32 uses).
    fn _set_nodes(&mut self, py: Python<'_>, nodes: Vec<Py<PyAny>>, seed: u32) -> PyResult<()> {
        let mut out = Vec::with_capacity(nodes.len());
        for node in nodes {
            let mut bytes = Vec::new();
            formatted_low_bytes(node.bind(py), &mut bytes)?;
            bytes.push(b'-');
            let s = node.bind(py).str()?;
            out.push(RendezvousNode {
                object: node,
                prefix: bytes,
                text: s.to_string_lossy().into_owned(),
                py_text: s.unbind(),
            });
        }
        self.nodes = out;
        self.seed = seed;
        Ok(())
    }

    /// The node with the highest `murmur3_32(f"{node}-{key}", seed)`; on equal scores the
    /// larger `str(node)` (as a `str`, as pymemcache returns it); `None` without nodes.
    fn get_node(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyAny>>> {
        if self.nodes.is_empty() {
            return Ok(None);
        }
        let mut key_bytes = Vec::with_capacity(64);
        formatted_low_bytes(key, &mut key_bytes)?;
        let hasher = hashroute::KeyHasher::Murmur3X86_32 { seed: self.seed };
        let mut buf = Vec::with_capacity(128);
        let mut high: i64 = -1;
        let mut winner = Winner::Node(0);
        for (i, node) in self.nodes.iter().enumerate() {
            buf.clear();
            buf.extend_from_slice(&node.prefix);
            buf.extend_from_slice(&key_bytes);
            let score = hasher.hash(&buf) as i64;
            if score > high {
                (high, winner) = (score, Winner::Node(i));
            } else if score == high {
                let (ws, wpy) = match &winner {
                    Winner::Node(j) => (&self.nodes[*j].text, &self.nodes[*j].py_text),
                    Winner::Str(ws, wpy) => (ws, wpy),
                };
                // max(str(node), str(winner)): the first of equal strings is kept.
                winner = if node.text > *ws {
                    Winner::Str(node.text.clone(), node.py_text.clone_ref(py))
                } else {
                    Winner::Str(ws.clone(), wpy.clone_ref(py))
                };
            }
        }
        Ok(Some(match winner {
            Winner::Node(i) => self.nodes[i].object.clone_ref(py),
            Winner::Str(_, s) => s.into_any(),
        }))
    }
}

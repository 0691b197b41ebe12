//! `hashroute.Router`: a configured kernel router ([`AnyRouter`]) with the CLI's names.

use std::sync::Arc;

use hashroute::{Algorithm, AnyRouter, KetamaVariant, KeyHasher, Node, NodeId, NodeSet, Router as _, RouterSpec};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use crate::errors::{io, to_py};
use crate::keys::key_bytes;

/// A router of any of the kernel's algorithms, configured with the CLI's names.
///
/// Immutable: `with_node`, `without_node` and `with_weight` return new routers, so one router
/// can be shared between threads. `route` returns the node's name as one interned `str` per
/// node (no allocation per call).
#[pyclass(module = "hashroute", name = "Router", frozen)]
pub(crate) struct Router {
    inner: Arc<AnyRouter>,
    /// One Python `str` per node, indexed by [`NodeId`].
    names: Vec<Py<PyString>>,
}

/// The configuration keywords, as the CLI's flags name them.
struct Options<'a> {
    algo: &'a str,
    vnodes: Option<u64>,
    hash: Option<&'a str>,
    seed: Option<u64>,
    variant: Option<&'a str>,
    table_size: Option<u64>,
    probes: Option<u32>,
    capacity: Option<u32>,
    tokens_per_node: Option<u32>,
}

impl Options<'_> {
    /// The validated [`RouterSpec`], as `hashroute route --algo ...` builds it.
    fn spec(&self) -> PyResult<RouterSpec> {
        let algorithm = Algorithm::from_name(self.algo).map_err(to_py)?;
        let mut spec = RouterSpec::new(algorithm);
        spec.vnodes = self.vnodes;
        spec.table_size = self.table_size;
        spec.probes = self.probes;
        spec.capacity = self.capacity;
        spec.tokens_per_node = self.tokens_per_node;
        spec.ketama_variant = self.variant.map(KetamaVariant::from_name).transpose().map_err(to_py)?;
        spec.hasher = match (self.hash, self.seed) {
            (None, None) => None,
            (Some(name), seed) => Some(KeyHasher::from_name(name, seed.unwrap_or(0)).map_err(to_py)?),
            (None, Some(seed)) => Some(KeyHasher::from_name(algorithm.default_hasher().name(), seed).map_err(to_py)?),
        };
        spec.validate().map_err(to_py)?;
        Ok(spec)
    }
}

/// The node set of `nodes`: a list (or tuple) of names, or a dict `{name: weight}`; the names'
/// Python strings, kept so that routes return the caller's own objects.
fn node_set(nodes: &Bound<'_, PyAny>) -> PyResult<(NodeSet, Vec<Py<PyString>>)> {
    let mut list = Vec::new();
    let mut names = Vec::new();
    let mut push = |name: &Bound<'_, PyAny>, weight: f64| -> PyResult<()> {
        let Ok(s) = name.downcast::<PyString>() else {
            return Err(PyTypeError::new_err(format!("a node name is a str, not {}", name.get_type().name()?)));
        };
        list.push(Node::new(s.to_cow()?.as_ref()).with_weight(weight));
        names.push(s.clone().unbind());
        Ok(())
    };
    if let Ok(dict) = nodes.downcast::<PyDict>() {
        for (name, weight) in dict.iter() {
            push(&name, weight.extract::<f64>()?)?;
        }
    } else if nodes.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err("nodes is a list of names or a dict {name: weight}, not a str"));
    } else {
        for name in nodes.try_iter()? {
            push(&name?, 1.0)?;
        }
    }
    Ok((NodeSet::new(list).map_err(to_py)?, names))
}

impl Router {
    /// Wraps `inner`, interning its node names (`given` are reused where they match).
    fn wrap(py: Python<'_>, inner: AnyRouter, given: &[Py<PyString>]) -> PyResult<Router> {
        let mut names = Vec::with_capacity(inner.node_count());
        for (i, (_, node)) in inner.nodes().iter().enumerate() {
            let reuse = given.get(i).filter(|g| g.bind(py).to_cow().ok().as_deref() == Some(node.name()));
            names.push(match reuse {
                Some(g) => g.clone_ref(py),
                None => PyString::intern(py, node.name()).unbind(),
            });
        }
        Ok(Router { inner: Arc::new(inner), names })
    }

    fn name(&self, py: Python<'_>, id: NodeId) -> Py<PyString> {
        self.names[id.index()].clone_ref(py)
    }

    fn derived(&self, py: Python<'_>, inner: hashroute::Result<AnyRouter>) -> PyResult<Router> {
        Router::wrap(py, inner.map_err(to_py)?, &self.names)
    }
}

#[pymethods]
impl Router {
    /// `Router(algo="ring", nodes=[...] or {name: weight}, vnodes=None, hash=None, seed=None,
    /// variant=None, table_size=None, probes=None, capacity=None, tokens_per_node=None)`: the
    /// router `hashroute route --algo ALGO --nodes ...` builds, with the same names and errors.
    #[new]
    #[pyo3(signature = (algo = "ring", nodes = None, *, vnodes = None, hash = None, seed = None, variant = None,
        table_size = None, probes = None, capacity = None, tokens_per_node = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        algo: &str,
        nodes: Option<&Bound<'_, PyAny>>,
        vnodes: Option<u64>,
        hash: Option<&str>,
        seed: Option<u64>,
        variant: Option<&str>,
        table_size: Option<u64>,
        probes: Option<u32>,
        capacity: Option<u32>,
        tokens_per_node: Option<u32>,
    ) -> PyResult<Router> {
        let options = Options { algo, vnodes, hash, seed, variant, table_size, probes, capacity, tokens_per_node };
        let spec = options.spec()?;
        let nodes = nodes.ok_or_else(|| PyValueError::new_err("no nodes: give nodes=[...] or {name: weight}"))?;
        let (set, names) = node_set(nodes)?;
        let inner = py.allow_threads(|| spec.build(set)).map_err(to_py)?;
        Router::wrap(py, inner, &names)
    }

    /// The router of a proxy's configuration file (twemproxy YAML pool, nginx `upstream`,
    /// HAProxy `backend`), as `hashroute route --from-config PATH` reads it. `kind` names the
    /// format when the content does not tell; `pool` picks one of several pools.
    #[staticmethod]
    #[pyo3(signature = (path, kind = None, pool = None))]
    fn from_config(
        py: Python<'_>,
        path: std::path::PathBuf,
        kind: Option<&str>,
        pool: Option<&str>,
    ) -> PyResult<Router> {
        use hashroute_cli::proxy::{ConfigKind, ProxyConfig};
        let file = path.display().to_string();
        let text = read_text("config file", &file)?;
        let kind = kind.map(ConfigKind::from_name).transpose().map_err(|e| PyValueError::new_err(e.to_string()))?;
        let config = ProxyConfig::parse(&text, &file, kind, pool).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let inner = config.router().map_err(to_py)?;
        Router::wrap(py, inner, &[])
    }

    /// The token ring of a tokens file (`NODE TOKEN` lines, e.g. from `nodetool ring`), as
    /// `hashroute route --tokens-file PATH` reads it.
    #[staticmethod]
    fn from_tokens_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Router> {
        let file = path.display().to_string();
        let text = read_text("tokens file", &file)?;
        let ring = hashroute::TokenRing::parse(&text).map_err(|e| tokens_error(&file, e))?;
        Router::wrap(py, ring.into(), &[])
    }

    /// The node that owns `key` (a `str`, routed as UTF-8, or `bytes`).
    fn route(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyString>> {
        let key = key_bytes(key)?;
        Ok(self.name(py, self.inner.route(&key)))
    }

    /// The node of every key of `keys` (an iterable of `str`/`bytes`), in one call: the keys
    /// are copied in chunks, each routed by the kernel's batch path with the GIL released.
    fn route_many<'py>(&self, py: Python<'py>, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let list = match keys.downcast_exact::<PyList>() {
            Ok(list) => list.clone(),
            Err(_) => PyList::new(py, keys.try_iter()?.collect::<PyResult<Vec<_>>>()?)?,
        };
        let n = list.len();
        let mut ids = vec![NodeId::from_index(0); n];
        let (mut data, mut ends) = (Vec::new(), Vec::new());
        for start in (0..n).step_by(ROUTE_CHUNK) {
            let end = (start + ROUTE_CHUNK).min(n);
            chunk_bytes(&list.get_slice(start, end), &mut data, &mut ends)?;
            let out = &mut ids[start..end];
            py.allow_threads(|| {
                let mut from = 0;
                let refs: Vec<&[u8]> = ends
                    .iter()
                    .map(|&to| {
                        let k = &data[from..to];
                        from = to;
                        k
                    })
                    .collect();
                self.inner.route_batch(&refs, out);
            });
        }
        PyList::new(py, ids.into_iter().map(|id| self.names[id.index()].bind(py)))
    }

    /// The node index (into `nodes`) of every pre-computed 64-bit hash in `data`, little-endian
    /// `uint64`s back to back; the indices come back as little-endian `uint32`s. Routers whose
    /// key hash is not 64 bits (ketama, slots) raise `ValueError`. `route_hashes` wraps it for
    /// numpy arrays.
    fn _route_hash_bytes<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        if !data.len().is_multiple_of(8) {
            return Err(PyValueError::new_err("hashes: the buffer is not a whole number of uint64s"));
        }
        let hashes: Vec<u64> =
            data.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect();
        let inner = Arc::clone(&self.inner);
        let out = py.allow_threads(move || -> hashroute::Result<Vec<u8>> {
            let mut out = Vec::with_capacity(hashes.len() * 4);
            for h in hashes {
                out.extend_from_slice(&inner.route_hash(h)?.as_u32().to_le_bytes());
            }
            Ok(out)
        });
        Ok(PyBytes::new(py, &out.map_err(to_py)?))
    }

    /// The node index (into `nodes`) of each pre-computed 64-bit key hash of `hashes` (a numpy
    /// `uint64` array or anything `numpy.asarray` takes), as a numpy `uint32` array: one copy of
    /// the hashes in, no Python object per key. Needs numpy; `ValueError` for routers whose key
    /// hash is not 64 bits (ketama, slots, the proxies').
    fn route_hashes<'py>(&self, py: Python<'py>, hashes: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let np = py.import("numpy")?;
        let arr = np.call_method1("ascontiguousarray", (hashes, "<u8"))?;
        let data = arr.call_method0("tobytes")?;
        let out = self._route_hash_bytes(py, data.downcast::<PyBytes>()?.as_bytes())?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("dtype", "<u4")?;
        np.call_method("frombuffer", (out,), Some(&kwargs))
    }

    /// `n` distinct nodes for `key`, best first (the first is `route(key)`).
    fn replicas(&self, py: Python<'_>, key: &Bound<'_, PyAny>, n: usize) -> PyResult<Vec<Py<PyString>>> {
        let key = key_bytes(key)?;
        let ids = self.inner.replicas(&key, n).map_err(to_py)?;
        Ok(ids.into_iter().map(|id| self.name(py, id)).collect())
    }

    /// A new router with node `name` (weight `weight`) added.
    #[pyo3(signature = (name, weight = 1.0))]
    fn with_node(&self, py: Python<'_>, name: &str, weight: f64) -> PyResult<Router> {
        self.derived(py, self.inner.with_node(Node::new(name).with_weight(weight)))
    }

    /// A new router without node `name` (`KeyError` if it has none).
    fn without_node(&self, py: Python<'_>, name: &str) -> PyResult<Router> {
        self.derived(py, self.inner.without_node(name))
    }

    /// A new router with node `name`'s weight changed.
    fn with_weight(&self, py: Python<'_>, name: &str, weight: f64) -> PyResult<Router> {
        self.derived(py, self.inner.with_weight(name, weight))
    }

    /// The router's fingerprint: what `hashroute fingerprint` prints for the same
    /// configuration (32 hex digits; equal fingerprints route every key alike).
    fn fingerprint(&self) -> String {
        hashroute::fingerprint(&*self.inner).to_string()
    }

    /// The node names, in the router's node order (the indices `route_hashes` returns).
    #[getter]
    fn nodes(&self, py: Python<'_>) -> Vec<Py<PyString>> {
        self.names.iter().map(|n| n.clone_ref(py)).collect()
    }

    /// The algorithm, as `--algo` names it.
    #[getter]
    fn algo(&self) -> &'static str {
        self.inner.algorithm().name()
    }

    fn __len__(&self) -> usize {
        self.names.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "<hashroute.Router {} over {} nodes, fingerprint {}>",
            self.algo(),
            self.names.len(),
            self.fingerprint()
        )
    }
}

/// Keys per chunk of `route_many`: the buffers stay small enough to be reused from the heap
/// (large ones are fresh pages, whose faults cost a tenth of a batch).
const ROUTE_CHUNK: usize = 2048;

/// The keys of `list` back to back in `data`, where each ends in `ends`. A list of `str` only
/// goes through one `"".join` and one `encode` in C, split by each key's length in code points
/// (a per-key encode costs an allocation per key under the stable ABI, which has no borrowed
/// UTF-8 view before Python 3.10); any other list key by key.
fn chunk_bytes(list: &Bound<'_, PyList>, data: &mut Vec<u8>, ends: &mut Vec<usize>) -> PyResult<()> {
    let py = list.py();
    data.clear();
    ends.clear();
    let mut chars = Vec::with_capacity(list.len());
    for key in list.iter() {
        if !key.is_exact_instance_of::<PyString>() {
            for key in list.iter() {
                data.extend_from_slice(&key_bytes(&key)?);
                ends.push(data.len());
            }
            return Ok(());
        }
        chars.push(key.len()?);
    }
    let joined = PyString::new(py, "").call_method1(pyo3::intern!(py, "join"), (list,))?;
    let encoded = joined.call_method1(pyo3::intern!(py, "encode"), ("utf-8",))?;
    data.extend_from_slice(encoded.downcast::<PyBytes>()?.as_bytes());
    let total: usize = chars.iter().sum();
    if total == data.len() {
        // All ASCII: one byte per code point.
        let mut end = 0;
        for c in chars {
            end += c;
            ends.push(end);
        }
        return Ok(());
    }
    let text = std::str::from_utf8(data).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut boundaries = text.char_indices().map(|(i, _)| i).chain(std::iter::once(text.len()));
    let mut seen = 0;
    let mut at = boundaries.next().unwrap_or(0);
    for c in chars {
        // Advance `c` code points from the previous end.
        for _ in 0..c {
            at = boundaries.next().unwrap_or(text.len());
        }
        seen += c;
        ends.push(at);
    }
    debug_assert_eq!(seen, total);
    Ok(())
}

/// The file's text; `OSError` when it cannot be read, `ValueError` when it is not UTF-8.
fn read_text(what: &str, file: &str) -> PyResult<String> {
    let bytes = std::fs::read(file).map_err(|e| io(what, file, &e))?;
    String::from_utf8(bytes).map_err(|_| PyValueError::new_err(format!("{what} {file}: not valid UTF-8")))
}

/// The tokens parser's error as the CLI prints it: `tokens file PATH:LINE: what is wrong`.
fn tokens_error(file: &str, err: hashroute::Error) -> PyErr {
    if let hashroute::Error::Malformed(detail) = &err {
        if let Some((line, rest)) = detail.strip_prefix("line ").and_then(|d| d.split_once(": ")) {
            if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) {
                return PyValueError::new_err(format!("tokens file {file}:{line}: {rest}"));
            }
        }
    }
    match err {
        hashroute::Error::NoNodes => {
            PyValueError::new_err(format!("tokens file {file}: no tokens (a token ring needs at least one)"))
        }
        other => PyValueError::new_err(format!("tokens file {file}: {other}")),
    }
}

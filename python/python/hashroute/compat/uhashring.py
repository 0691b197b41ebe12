"""Drop-in for ``uhashring.HashRing`` (uhashring 2.x).

Both of uhashring's modes, with its constructor and methods:

- default (no ``hash_fn``): node ``name`` of weight ``w`` gets ``vnodes * w`` points (``vnodes``
  160 unless given), point ``i`` being ``int(md5(f"{name}-{i}").hexdigest(), 16)``; a key
  belongs to the first point greater than ``int(md5(str(key)).hexdigest(), 16)``, wrapping;
- ``hash_fn="ketama"``: ``(vnodes * N * w) // sum(w)`` digests per node (``vnodes`` 40 unless
  given), ``replicas`` (4) little-endian 32-bit points per digest, the key hash the first 4
  bytes of its MD5.

Nodes as a list of names, a dict of weights, or a dict of per-node confs (``weight``,
``vnodes``, ``hostname``, ``port``, ``instance``, ``nodename``); ``weight_fn`` as uhashring.
The continuum and the lookups run in Rust; a callable ``hash_fn`` runs in Python, as uhashring.
Keys are hashed as ``str(key)`` (a ``bytes`` key as ``"b'...'"``), exactly as uhashring.
"""

from bisect import bisect
from collections import Counter

from hashroute._hashroute import UhashringCore as _Core

__all__ = ["HashRing"]


def _range_len(n):
    # uhashring iterates range(n): the same TypeError for a non-integer, 0 for n <= 0.
    return len(range(0, n))


class HashRing(_Core):
    """A consistent hashing ring answering exactly as ``uhashring.HashRing``."""

    def __init__(self, nodes=[], **kwargs):
        hash_fn = kwargs.get("hash_fn", None)
        vnodes = kwargs.get("vnodes", None)
        weight_fn = kwargs.get("weight_fn", None)
        self._ketama = hash_fn == "ketama"
        self._replicas = kwargs.get("replicas", 4) if self._ketama else 1
        self._hash_fn = None
        if self._ketama:
            vnodes = 40 if vnodes is None else vnodes
        else:
            vnodes = 160 if vnodes is None else vnodes
            if hash_fn and not hasattr(hash_fn, "__call__"):
                raise TypeError("hash_fn should be a callable function")
            if hash_fn:
                self._use_python_hash(hash_fn)
        self._default_vnodes = vnodes
        if weight_fn and not hasattr(weight_fn, "__call__"):
            raise TypeError("weight_fn should be a callable function")
        self._weight_fn = weight_fn
        self._node_confs = {}
        self._distribution = Counter()
        if self._configure_nodes(nodes):
            self._rebuild()

    # -- configuration (as uhashring's HashRing._configure_nodes) --------------------------

    def _configure_nodes(self, nodes):
        if isinstance(nodes, str):
            nodes = [nodes]
        elif not isinstance(nodes, (dict, list)):
            raise ValueError(
                "nodes configuration should be a list or a dict, got {}".format(type(nodes))
            )
        changed = False
        for node in nodes:
            conf = {
                "hostname": node,
                "instance": None,
                "nodename": node,
                "port": None,
                "vnodes": self._default_vnodes,
                "weight": 1,
            }
            current = self._node_confs.get(node, {})
            if not current:
                changed = True
            if isinstance(nodes, dict):
                node_conf = nodes[node]
                if isinstance(node_conf, int):
                    conf["weight"] = node_conf
                elif isinstance(node_conf, dict):
                    for k, v in node_conf.items():
                        if k in conf:
                            conf[k] = v
                            if k in ("nodename", "vnodes", "weight") and current.get(k) != v:
                                changed = True
                else:
                    raise ValueError(
                        "node configuration should be a dict or an int, got {}".format(type(node_conf))
                    )
            if self._weight_fn:
                conf["weight"] = self._weight_fn(**conf)
            if current.get("weight") != conf["weight"]:
                changed = True
            self._node_confs[node] = conf
        return changed

    def _counts(self):
        """(node, points written) in the ring's write order, and the distribution."""
        entries = []
        dist = Counter()
        if self._ketama:
            total = sum(c["weight"] for c in self._node_confs.values())
            n = len(self._node_confs)
            for name, conf in self._node_confs.items():
                digests = _range_len((conf["vnodes"] * n * conf["weight"]) // total)
                entries.append((name, digests))
                if digests * self._replicas:
                    dist[name] = digests * self._replicas
        else:
            for name, conf in self._node_confs.items():
                count = _range_len(conf["vnodes"] * conf["weight"])
                entries.append((name, count))
                if count:
                    dist[name] = count
        return entries, dist

    def _rebuild(self):
        entries, self._distribution = self._counts()
        if self._hash_fn is not None:
            self._py_build(entries)
        else:
            self._build(entries, self._ketama, self._replicas)

    # -- a callable hash_fn: uhashring's own arithmetic, in Python -------------------------

    def _use_python_hash(self, hash_fn):
        self._hash_fn = hash_fn
        self._py_ring = {}
        self._py_keys = []
        self.get_node = self._py_get_node
        self._pos = self._py_pos
        self._hashi = hash_fn
        self._at = self._py_at
        self._points = lambda: [(k, self._py_ring[k]) for k in self._py_keys]
        self._walk = self._py_walk
        self._size = lambda: len(self._py_ring)

    def _py_build(self, entries):
        ring = {}
        for name, count in entries:
            for w in range(count):
                ring[self._hash_fn(f"{name}-{w}")] = name
        self._py_ring = ring
        self._py_keys = sorted(ring)

    def _py_pos(self, key):
        if not self._py_ring:
            return None
        p = bisect(self._py_keys, self._hash_fn(key))
        return 0 if p == len(self._py_keys) else p

    def _py_at(self, pos):
        k = self._py_keys[pos]
        return (k, self._py_ring[k])

    def _py_get_node(self, key):
        pos = self._py_pos(key)
        return None if pos is None else self._py_ring[self._py_keys[pos]]

    def _py_walk(self, key, size, unique):
        pos = self._py_pos(key)
        out, seen = [], set()
        if pos is None:
            return out
        order = self._py_keys[pos:] + self._py_keys[:pos]
        for k in order:
            name = self._py_ring[k]
            if unique:
                if name in seen:
                    continue
                seen.add(name)
            out.append(name)
            if len(out) == size:
                break
        return out

    # -- uhashring's API ---------------------------------------------------------------------

    def hashi(self, key):
        """The key's hash, as uhashring's ``hashi``."""
        return self._hashi(key)

    get_key = hashi

    def _get(self, key, what):
        pos = self._pos(key)
        if pos is None:
            return None
        if what == "pos":
            return pos
        point, name = self._at(pos)
        if what in ("hostname", "instance", "port", "weight"):
            return self._node_confs[name][what]
        if what == "dict":
            return self._node_confs[name]
        if what == "nodename":
            return name
        if what == "tuple":
            return (point, name)
        return None

    def get(self, key):
        """The conf dict of the node owning ``key``."""
        return self._get(key, "dict")

    def get_node_hostname(self, key):
        return self._get(key, "hostname")

    def get_node_port(self, key):
        return self._get(key, "port")

    def get_node_pos(self, key):
        return self._get(key, "pos")

    def get_node_weight(self, key):
        return self._get(key, "weight")

    def get_node_instance(self, key):
        return self._get(key, "instance")

    __getitem__ = get_node_instance

    def get_server(self, key):
        """A ketama-compatible ``(point, nodename)`` tuple."""
        return self._get(key, "tuple")

    def get_instances(self):
        return [c.get("instance") for c in self._node_confs.values() if c.get("instance")]

    def get_nodes(self):
        """The configured node names."""
        return self._node_confs.keys()

    def get_points(self):
        """Every ``(point, nodename)``, ascending."""
        return self._points()

    def add_node(self, nodename, conf={"weight": 1}):
        """Adds (or reconfigures) ``nodename``."""
        if self._configure_nodes({nodename: conf}):
            self._rebuild()

    __setitem__ = add_node

    def remove_node(self, nodename):
        """Removes ``nodename`` (``KeyError`` if absent)."""
        if nodename not in self._node_confs:
            raise KeyError(
                "node '{}' not found, available nodes: {}".format(nodename, self._node_confs.keys())
            )
        self._node_confs.pop(nodename)
        self._rebuild()

    __delitem__ = remove_node

    def range(self, key, size=None, unique=True):
        """The confs of the nodes met clockwise from ``key``'s point (each once if ``unique``;
        at most ``size``, every node by default)."""
        if unique:
            size = size or len(self._node_confs)
        for name in self._walk(key, size, unique):
            yield self._node_confs[name]

    def iterate_nodes(self, key, distinct=True):
        """The node names clockwise from ``key`` (hash_ring compatibility)."""
        if not self._size():
            yield None
        else:
            for conf in self.range(key, unique=distinct):
                yield conf["nodename"]

    def print_continuum(self):
        points = self.get_points()
        if points:
            print(f"Numpoints in continuum: {len(points)}")
        else:
            print("Continuum empty")
        for point, node in points:
            print(f"{node} ({point})")

    def regenerate(self):
        """Re-evaluates ``weight_fn`` for every node and rebuilds the ring."""
        self._configure_nodes(dict(self._node_confs))
        self._rebuild()

    @property
    def conf(self):
        return self._node_confs

    nodes = conf

    @property
    def distribution(self):
        return self._distribution

    @property
    def ring(self):
        return dict(self._points())

    continuum = ring

    @property
    def size(self):
        return self._size()

    @property
    def _nodes(self):
        return self._node_confs

    @property
    def _keys(self):
        return [p for p, _ in self._points()]

    @property
    def _ring(self):
        return self.ring

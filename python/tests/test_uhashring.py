"""hashroute.compat.uhashring.HashRing against the real uhashring, both modes."""

import pytest

from conftest import random_keys, require
from hashroute.compat.uhashring import HashRing

uhashring = require("uhashring")

KEYS = random_keys(1500)

CONFIGS = [
    ["a", "b", "c"],
    [f"10.0.0.{i}:11211" for i in range(50)],
    {"big": 5, "small": 1, "mid": 2},
    {
        "n1": {"hostname": "h1", "port": 11211, "weight": 2, "instance": "I1"},
        "n2": {"vnodes": 40, "weight": 3},
        "n3": {"instance": "I3"},
        "ünïcode-ноде": 1,
    },
    "single",
]


def assert_same(ours, theirs, keys=KEYS):
    assert [ours.get_node(k) for k in keys] == [theirs.get_node(k) for k in keys]
    assert [ours.get(k) for k in keys[:200]] == [theirs.get(k) for k in keys[:200]]
    assert [ours.get_node_pos(k) for k in keys[:200]] == [theirs.get_node_pos(k) for k in keys[:200]]
    assert [ours.get_server(k) for k in keys[:50]] == [theirs.get_server(k) for k in keys[:50]]
    assert list(ours.get_nodes()) == list(theirs.get_nodes())
    assert ours.distribution == theirs.distribution
    assert ours.size == theirs.size
    for k in keys[:40]:
        assert list(ours.range(k)) == list(theirs.range(k))
        assert list(ours.range(k, size=2)) == list(theirs.range(k, size=2))
        assert list(ours.iterate_nodes(k)) == list(theirs.iterate_nodes(k))
        assert list(ours.range(k, size=5, unique=False)) == list(theirs.range(k, size=5, unique=False))
        assert ours[k] == theirs[k]
        assert ours.get_node_hostname(k) == theirs.get_node_hostname(k)
        assert ours.get_node_weight(k) == theirs.get_node_weight(k)
        assert ours.hashi(k) == theirs.hashi(k)


MODES = [{}, {"hash_fn": "ketama"}, {"vnodes": 100}, {"hash_fn": "ketama", "vnodes": 80, "replicas": 3}]


@pytest.mark.parametrize("mode", MODES, ids=lambda m: ",".join(f"{k}={v}" for k, v in m.items()) or "default")
@pytest.mark.parametrize("nodes", CONFIGS, ids=lambda c: type(c).__name__ + str(len(c)))
def test_same_routes(nodes, mode):
    assert_same(HashRing(nodes, **mode), uhashring.HashRing(nodes, **mode))


@pytest.mark.parametrize("mode", MODES[:2], ids=["default", "ketama"])
def test_additions_and_removals(mode):
    nodes = {f"node-{i}": 1 + i % 3 for i in range(12)}
    ours, theirs = HashRing(dict(nodes), **mode), uhashring.HashRing(dict(nodes), **mode)
    steps = [
        ("add", "node-new", {"weight": 2}),
        ("remove", "node-3", None),
        ("add", "node-0", {"weight": 4}),
        ("add", "node-x", 3),
        ("remove", "node-new", None),
        ("add", "node-y", {"vnodes": 7, "hostname": "y", "port": 1}),
    ]
    for op, name, conf in steps:
        if op == "add":
            ours.add_node(name, conf)
            theirs.add_node(name, conf)
        else:
            ours.remove_node(name)
            theirs.remove_node(name)
        assert_same(ours, theirs, KEYS[:600])
    ours["node-z"] = {"weight": 1}
    theirs["node-z"] = {"weight": 1}
    del ours["node-1"]
    del theirs["node-1"]
    assert_same(ours, theirs, KEYS[:600])


def test_points_and_ring():
    for mode in ({}, {"hash_fn": "ketama"}):
        ours, theirs = HashRing(["x", "y"], **mode), uhashring.HashRing(["x", "y"], **mode)
        assert ours.get_points() == theirs.get_points()
        assert ours.ring == theirs.ring
        assert ours._keys == theirs._keys


def test_errors_and_edges():
    ours, theirs = HashRing(["a"]), uhashring.HashRing(["a"])
    with pytest.raises(KeyError) as e1:
        ours.remove_node("zz")
    with pytest.raises(KeyError) as e2:
        theirs.remove_node("zz")
    assert str(e1.value) == str(e2.value)
    for bad in (3, None):
        with pytest.raises(ValueError):
            HashRing(bad)
    with pytest.raises(TypeError):
        HashRing(["a"], hash_fn=5)
    with pytest.raises(MemoryError, match="cap"):
        HashRing({"a": 10**6})
    empty_ours, empty_theirs = HashRing([]), uhashring.HashRing([])
    assert empty_ours.get_node("k") is None and empty_theirs.get_node("k") is None
    assert list(empty_ours.iterate_nodes("k")) == list(empty_theirs.iterate_nodes("k")) == [None]
    # Node names that are not strings come back as the same objects.
    o, t = HashRing([1, 2, 3]), uhashring.HashRing([1, 2, 3])
    assert [o.get_node(k) for k in KEYS[:300]] == [t.get_node(k) for k in KEYS[:300]]
    assert all(isinstance(o.get_node(k), int) for k in KEYS[:10])


def test_callable_hash_fn_and_weight_fn():
    def fn(key):
        return hash(str(key)) % 1000003

    def wfn(**conf):
        return 2 if conf["nodename"] == "b" else 1

    for kw in ({"hash_fn": fn}, {"weight_fn": wfn}, {"hash_fn": "ketama", "weight_fn": wfn}):
        assert_same(HashRing(["a", "b", "c"], **kw), uhashring.HashRing(["a", "b", "c"], **kw), KEYS[:300])


def test_router_variants_match_uhashring():
    """The kernel's ketama variants `uhashring-md5` (default mode) and `uhashring` (ketama mode)."""
    from hashroute import Router

    nodes = {f"10.0.0.{i}:6379": 1 + i % 4 for i in range(20)}
    text = [k for k in KEYS if isinstance(k, str)]
    for variant, mode in (("uhashring-md5", {}), ("uhashring", {"hash_fn": "ketama"})):
        r = Router("ketama", nodes, variant=variant)
        ring = uhashring.HashRing(dict(nodes), **mode)
        assert [r.route(k) for k in text] == [ring.get_node(k) for k in text]
        assert r.route_many(text) == [ring.get_node(k) for k in text]

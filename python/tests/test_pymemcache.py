"""hashroute.compat.pymemcache.RendezvousHash against pymemcache's."""

import pytest

from conftest import random_keys, require
from hashroute.compat.pymemcache import RendezvousHash

rendezvous = require("pymemcache.client.rendezvous")
murmur3 = require("pymemcache.client.murmur3")

KEYS = random_keys(1200, seed=11)
NODES = [f"10.0.0.{i}:11211" for i in range(50)]


def same(ours, theirs, keys=KEYS):
    assert [ours.get_node(k) for k in keys] == [theirs.get_node(k) for k in keys]


@pytest.mark.parametrize("seed", [0, 1, 2**31 + 7, 2**32 + 5])
def test_same_routes(seed):
    same(RendezvousHash(list(NODES), seed=seed), rendezvous.RendezvousHash(list(NODES), seed=seed))


def test_additions_and_removals():
    ours, theirs = RendezvousHash(), rendezvous.RendezvousHash()
    assert ours.get_node("k") is None and theirs.get_node("k") is None
    for n in NODES[:10] + ["ünï:1", "节点:2", NODES[3]]:
        ours.add_node(n)
        theirs.add_node(n)
        same(ours, theirs, KEYS[:300])
    for n in (NODES[0], "节点:2", NODES[7]):
        ours.remove_node(n)
        theirs.remove_node(n)
        same(ours, theirs, KEYS[:300])
    assert ours.nodes == theirs.nodes
    with pytest.raises(ValueError) as e1:
        ours.remove_node("nope")
    with pytest.raises(ValueError) as e2:
        theirs.remove_node("nope")
    assert str(e1.value) == str(e2.value)


def test_ties_and_node_objects():
    # 1 and "1" format alike, so they always tie: pymemcache then returns max(str, str), a str.
    nodes = [1, "1", 2, b"x"]
    ours, theirs = RendezvousHash(list(nodes)), rendezvous.RendezvousHash(list(nodes))
    got = [ours.get_node(k) for k in KEYS]
    want = [theirs.get_node(k) for k in KEYS]
    assert got == want
    assert [type(g) for g in got] == [type(w) for w in want]


def test_custom_hash_function():
    def fn(data, seed):
        return (len(data) * 31 + seed) % 7

    same(RendezvousHash(NODES[:5], seed=3, hash_function=fn), rendezvous.RendezvousHash(NODES[:5], seed=3, hash_function=fn))
    explicit = RendezvousHash(NODES[:5], hash_function=murmur3.murmur3_32)
    same(explicit, rendezvous.RendezvousHash(NODES[:5]))


def test_hash_client():
    hash_mod = require("pymemcache.client.hash")
    servers = [("127.0.0.1", 11211 + i) for i in range(8)]
    ours = hash_mod.HashClient(servers, hasher=RendezvousHash)
    theirs = hash_mod.HashClient(servers, hasher=rendezvous.RendezvousHash)
    keys = [k for k in KEYS if isinstance(k, str) and k and " " not in k][:300]
    assert [ours.hasher.get_node(k) for k in keys] == [theirs.hasher.get_node(k) for k in keys]
    ours.add_server("127.0.0.1", 11300)
    theirs.add_server("127.0.0.1", 11300)
    assert [ours.hasher.get_node(k) for k in keys] == [theirs.hasher.get_node(k) for k in keys]

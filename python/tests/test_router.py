"""hashroute.Router, token and slot: the kernel in Python, against the references."""

import os
import subprocess

import pytest

import hashroute
from conftest import random_keys, require
from hashroute import Router

KEYS = [k for k in random_keys(800, seed=3) if isinstance(k, (str, bytes))]


def cli():
    """The `hashroute` binary (HASHROUTE_BIN), or a visible skip (a failure under CI)."""
    path = os.environ.get("HASHROUTE_BIN")
    if path and os.path.exists(path):
        return path
    if os.environ.get("CI"):
        pytest.fail("HASHROUTE_BIN is not set and CI is set")
    pytest.skip("SKIPPED: HASHROUTE_BIN (the hashroute CLI) is not set")


def test_token_matches_cassandra_driver():
    metadata = require("cassandra.metadata")
    for k in KEYS:
        raw = k.encode("utf-8") if isinstance(k, str) else k
        assert hashroute.token(k) == metadata.Murmur3Token.from_key(raw).value, k


def test_slot():
    assert hashroute.slot("123456789") == 0x31C3
    assert hashroute.slot("{user1000}.following") == hashroute.slot("{user1000}.followers")
    assert hashroute.slot(b"foo") == 12182  # CLUSTER KEYSLOT foo


def test_route_many_and_replicas():
    nodes = [f"n{i}" for i in range(9)]
    for algo, kw in (("ring", {}), ("ring", {"vnodes": 40, "hash": "xxh64", "seed": 9}), ("jump", {}),
                     ("rendezvous", {}), ("ketama", {"variant": "libmemcached"}), ("maglev", {}), ("slots", {})):
        r = Router(algo, nodes, **kw)
        one = [r.route(k) for k in KEYS]
        assert r.route_many(KEYS) == one
        # A list of str only takes the joined-UTF-8 path; a tuple the per-key one.
        text = ["", "ключ", ""] + [k for k in KEYS if isinstance(k, str)] + ["🙂", "a"]
        assert r.route_many(text) == [r.route(k) for k in text] == r.route_many(tuple(text))
        assert all(x in nodes for x in one)
        if algo != "slots":
            reps = r.replicas("key-1", 3)
            assert reps[0] == r.route("key-1") and len(set(reps)) == 3
    # Node names come back as the caller's own str objects.
    r = Router("ring", nodes)
    assert any(r.route("k") is n for n in nodes)


def test_weights_and_membership():
    r = Router("ring", {"a": 1, "b": 3})
    grown = r.with_node("c", 2)
    assert grown.nodes == ["a", "b", "c"] and r.nodes == ["a", "b"]
    assert grown.without_node("c").fingerprint() == r.fingerprint()
    equal = Router("ring", ["a", "b", "c"])
    shrunk = equal.without_node("b")
    moved = [k for k in KEYS if equal.route(k) != shrunk.route(k)]
    assert moved and all(equal.route(k) == "b" for k in moved)
    assert r.with_weight("a", 2).fingerprint() != r.fingerprint()


def test_errors_are_python_exceptions(tmp_path):
    with pytest.raises(ValueError, match="invalid algorithm"):
        Router("nope", ["a"])
    with pytest.raises(ValueError):
        Router("ring", ["a"], vnodes=0)
    with pytest.raises(ValueError, match="ketama"):
        Router("ring", ["a"], variant="libketama")
    with pytest.raises(ValueError):
        Router("ring", ["a", "a"])
    with pytest.raises(ValueError):
        Router("ring", [])
    with pytest.raises(KeyError):
        Router("ring", ["a", "b"]).without_node("zz")
    with pytest.raises(OSError):
        Router.from_config(str(tmp_path / "missing.yml"))
    with pytest.raises(OSError):
        Router.from_tokens_file(tmp_path / "missing.txt")
    bad = tmp_path / "tokens.txt"
    bad.write_text("a dc1 r1 12\nb dc1 r1 notanumber\n")
    with pytest.raises(ValueError, match=r"tokens file .*tokens.txt:2:"):
        Router.from_tokens_file(bad)
    with pytest.raises(TypeError):
        Router("ring", ["a"]).route(5)
    with pytest.raises(TypeError):
        Router("ring", ["a"]).route_many(["a", 5])
    with pytest.raises(UnicodeEncodeError):
        Router("ring", ["a"]).route_many(["a", "\ud800"])
    with pytest.raises(ValueError):
        Router("ketama", ["a"]).route_hashes([1, 2])


TWEMPROXY = """alpha:
  listen: 127.0.0.1:22121
  hash: fnv1a_64
  distribution: ketama
  servers:
   - 127.0.0.1:11211:1 server1
   - 127.0.0.1:11212:2 server2
   - 127.0.0.1:11213:1 server3
"""

NGINX = """http {
  upstream u {
    hash $request_uri consistent;
    server 127.0.0.1;
    server 127.0.0.1:18082 weight=2;
    server 127.0.0.1:18083;
  }
}
"""

HAPROXY = """defaults
    mode http

backend b
    balance uri
    hash-type consistent
    server s1 127.0.0.1:18081 weight 1
    server s2 127.0.0.1:18082 weight 2
    server s3 127.0.0.1:18083 weight 5
"""

TOKENS = """# NAME ZONE RACK TOKEN
10.0.0.1 dc1 rack1 -4611686018427387904
10.0.0.2 dc1 rack2 0
10.0.0.3 dc1 rack1 4611686018427387904
"""


def test_fingerprints_equal_the_cli(tmp_path):
    binary = cli()
    conf = tmp_path / "nutcracker.yml"
    conf.write_text(TWEMPROXY)
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(TOKENS)
    nginx = tmp_path / "nginx.conf"
    nginx.write_text(NGINX)
    haproxy = tmp_path / "haproxy.cfg"
    haproxy.write_text(HAPROXY)
    cases = [
        (Router("ring", ["a", "b", "c"]), ["--algo", "ring", "--nodes", "a,b,c"]),
        (Router("ketama", ["a", "b"], variant="uhashring-md5"), ["--algo", "ketama", "--nodes", "a,b", "--variant", "uhashring-md5"]),
        (Router("rendezvous", ["a", "b"], hash="murmur3", seed=5), ["--algo", "rendezvous", "--nodes", "a,b", "--hash", "murmur3", "--seed", "5"]),
        (Router.from_config(conf), ["--from-config", str(conf)]),
        (Router.from_config(nginx), ["--from-config", str(nginx)]),
        (Router.from_config(str(haproxy), kind="haproxy"), ["--from-config", str(haproxy)]),
        (Router.from_tokens_file(tokens), ["--tokens-file", str(tokens)]),
    ]
    for router, args in cases:
        out = subprocess.run([binary, "fingerprint", *args], capture_output=True, text=True, timeout=60, check=True)
        assert router.fingerprint() == out.stdout.strip(), args
    r = Router.from_config(conf)
    assert r.algo == "ketama" and r.nodes == ["server1", "server2", "server3"]
    assert Router.from_config(nginx).algo == "nginx" and Router.from_config(haproxy).algo == "haproxy"
    with pytest.raises(ValueError, match="config kind"):
        Router.from_config(conf, kind="squid")
    out = subprocess.run([binary, "route", "--from-config", str(conf), "k1", "k2", "k3"], capture_output=True, text=True, timeout=60)
    if out.returncode == 0:
        assert [line.split()[-1] for line in out.stdout.split("\n") if line.strip()] == r.route_many(["k1", "k2", "k3"])


def jump(key, n):
    b, j = -1, 0
    while j < n:
        b = j
        key = (key * 2862933555777941757 + 1) % 2**64
        j = int((b + 1) * (float(1 << 31) / float((key >> 33) + 1)))
    return b


def test_route_hashes_numpy():
    np = require("numpy")
    n = 37
    r = Router("jump", [str(i) for i in range(n)])
    hashes = np.array([0, 1, 2**63, 2**64 - 1, 0xDEADBEEF, 123456789012345], dtype=np.uint64)
    got = r.route_hashes(hashes)
    assert got.dtype == np.uint32
    assert got.tolist() == [jump(int(h), n) for h in hashes]
    assert [r.nodes[i] for i in got] == [str(jump(int(h), n)) for h in hashes]

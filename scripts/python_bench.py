#!/usr/bin/env python3
"""hashroute's Python package against the originals, in one run (scripts/python_bench.sh
writes the output to results/python.md). Every figure is the median of REPEATS timed runs;
each pair is checked to answer alike before it is timed."""

import platform
import statistics
import subprocess
import sys
import time
from importlib import metadata

import hashroute
import pymemcache.client.rendezvous as pm
import uhashring
from hashroute import Router
from hashroute.compat.pymemcache import RendezvousHash
from hashroute.compat.uhashring import HashRing

REPEATS = 25
NODES = [f"10.0.0.{i}:11211" for i in range(50)]
KEYS = [f"user:{i * 7919}:profile" for i in range(20000)]


def loop(fn):
    def run(keys):
        for k in keys:
            fn(k)

    return run


def pair(ours, ours_keys, theirs, theirs_keys, repeats=REPEATS):
    """Medians over `repeats` rounds of the time per key, in ns, of ours(ours_keys) and
    theirs(theirs_keys); each round times both, back to back, so that both sides see the same
    machine load."""
    a, b = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        ours(ours_keys)
        a.append((time.perf_counter() - t) / len(ours_keys) * 1e9)
        t = time.perf_counter()
        theirs(theirs_keys)
        b.append((time.perf_counter() - t) / len(theirs_keys) * 1e9)
    return statistics.median(a), statistics.median(b)


def machine():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
        return f"{fields.get('Model name', '?').strip()}, {fields.get('CPU(s)', '?').strip()} CPUs"
    except (OSError, subprocess.SubprocessError):
        return platform.processor() or "?"


def main():
    rows = []

    def row(name, times, goal):
        ours_ns, theirs_ns = times
        rows.append((name, theirs_ns, ours_ns, theirs_ns / ours_ns, goal))

    # uhashring.HashRing.get_node, 50 nodes, both modes.
    for mode, kw in (("default", {}), ("ketama", {"hash_fn": "ketama"})):
        ours, theirs = HashRing(list(NODES), **kw), uhashring.HashRing(list(NODES), **kw)
        keys = KEYS[:5000]
        assert [ours.get_node(k) for k in keys] == [theirs.get_node(k) for k in keys]
        row(f"HashRing.get_node ({mode} mode, 50 nodes)", pair(loop(ours.get_node), keys, loop(theirs.get_node), keys),
            "≥ 5×" if mode == "default" else "")

    # pymemcache RendezvousHash.get_node, 50 nodes (the original is slow: fewer keys).
    ours, theirs = RendezvousHash(list(NODES)), pm.RendezvousHash(list(NODES))
    slow = KEYS[:300]
    assert [ours.get_node(k) for k in slow] == [theirs.get_node(k) for k in slow]
    row("RendezvousHash.get_node (50 nodes)", pair(loop(ours.get_node), KEYS[:5000], loop(theirs.get_node), slow),
        "≥ 100×")

    # Router.route_many on 20,000 keys against a loop of uhashring's get_node.
    ring = uhashring.HashRing(list(NODES))
    router = Router("ketama", NODES, variant="uhashring-md5")
    assert router.route_many(KEYS) == [ring.get_node(k) for k in KEYS]
    default = Router(nodes=NODES)
    row("Router.route_many, 20,000 keys (the default Router: ring, xxh3) vs a uhashring get_node loop",
        pair(default.route_many, KEYS, loop(ring.get_node), KEYS), "≥ 30×")
    row("Router.route_many, 20,000 keys (ketama uhashring-md5: uhashring's own answers) vs a uhashring get_node loop",
        pair(router.route_many, KEYS, loop(ring.get_node), KEYS), "")
    row("Router.route, one call per key (ketama uhashring-md5) vs uhashring get_node",
        pair(loop(router.route), KEYS[:5000], loop(ring.get_node), KEYS[:5000]), "")

    try:
        from cassandra.metadata import Murmur3Token

        raw = [k.encode() for k in KEYS[:5000]]
        assert [hashroute.token(k) for k in raw] == [Murmur3Token.from_key(k).value for k in raw]
        row("token(key) vs cassandra-driver Murmur3Token.from_key(key).value",
            pair(loop(hashroute.token), raw, loop(lambda k: Murmur3Token.from_key(k).value), raw), "")
    except ImportError:
        pass

    versions = {p: metadata.version(p) for p in ("hashroute", "uhashring", "pymemcache", "cassandra-driver")
                if _installed(p)}
    print("## Python package against the originals (scripts/python_bench.sh)\n")
    print(f"Machine: {machine()}; CPython {platform.python_version()}; "
          + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".")
    print(f"Medians of {REPEATS} rounds, each timing both sides back to back (pymemcache's original on 300 "
          "keys a round), one run of the script; the same keys and the same answers on both sides "
          "(asserted before timing). The machine is shared: figures move between runs, the ratios less.\n")
    print("| what | original, ns/key | hashroute, ns/key | speed-up | goal |")
    print("|---|---:|---:|---:|---|")
    for name, theirs, ours, ratio, goal in rows:
        print(f"| {name} | {theirs:,.0f} | {ours:,.0f} | {ratio:,.1f}× | {goal} |")


def _installed(name):
    try:
        metadata.version(name)
        return True
    except metadata.PackageNotFoundError:
        return False


if __name__ == "__main__":
    sys.exit(main())

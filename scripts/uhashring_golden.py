#!/usr/bin/env python3
"""Writes tests/golden/uhashring-md5.csv and tests/golden/uhashring-md5-configs.csv from the
real uhashring (PyPI, 2.x) in its default mode (no hash_fn): the routes the kernel's
`uhashring-md5` Ketama variant must reproduce (tests/uhashring.rs reads both files).

Run: scripts/python_golden.sh (a venv under target/ with uhashring installed), or
`python3 scripts/uhashring_golden.py` where uhashring is importable.
"""
import csv
import hashlib
import os
import sys

import uhashring
from uhashring import HashRing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "golden")

EQ3 = {f"127.0.0.1:{p}": 1 for p in (11211, 11212, 11213)}
W1234 = {f"127.0.0.1:{11210 + w}": w for w in (1, 2, 3, 4)}
N10 = {f"node-{i}": 1 for i in range(10)}


def configs():
    """(name, {node: weight}, ring) for every configuration; the grown and shrunk ones are
    reached with add_node / remove_node on the real ring, as an application would."""
    out = [("eq3", EQ3, HashRing(dict(EQ3))), ("w1234", W1234, HashRing(dict(W1234)))]
    out.append(("n10", N10, HashRing(dict(N10))))
    grown = HashRing(dict(N10))
    grown.add_node("node-10", {"weight": 2})
    out.append(("n10-add", {**N10, "node-10": 2}, grown))
    shrunk = HashRing(dict(N10))
    shrunk.remove_node("node-3")
    out.append(("n10-remove", {k: v for k, v in N10.items() if k != "node-3"}, shrunk))
    uni = {"ünï-0": 1, "节点-1": 3, "b'raw'": 1}
    out.append(("unicode", uni, HashRing(dict(uni))))
    return out


def keys():
    ks = [str(i) for i in range(300)] + [f"key-{i}" for i in range(100)]
    ks += ["", "ключ", "キー", "\t", "x" * 200, "127.0.0.1:11211-0", "node-3-17"]
    # bytes keys as uhashring hashes them: str(b"...")
    ks += [str(b"user:1"), str(b"\x00\xff")]
    return ks


def main():
    rows = []
    for name, _, ring in configs():
        for k in keys():
            md5 = int(hashlib.md5(k.encode("utf-8")).hexdigest(), 16)
            rows.append((name, k.encode("utf-8").hex(), f"{md5:032x}", ring.get_node(k)))
    # The exact-point key: "127.0.0.1:11211-0" is a point of eq3; bisect_right takes the next.
    ring = configs()[0][2]
    assert int(hashlib.md5(b"127.0.0.1:11211-0").hexdigest(), 16) in ring.ring
    with open(os.path.join(GOLDEN, "uhashring-md5.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["config", "key_hex", "key_md5_be", "node"])
        w.writerows(rows)
    with open(os.path.join(GOLDEN, "uhashring-md5-configs.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["config", "node_hex", "weight", "points"])
        for name, nodes, ring in configs():
            for node, weight in nodes.items():
                w.writerow([name, node.encode("utf-8").hex(), weight, ring.distribution[node]])
    print(f"uhashring {getattr(uhashring, '__version__', '?')}: {len(rows)} routes", file=sys.stderr)


if __name__ == "__main__":
    main()

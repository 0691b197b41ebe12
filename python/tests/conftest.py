"""Shared helpers: the reference packages must be importable (the test script installs them);
a missing one skips visibly, and fails when CI is set."""

import os
import random

import pytest


def require(module):
    """Imports `module`, or skips (fails under CI) when it is not installed."""
    try:
        return __import__(module, fromlist=["_"])
    except ImportError as e:
        if os.environ.get("CI"):
            pytest.fail(f"{module} is not installed and CI is set: {e}")
        pytest.skip(f"SKIPPED: {module} is not installed")


def random_keys(n, seed=7):
    """Random ASCII, unicode (beyond Latin-1 too), bytes and int keys."""
    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789:-_/"
    wide = "äöüßéñ中文字キー한국ключ🙂\u0100\u01ff"
    keys = []
    for i in range(n):
        kind = i % 5
        if kind == 0:
            keys.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))))
        elif kind == 1:
            keys.append("".join(rng.choice(wide + alphabet) for _ in range(rng.randint(1, 20))))
        elif kind == 2:
            keys.append(bytes(rng.randrange(256) for _ in range(rng.randint(0, 24))))
        elif kind == 3:
            keys.append(f"user:{rng.randrange(10**9)}")
        else:
            keys.append(rng.randrange(-(10**12), 10**12))
    return keys

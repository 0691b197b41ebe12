"""Drop-in for ``pymemcache.client.rendezvous.RendezvousHash``.

``RendezvousHash(nodes=None, seed=0, hash_function=murmur3_32)`` picks, for a key, the node
with the highest ``murmur3_32(f"{node}-{key}", seed)``; on equal scores the larger
``str(node)`` (returned as that ``str``, as pymemcache does). The scoring runs in Rust; with a
``hash_function`` other than pymemcache's ``murmur3_32`` it runs in Python, exactly as the
original.

Usable as ``pymemcache.client.hash.HashClient(servers, hasher=RendezvousHash)``.

Difference: ``nodes`` is a copy; change the nodes with ``add_node`` / ``remove_node``.
"""

from hashroute._hashroute import RendezvousCore as _Core

__all__ = ["RendezvousHash"]


def _is_default_murmur(fn):
    return fn is None or (
        getattr(fn, "__name__", None) == "murmur3_32"
        and getattr(fn, "__module__", None) == "pymemcache.client.murmur3"
    )


class RendezvousHash(_Core):
    """Highest-random-weight hashing, as pymemcache's ``RendezvousHash``."""

    def __init__(self, nodes=None, seed=0, hash_function=None):
        self._nodes = []
        if nodes is not None:
            self._nodes = list(nodes)
        self.seed = seed
        self._python_fn = None if _is_default_murmur(hash_function) else hash_function
        if self._python_fn is not None:
            # A custom hash: pymemcache's own loop, in Python.
            fn = self._python_fn
            self.hash_function = lambda x: fn(x, seed)
            self.get_node = self._get_node_python
        self._sync()

    def _sync(self):
        self._set_nodes(self._nodes, int(self.seed) & 0xFFFFFFFF)

    @property
    def nodes(self):
        """The nodes, in order (a copy)."""
        return list(self._nodes)

    def add_node(self, node):
        if node not in self._nodes:
            self._nodes.append(node)
            self._sync()

    def remove_node(self, node):
        if node in self._nodes:
            self._nodes.remove(node)
            self._sync()
        else:
            raise ValueError("No such node %s to remove" % (node))

    def _get_node_python(self, key):
        high_score = -1
        winner = None
        for node in self._nodes:
            score = self.hash_function(f"{node}-{key}")
            if score > high_score:
                (high_score, winner) = (score, node)
            elif score == high_score:
                (high_score, winner) = (score, max(str(node), str(winner)))
        return winner

"""hashroute: consistent hashing from a Rust kernel.

- ``Router``: every algorithm of the ``hashroute`` CLI (ring, ketama and its client variants,
  jump, rendezvous, Redis slots, Maglev, the proxies' own placements, token rings...), with the
  CLI's names for algorithms, hashers and options.
- ``token(key)``: the Cassandra token (the DataStax driver's ``Murmur3Token.from_key(key).value``).
- ``slot(key)``: the Redis Cluster slot (``CLUSTER KEYSLOT``).
- ``hashroute.compat.uhashring.HashRing`` and ``hashroute.compat.pymemcache.RendezvousHash``:
  drop-in replacements that answer exactly as the originals, many times faster.
"""

from hashroute._hashroute import (
    ALGORITHMS,
    HASHERS,
    KETAMA_VARIANTS,
    Router,
    slot,
    token,
)

__all__ = ["ALGORITHMS", "HASHERS", "KETAMA_VARIANTS", "Router", "slot", "token"]
__version__ = "0.1.0"

"""Drop-in replacements for pure-Python consistent-hashing libraries.

``hashroute.compat.uhashring.HashRing`` replaces ``uhashring.HashRing``;
``hashroute.compat.pymemcache.RendezvousHash`` replaces
``pymemcache.client.rendezvous.RendezvousHash``. Same constructors, same methods, same answers.
"""

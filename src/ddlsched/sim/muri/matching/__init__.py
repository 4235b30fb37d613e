"""Muri's matchings, in one place.

* :func:`blossom_match` (:mod:`~ddlsched.sim.muri.matching.blossom`): the
  original's own weighted Blossom, re-implemented step for step, its
  tie-breaking included (``matching="reference"``); pure Python below 8
  nodes, the numba-compiled twin
  (:mod:`~ddlsched.sim.muri.matching.blossom_jit`, imported only when first
  needed) from 8 nodes on.
* :class:`TypedMatcher` (:mod:`~ddlsched.sim.muri.matching.bmatching`): a
  maximum-weight b-matching over profile types, solved as an LP over
  Edmonds' polytope with HiGHS (``matching="types"``; highspy imported only
  when first needed).
"""

from ddlsched.sim.muri.matching.blossom import blossom_match
from ddlsched.sim.muri.matching.bmatching import TypedMatcher, violated_odd_set

__all__ = ["TypedMatcher", "blossom_match", "violated_odd_set"]

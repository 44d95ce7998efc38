"""Compiled working-set selection for the SMO solver of ``_smo.py`` (large problems only).

The two passes compute what ``_smo._select_pair``'s NumPy route computes, with the same
arithmetic in the same order, so that both routes pick the same pair:

* ``extremes``: ``i = argmax_{t in I_up} score_t`` (first index on ties), ``m = score_i`` and
  ``M = min_{t in I_low} score_t``;
* ``second_order_partner``: ``j = argmax_t b_t^2 / a_t`` over ``t in I_low`` with
  ``b_t = m - score_t > 0`` and curvature ``a_t = (-2 K_it + K_tt) + K_ii`` (``tau`` where it
  is not positive), first index on ties.

One pass each over the active variables, against about fifteen NumPy passes (and their
temporaries) for the same selection.
"""

from __future__ import annotations

import numpy as np

from ..utils._jit import njit

_TAU = 1e-12


@njit()
def extremes(score, can_up, can_down, group, use_group):  # pragma: no cover - compiled
    i = -1
    g_max = -np.inf
    g_min = np.inf
    for t in range(score.shape[0]):
        if use_group and not group[t]:
            continue
        st = score[t]
        if can_up[t] and st > g_max:
            g_max = st
            i = t
        if can_down[t] and st < g_min:
            g_min = st
    return i, g_max, g_min


@njit()
def second_order_partner(
    score, can_down, group, use_group, k_it, diag, diag_i, g_max
):  # pragma: no cover - compiled
    j = -1
    best = -np.inf
    for t in range(score.shape[0]):
        if not can_down[t] or (use_group and not group[t]):
            continue
        b = g_max - score[t]
        if not b > 0:
            continue
        curv = k_it[t] * -2.0
        curv += diag[t]
        curv += diag_i
        if curv <= 0:
            curv = _TAU
        gain = b * b
        gain /= curv
        if gain > best:
            best = gain
            j = t
    return j, best

"""Worked examples of the notes following Bishop's PRML not tested elsewhere.

§4.2-§4.3 (eq. 4.59, 4.62): the logistic sigmoid and the softmax at the values the notes'
example uses, including a softmax whose inputs would overflow a naive exp.
"""

import numpy as np
import pytest

from mathlearn import autodiff as ad
from mathlearn.utils.extmath import log_softmax, sigmoid, softmax

SOFTMAX_123 = [0.09003057317038046, 0.24472847105479767, 0.6652409557748219]


def test_sigmoid_values_and_derivative():
    # sigma(0) = 1/2, sigma'(0) = sigma(0)(1 - sigma(0)) = 1/4, sigma(2) = 1 / (1 + e^-2).
    assert sigmoid(0.0) == 0.5
    assert float(ad.grad(ad.sigmoid)(np.array(0.0))) == pytest.approx(0.25, rel=1e-15)
    assert sigmoid(2.0) == pytest.approx(0.8807970779778823, rel=1e-15)


@pytest.mark.parametrize("shift", [0.0, 999.0, -1e4])
def test_softmax_values_are_shift_invariant_without_overflow(shift):
    # softmax([1, 2, 3]) = e^k / (e + e^2 + e^3); softmax([1000, 1001, 1002]) is the same.
    z = np.array([1.0, 2.0, 3.0]) + shift
    p = softmax(z)
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p, SOFTMAX_123, rtol=1e-13)
    np.testing.assert_allclose(np.exp(log_softmax(z)), SOFTMAX_123, rtol=1e-13)

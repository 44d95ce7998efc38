"""LinearChainCRF: forward-backward and Viterbi against brute-force enumeration, the
gradient against finite differences, logistic regression as the transition-free case."""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from mathlearn.linear_model import LogisticRegression
from mathlearn.structured import LinearChainCRF


def _fitted(seed=0, K=3, d=2):
    """A CRF with random parameters, set by hand."""
    rng = np.random.default_rng(seed)
    crf = LinearChainCRF()
    crf.classes_ = np.arange(K)
    crf.n_features_in_ = d
    crf.coef_ = rng.standard_normal((K, d))
    crf.intercept_ = rng.standard_normal(K)
    crf.transitions_ = rng.standard_normal((K, K))
    return crf, rng


def _brute(crf, X):
    K, T = len(crf.classes_), X.shape[0]
    paths = np.array(list(itertools.product(range(K), repeat=T)))
    scores = np.array([crf.score_sequence(X, crf.classes_[p]) for p in paths])
    return paths, scores


def test_partition_marginals_and_viterbi_against_enumeration():
    crf, rng = _fitted()
    X = rng.standard_normal((5, 2))  # 3^5 = 243 labellings
    paths, scores = _brute(crf, X)
    logZ = logsumexp(scores)
    # Both sum the same 243 terms in log space: agreement to a few ulps of log Z.
    assert crf.log_partition(X)[0] == pytest.approx(logZ, abs=1e-12)
    p = np.exp(scores - logZ)
    marg = np.array([[p[paths[:, t] == k].sum() for k in range(3)] for t in range(5)])
    np.testing.assert_allclose(crf.predict_marginals(X), marg, atol=1e-13)
    np.testing.assert_array_equal(crf.predict(X), crf.classes_[paths[np.argmax(scores)]])
    # Several sequences at once, with a length-1 sequence.
    X2 = np.vstack([X, rng.standard_normal((1, 2)), X[:3]])
    Z2 = crf.log_partition(X2, lengths=[5, 1, 3])
    assert Z2[0] == pytest.approx(logZ, abs=1e-12)
    assert Z2[1] == pytest.approx(logsumexp(_brute(crf, X2[5:6])[1]), abs=1e-12)
    assert Z2[2] == pytest.approx(logsumexp(_brute(crf, X2[6:])[1]), abs=1e-12)


def test_gradient_against_finite_differences():
    crf, rng = _fitted(1)
    X = rng.standard_normal((9, 2))
    y = rng.integers(0, 3, 9)
    lengths = np.array([4, 5])
    theta = rng.standard_normal(3 * 2 + 3 + 9)
    f, g = crf._nll_grad(theta, X, y, lengths, 3)
    h = 1e-6
    num = np.array(
        [
            (
                crf._nll_grad(theta + h * e, X, y, lengths, 3)[0]
                - crf._nll_grad(theta - h * e, X, y, lengths, 3)[0]
            )
            / (2 * h)
            for e in np.eye(theta.size)
        ]
    )
    # Central differences: truncation h^2 f''' ~ 1e-12, rounding eps |f| / h ~ 1e-9.
    np.testing.assert_allclose(g, num, atol=1e-7)
    # The objective is the brute-force negative log-likelihood plus the penalty.
    crf2 = LinearChainCRF(alpha=1.0)
    crf2.classes_ = crf.classes_
    crf2.n_features_in_ = 2
    W, b, A = crf._unpack(theta, 3, 2)
    crf2.coef_, crf2.intercept_, crf2.transitions_ = W, b, A
    nll = 0.0
    for sl in (slice(0, 4), slice(4, 9)):
        _, scores = _brute(crf2, X[sl])
        nll += logsumexp(scores) - crf2.score_sequence(X[sl], y[sl])
    assert f == pytest.approx(nll + 0.5 * (np.sum(W**2) + np.sum(A**2)), rel=1e-12)


def test_without_transitions_is_multinomial_logistic_regression():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((90, 3))
    y = np.argmax(X @ rng.standard_normal((3, 3)) + rng.gumbel(size=(90, 3)), axis=1)
    crf = LinearChainCRF(alpha=0.5, transitions=False, tol=1e-8).fit(X, y, lengths=[30, 60])
    lr = LogisticRegression(C=2.0, solver="newton", tol=1e-12).fit(X, y)
    # Same objective (C Σ ℓ + ½‖W‖² with C = 1 / alpha, intercept unpenalised); the CRF stops
    # at gradient ≤ 1e-8 per position and the Hessian per position is ≥ alpha / n = 5.6e-3
    # on the weights: they agree to ~sqrt(12) 1e-8 / 5.6e-3 ≈ 6e-6 at worst.
    np.testing.assert_allclose(crf.coef_, lr.coef_, atol=6e-6)
    np.testing.assert_allclose(crf.intercept_ - crf.intercept_.mean(), lr.intercept_, atol=6e-6)
    np.testing.assert_allclose(crf.predict_marginals(X), lr.predict_proba(X), atol=2e-5)


def test_transitions_help_decode_a_noisy_sequence():
    # Labels persist (sticky chain); observations are the label plus heavy noise.
    rng = np.random.default_rng(3)
    T = 600
    y = np.zeros(T, dtype=int)
    for t in range(1, T):
        y[t] = y[t - 1] if rng.random() < 0.95 else 1 - y[t - 1]
    X = (2.0 * y - 1.0)[:, None] + 1.5 * rng.standard_normal((T, 1))
    crf = LinearChainCRF(alpha=0.01).fit(X[:400], y[:400])
    flat = LinearChainCRF(alpha=0.01, transitions=False).fit(X[:400], y[:400])
    acc_crf = np.mean(crf.predict(X[400:]) == y[400:])
    acc_flat = np.mean(flat.predict(X[400:]) == y[400:])
    assert crf.transitions_[0, 0] > crf.transitions_[0, 1]
    assert acc_crf > acc_flat


def test_bad_inputs():
    X = np.random.default_rng(4).standard_normal((10, 2))
    y = np.arange(10) % 2
    with pytest.raises(ValueError, match="at least 2 classes"):
        LinearChainCRF().fit(X, np.zeros(10))
    with pytest.raises(ValueError, match="lengths sum"):
        LinearChainCRF().fit(X, y, lengths=[3, 3])
    with pytest.raises(ValueError, match="positive integers"):
        LinearChainCRF().fit(X, y, lengths=[10.0])
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        LinearChainCRF().fit(Xn, y)
    names = np.array(["B", "I"])[y]
    crf = LinearChainCRF().fit(X, names)
    assert set(crf.predict(X)) <= {"B", "I"}
    assert not hasattr(crf, "predict_proba")


def test_chains_of_mixed_lengths_are_batched_exactly():
    # Chains of equal length run through forward-backward together; the answers must be
    # those of each chain alone, in the order given.
    rng = np.random.default_rng(5)
    lengths = [3, 5, 3, 1, 5, 2]
    X = rng.normal(size=(sum(lengths), 2))
    y = rng.integers(0, 3, sum(lengths))
    crf = LinearChainCRF(alpha=0.5).fit(X, y, lengths=lengths)
    starts = np.r_[0, np.cumsum(lengths)[:-1]]
    alone = [
        crf.log_partition(X[s : s + T], lengths=[T])[0]
        for s, T in zip(starts, lengths, strict=True)
    ]
    np.testing.assert_allclose(crf.log_partition(X, lengths=lengths), alone, rtol=1e-14)
    marg = np.vstack(
        [crf.predict_marginals(X[s : s + T]) for s, T in zip(starts, lengths, strict=True)]
    )
    np.testing.assert_allclose(crf.predict_marginals(X, lengths=lengths), marg, atol=1e-14)

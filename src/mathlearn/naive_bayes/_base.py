"""What the naive Bayes classifiers share: labels across ``partial_fit`` calls, class priors."""

from __future__ import annotations

import numpy as np
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets

from ..base import BaseClassifier, InformationCriterionMixin, _class_indices
from ..utils._backend import is_dask


class _BaseNB(InformationCriterionMixin, BaseClassifier):
    """Class bookkeeping for ``fit`` / ``partial_fit`` and the class prior.

    The class prior is the posterior predictive under a symmetric Dirichlet(``a``) prior,
    ``π_k = (n_k + a) / (n + K a)`` (Oxford "Advanced Topics in Statistical Machine Learning"
    §7.2); ``a = 0`` is the maximum-likelihood ``n_k / n``.

    ``aic(X, y)`` / ``bic(X, y)`` use the joint log-likelihood ``Σ_i ln p(x_i, y_i)`` of the
    generative model and ``M`` = ``K - 1`` class-prior parameters (none when the prior is fixed
    or uniform) plus the subclass's ``_n_feature_parameters()``. With pseudo-counts or variance
    smoothing they are evaluated at the smoothed estimate, which is the maximum-likelihood one
    only as the smoothing goes to zero.
    """

    def _log_coefficient(self, X):
        """Per-sample terms of ``ln p(x | y)`` that do not depend on the parameters."""
        return 0.0

    def _total_log_likelihood(self, X, y=None) -> float:
        idx = _class_indices(self, y)
        jll = self.predict_joint_log_proba(X)
        if jll.shape[0] != idx.shape[0]:
            raise ValueError(f"X has {jll.shape[0]} rows but y has {idx.shape[0]} labels.")
        const = np.sum(self._log_coefficient(X)) if jll.shape[0] else 0.0
        return float(jll[np.arange(idx.shape[0]), idx].sum() + const)

    def _n_parameters(self) -> int:
        K = len(self.classes_)
        learned_prior = self.class_prior is None and self.fit_prior
        return (K - 1) * int(learned_prior) + int(self._n_feature_parameters())

    def _labels_to_index(self, y, classes, first_call: bool):
        check_classification_targets(y)
        y = np.asarray(y)
        if first_call:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            classes = np.unique(np.asarray(classes))
            if classes.shape[0] < 2:
                raise ValueError(
                    f"{type(self).__name__} needs samples of at least 2 classes; got "
                    f"{classes.shape[0]} class."
                )
            self.classes_ = classes
        elif classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise ValueError(
                f"classes={list(np.unique(classes))} differs from the classes of the first "
                f"call, {list(self.classes_)}."
            )
        idx = np.searchsorted(self.classes_, y)
        idx = np.clip(idx, 0, len(self.classes_) - 1)
        bad = self.classes_[idx] != y
        if np.any(bad):
            raise ValueError(
                f"y holds labels not in classes: {sorted(set(np.asarray(y)[bad].tolist()))}."
            )
        return idx

    def _update_class_log_prior(self):
        K = len(self.classes_)
        if self.class_prior is not None:
            prior = np.asarray(self.class_prior, dtype=float)
            if prior.shape != (K,):
                raise ValueError(f"class_prior must have {K} entries; got shape {prior.shape}.")
            if np.any(prior <= 0) or abs(prior.sum() - 1) > 1e-8:
                raise ValueError("class_prior must be positive and sum to 1.")
            self.class_log_prior_ = np.log(prior)
            return
        if not self.fit_prior:
            self.class_log_prior_ = np.full(K, -np.log(K))
            return
        a = float(self.class_prior_alpha)
        counts = self.class_count_ + a
        with np.errstate(divide="ignore"):
            self.class_log_prior_ = np.log(counts) - np.log(counts.sum())

    def predict_joint_log_proba(self, X):
        """``log p(x, y = k)``, shape (n_samples, n_classes)."""
        from ..base import check_is_fitted

        check_is_fitted(self)
        return self._joint_log_likelihood(self._validate_X_predict(X))

    def predict_log_proba(self, X):
        """Log class posteriors; raises if a sample has zero likelihood under every class."""
        from ..base import check_is_fitted
        from ..utils.extmath import logsumexp

        check_is_fitted(self)
        if is_dask(X):
            from ._dask import nb_predict_dask

            return nb_predict_dask(self, X, "log_proba")
        jll = self._joint_log_likelihood(self._validate_X_predict(X))
        norm = logsumexp(jll, axis=1, keepdims=True)
        dead = ~np.isfinite(norm[:, 0])
        if np.any(dead):
            i = int(np.flatnonzero(dead)[0])
            raise ValueError(
                f"sample {i} has probability zero under every class: with the "
                "maximum-likelihood estimate (alpha=0) a feature value never seen with a "
                "class in training has probability 0 (the zero-count pitfall). Use alpha > 0 "
                "(the Bayesian posterior-predictive estimate)."
            )
        return jll - norm

    def predict(self, X):
        """The class with the largest posterior probability."""
        if is_dask(X):
            from ..base import check_is_fitted
            from ._dask import nb_predict_dask

            check_is_fitted(self)
            return nb_predict_dask(self, X, "labels")
        log_proba = self.predict_log_proba(X)
        return self.classes_[np.argmax(log_proba, axis=1)]

    # Like scikit-learn's naive Bayes: no decision_function (predict_proba saturates at 0 and
    # 1 where the log-odds still differ, so the two would rank samples differently).
    decision_function = available_if(lambda self: False)(BaseClassifier.decision_function)

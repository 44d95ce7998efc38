"""Content-based recommendation: a ridge regression per user on item features, or per item
on user features."""

from __future__ import annotations

from numbers import Real

import numpy as np

from ..base import _fit_context
from ..utils._param_validation import Interval
from ._base import ridge_rows
from ._factor import FactorModel, Pattern


def _features(features, ids: np.ndarray, name: str) -> np.ndarray:
    if hasattr(features, "loc") and hasattr(features, "index"):
        missing = [x for x in ids.tolist() if x not in features.index]
        if missing:
            raise ValueError(f"{name} has no row for id(s) {missing[:5]}.")
        F = np.asarray(features.loc[ids.tolist()].to_numpy(), dtype=np.float64)
    elif isinstance(features, dict):
        missing = [x for x in ids.tolist() if x not in features]
        if missing:
            raise ValueError(f"{name} has no entry for id(s) {missing[:5]}.")
        F = np.asarray([np.asarray(features[x], dtype=np.float64) for x in ids.tolist()])
    else:
        F = np.asarray(features, dtype=np.float64)
        if F.ndim != 2 or F.shape[0] != ids.size:
            raise ValueError(
                f"{name} must have shape ({ids.size}, n_features), one row per id in the "
                f"ratings' id map; got {F.shape}."
            )
    if F.ndim != 2 or F.shape[1] == 0:
        raise ValueError(f"{name} must be a 2-D array with at least one feature.")
    if not np.all(np.isfinite(F)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return F


class ContentBased(FactorModel):
    """Content-based recommender: per-user ridge on item features (or per-item on user
    features).

    Given item features phi_i, each user's coefficient vector solves (6.1),

    ``psi_u = argmin sum_{i rated by u} (r_ui - mu - phi_i^T psi)^2 + lambda ||psi||^2
    = (sum phi_i phi_i^T + lambda I)^{-1} sum (r_ui - mu) phi_i``;

    given user features instead, each item's vector solves the symmetric problem (6.2).

    Parameters
    ----------
    regularization : float, default=1.0
        lambda (lambda_psi or lambda_phi in the notes).
    center : bool, default=True
        Regress r_ui - mu with mu the training mean; ``False`` regresses r_ui (the notes'
        (6.1) exactly).

    Attributes
    ----------
    user_factors_ : ndarray of shape (n_users, n_features)
        psi_u (learned) or the user features.
    item_factors_ : ndarray of shape (n_items, n_features)
        The item features or phi_i (learned).
    user_bias_, item_bias_ : ndarray
        Zeros.
    offset_ : float
        mu (0 without centring).
    global_mean_ : float
        Mean training rating.
    user_ids_, item_ids_ : ndarray
        The id maps.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" §6.2, (6.1)-(6.2): not
    collaborative, each user's model uses only that user's ratings. Users (items) without
    ratings get zero coefficients, i.e. the prediction mu. Features are needed for the ids of
    the ratings; ids absent from the ratings get the fallback of :meth:`predict`.

    Complexity: with ``U`` users, ``I`` items, ``N`` observed ratings and ``D`` features,
    ``fit`` with item features solves one ridge problem per user, its ``D x D`` normal
    matrix accumulated from the feature rows of its ratings and Cholesky-factorised:
    ``O(N D^2 + U D^3)`` time (with user features, one per item: ``O(N D^2 + I D^3)``),
    after a sort of the ratings by user and by item (``O(N log N)`` at most). Memory: the
    learned coefficients (``U D``, or ``I D``), the features, kept as the other side's
    factors, the ratings in both orientations (``O(N)``) and per-row scratch of
    ``D^2 + (D + 1) n_max`` numbers (``n_max`` the longest row). ``predict`` costs ``O(D)``
    per pair, ``recommend`` ``O(I D)``.

    See Also
    --------
    ALS : learns both sides' vectors by alternating these regressions.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.recommender import ContentBased, Ratings
    >>> r = Ratings.from_triples([0, 0, 1], ["a", "b", "a"], [5.0, 1.0, 4.0])
    >>> features = np.array([[1.0, 0.0], [0.0, 1.0]])  # rows follow r.item_ids
    >>> m = ContentBased(regularization=0.1, center=False).fit(r, item_features=features)
    >>> m.predict([1], ["b"]).tolist()
    [0.0]
    """

    _parameter_constraints = {
        "regularization": [Interval(Real, 0, None, closed="neither")],
        "center": ["boolean"],
    }

    def __init__(self, *, regularization: float = 1.0, center: bool = True) -> None:
        self.regularization = regularization
        self.center = center

    @_fit_context
    def fit(self, ratings, y=None, *, item_features=None, user_features=None) -> ContentBased:
        """Fit one ridge regression per user (item features) or per item (user features).

        Parameters
        ----------
        ratings : Ratings, scipy.sparse matrix (users x items) or DataFrame
            Training ratings.
        y : None
            Ignored.
        item_features : array-like of shape (n_items, d), DataFrame indexed by item id or dict
            Features of the items, rows in the order of the ratings' ``item_ids``.
        user_features : array-like of shape (n_users, d), DataFrame or dict
            Features of the users; give exactly one of the two.

        Returns
        -------
        self : ContentBased
        """
        if (item_features is None) == (user_features is None):
            raise ValueError("Give exactly one of item_features and user_features.")
        data = self._setup(ratings)
        pattern = Pattern(data)
        self.offset_ = self.global_mean_ if self.center else 0.0
        lam = float(self.regularization)
        if item_features is not None:
            F = _features(item_features, data.item_ids, "item_features")
            t = (data.values - self.offset_)[pattern.perm_u]
            self.item_factors_ = F
            self.user_factors_ = ridge_rows(pattern.R, t, F, np.full(data.shape[0], lam))
        else:
            F = _features(user_features, data.user_ids, "user_features")
            t = (data.values - self.offset_)[pattern.perm_i]
            self.user_factors_ = F
            self.item_factors_ = ridge_rows(pattern.Rt, t, F, np.full(data.shape[1], lam))
        self.user_bias_ = np.zeros(data.shape[0])
        self.item_bias_ = np.zeros(data.shape[1])
        return self

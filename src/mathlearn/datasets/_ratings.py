"""The notes' toy movie-ratings table and a synthetic low-rank ratings generator."""

from __future__ import annotations

import numpy as np

from ..utils.validation import check_random_state

_TOY = {  # Oxford notes §6.1: rows are movies, columns users; missing entries left out.
    "Happy Gilmore": {"Bob": 2, "Chuck": 5, "Dan": 1, "Eve": 4},
    "Click": {"Alice": 1, "Chuck": 4},
    "Ex Machina": {"Bob": 4, "Eve": 2},
    "Blade Runner": {"Alice": 5, "Chuck": 1},
    "The Matrix": {"Alice": 5, "Bob": 5, "Eve": 4},
}


def load_toy_ratings():
    """The toy ratings table of the Oxford notes (5 users x 5 movies, 13 ratings of 1-5).

    Returns
    -------
    ratings : mathlearn.recommender.Ratings
        Users Alice, Bob, Chuck, Dan, Eve (rows) and the movies Blade Runner, Click,
        Ex Machina, Happy Gilmore, The Matrix (columns, sorted by title).

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" §6.1: the table there has
    movies as rows and users as columns; a :class:`~mathlearn.recommender.Ratings` is always
    users x items.

    Examples
    --------
    >>> from mathlearn.datasets import load_toy_ratings
    >>> r = load_toy_ratings()
    >>> r.shape, r.nnz
    ((5, 5), 13)
    >>> r.user_ids.tolist()
    ['Alice', 'Bob', 'Chuck', 'Dan', 'Eve']
    """
    from ..recommender import Ratings

    users, items, values = [], [], []
    for movie, row in _TOY.items():
        for user, rating in row.items():
            users.append(user)
            items.append(movie)
            values.append(float(rating))
    return Ratings.from_triples(users, items, values)


def make_low_rank_ratings(
    n_users: int = 1000,
    n_items: int = 500,
    n_ratings: int = 20000,
    *,
    rank: int = 5,
    noise: float = 0.5,
    mean: float = 3.5,
    bias_std: float = 0.3,
    random_state=None,
    return_truth: bool = False,
):
    """Ratings from a low-rank model plus Gaussian noise, at uniformly random (user, item)
    pairs.

    ``r_ui = mean + b_u + c_i + p_u^T q_i + eps``, with p_u, q_i ~ N(0, I / sqrt(rank)) (so
    p_u^T q_i has variance about 1), b_u, c_i ~ N(0, bias_std^2), eps ~ N(0, noise^2). The
    observed pairs are ``n_ratings`` distinct pairs drawn uniformly: the exposure model of
    the notes' probabilistic matrix factorisation. The best possible RMSE on fresh ratings
    is ``noise`` (the noise floor).

    Parameters
    ----------
    n_users, n_items : int, default=1000, 500
        Matrix size (users x items).
    n_ratings : int, default=20000
        Number of observed ratings (at most n_users * n_items).
    rank : int, default=5
        Rank of the interaction term.
    noise : float, default=0.5
        Standard deviation of the noise.
    mean : float, default=3.5
        Global mean.
    bias_std : float, default=0.3
        Standard deviation of the user and item biases.
    random_state : int, Generator or None, default=None
        Seed.
    return_truth : bool, default=False
        Also return the noiseless function.

    Returns
    -------
    ratings : mathlearn.recommender.Ratings
        Users ``0 .. n_users - 1``, items ``0 .. n_items - 1``.
    truth : callable, only with ``return_truth``
        ``truth(u, i)`` gives the noiseless ratings at index arrays u, i.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" §6.4 (the generative model of
    probabilistic matrix factorisation, with biases added).

    Examples
    --------
    >>> from mathlearn.datasets import make_low_rank_ratings
    >>> r = make_low_rank_ratings(50, 40, 300, rank=2, random_state=0)
    >>> r.shape, r.nnz
    ((50, 40), 300)
    """
    from ..recommender import Ratings

    total = int(n_users) * int(n_items)
    if not 0 < int(n_ratings) <= total:
        raise ValueError(f"n_ratings must be in [1, {total}]; got {n_ratings}.")
    rng = check_random_state(random_state)
    P = rng.standard_normal((n_users, rank)) / rank**0.25
    Q = rng.standard_normal((n_items, rank)) / rank**0.25
    bu = bias_std * rng.standard_normal(n_users)
    bi = bias_std * rng.standard_normal(n_items)
    keys = np.empty(0, dtype=np.int64)
    while keys.size < n_ratings:
        extra = rng.integers(0, total, size=int(1.1 * (n_ratings - keys.size)) + 16)
        keys = np.unique(np.r_[keys, extra])
    keys = np.sort(rng.permutation(keys)[:n_ratings])
    u, i = keys // n_items, keys % n_items

    def truth(uu, ii):
        uu, ii = np.asarray(uu), np.asarray(ii)
        return mean + bu[uu] + bi[ii] + np.einsum("nk,nk->n", P[uu], Q[ii])

    values = truth(u, i) + noise * rng.standard_normal(u.size)
    ids_u = np.arange(n_users).astype(object)
    ids_i = np.arange(n_items).astype(object)
    ratings = Ratings(u, i, values, ids_u, ids_i)
    return (ratings, truth) if return_truth else ratings

"""Warnings and errors raised by mathlearn.

``NotFittedError`` is scikit-learn's, re-exported so that ``except NotFittedError`` works for
users of either library.
"""

from sklearn.exceptions import ConvergenceWarning, NotFittedError

__all__ = ["ConvergenceWarning", "InvalidParameterError", "NotFittedError", "NumericalWarning"]


class NumericalWarning(UserWarning):
    """A computation needed a numerical safeguard (jitter, clipping) to proceed.

    Raised, for example, when a covariance matrix had to be regularised with jitter before
    its Cholesky factorisation succeeded. The result is usable, but the input was close to
    singular and the user should know.

    See Also
    --------
    mathlearn.utils.linalg.cholesky
        Adds jitter and warns with it.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from mathlearn.exceptions import NumericalWarning
    >>> from mathlearn.utils.linalg import cholesky
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = cholesky(np.ones((2, 2)))  # singular: jitter is added
    >>> caught[0].category is NumericalWarning
    True
    """


class InvalidParameterError(ValueError, TypeError):
    """A hyperparameter or function argument has a type or value it may not take.

    It subclasses both ``ValueError`` and ``TypeError`` (as scikit-learn's error of the same
    name does), so code that catches either keeps working. The message names the parameter,
    the estimator or function, every allowed form, and the value given.

    See Also
    --------
    mathlearn.exceptions.NumericalWarning
        Raised when a safeguard was needed.

    Examples
    --------
    >>> from mathlearn import optim
    >>> from mathlearn.exceptions import InvalidParameterError
    >>> try:
    ...     optim.sgd("abc")
    ... except InvalidParameterError as err:
    ...     print(err)  # doctest: +ELLIPSIS
    The 'learning_rate' parameter of sgd must be ... Got 'abc' instead.
    """

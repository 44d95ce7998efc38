"""Declarative validation of hyperparameters and function arguments.

An estimator lists what each constructor argument may be in a class attribute,

.. code-block:: python

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "solver": [StrOptions({"auto", "full", "randomized"})],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

and its ``fit`` (``partial_fit``, ``fit_transform``, ``fit_predict``) is decorated with
:func:`mathlearn.base._fit_context`, which checks every parameter against its list before the
method runs. A value is valid when it satisfies at least one constraint of its list; otherwise
an :class:`~mathlearn.exceptions.InvalidParameterError` names the parameter, the estimator and
every allowed form::

    The 'max_iter' parameter of FactorAnalysis must be an int in the range [1, inf). Got 0
    instead.

Public functions use the :func:`validate_params` decorator with the same constraint lists.

The idiom is scikit-learn's (its module is private, so it is written here). A constraint is
one of:

* a :class:`Interval` of integers (``Integral``), reals (``Real``) or reals that are not
  integers (``RealNotInt``); bools are never numbers here, and NaN lies in no interval;
* :class:`StrOptions` (a set of strings) or :class:`Options` (a set of values of one type);
* :class:`HasMethods` (duck typing, e.g. an estimator with ``fit`` and ``predict``);
* a type (``Kernel``, ``numbers.Integral``, ``np.ndarray``, ...): ``isinstance``;
* ``None``, ``callable``, or one of the strings ``"array-like"``, ``"sparse matrix"``,
  ``"random_state"``, ``"boolean"``, ``"verbose"``;
* ``"no_validation"`` in place of the whole list, for a parameter that accepts anything.
"""

from __future__ import annotations

import functools
import inspect
import numbers
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from ..exceptions import InvalidParameterError

__all__ = [
    "HasMethods",
    "Hidden",
    "Integral",
    "Interval",
    "InvalidParameterError",
    "Options",
    "Real",
    "RealNotInt",
    "StrOptions",
    "make_constraint",
    "validate_parameter_constraints",
    "validate_params",
]


class RealNotInt(numbers.Real, ABC):
    """Marker type for :class:`Interval`: a real number that is not an integer type.

    ``Interval(RealNotInt, 0, 1)`` accepts ``0.5`` but not ``1``, which lets a parameter take
    an int meaning a count and a float meaning a fraction (``max_features=3`` against
    ``max_features=0.3``).
    """


RealNotInt.register(float)
RealNotInt.register(np.floating)


def _type_name(t) -> str:
    if t is Integral:
        return "int"
    if t is Real:
        return "float"
    if t is RealNotInt:
        return "float"
    if t is bool:
        return "bool"
    if t is str:
        return "str"
    module = t.__module__
    if module in ("builtins", "numbers") or module.startswith("mathlearn."):
        return t.__qualname__
    return f"{module}.{t.__qualname__}"


def _is_bool(val) -> bool:
    return isinstance(val, bool | np.bool_)


class _Constraint(ABC):
    """A set of allowed values with a description for error messages."""

    hidden = False

    @abstractmethod
    def is_satisfied_by(self, val) -> bool:
        """Whether ``val`` is allowed."""

    @abstractmethod
    def __str__(self) -> str:
        """Description that completes "must be ..."."""


class _InstancesOf(_Constraint):
    def __init__(self, type_):
        self.type = type_

    def is_satisfied_by(self, val) -> bool:
        if self.type in (Integral, Real, RealNotInt) and _is_bool(val):
            return False
        return isinstance(val, self.type)

    def __str__(self) -> str:
        return f"an instance of {_type_name(self.type)!r}"


class _NoneConstraint(_Constraint):
    def is_satisfied_by(self, val) -> bool:
        return val is None

    def __str__(self) -> str:
        return "None"


class _Booleans(_Constraint):
    def is_satisfied_by(self, val) -> bool:
        return _is_bool(val)

    def __str__(self) -> str:
        return "a bool"


class _Verbose(_Constraint):
    def is_satisfied_by(self, val) -> bool:
        return _is_bool(val) or (isinstance(val, Integral) and val >= 0)

    def __str__(self) -> str:
        return "a bool or an int >= 0"


class _RandomStates(_Constraint):
    """``None``, a seed in ``[0, 2**32 - 1]``, or a NumPy ``RandomState``/``Generator``."""

    def is_satisfied_by(self, val) -> bool:
        if val is None or isinstance(val, np.random.RandomState | np.random.Generator):
            return True
        return isinstance(val, Integral) and not _is_bool(val) and 0 <= val <= 2**32 - 1

    def __str__(self) -> str:
        return (
            "None, an int in the range [0, 4294967295], a numpy.random.Generator or a "
            "numpy.random.RandomState"
        )


class _ArrayLikes(_Constraint):
    def is_satisfied_by(self, val) -> bool:
        if isinstance(val, str | bytes) or np.isscalar(val):
            return False
        return hasattr(val, "__len__") or hasattr(val, "shape") or hasattr(val, "__array__")

    def __str__(self) -> str:
        return "an array-like"


class _SparseMatrices(_Constraint):
    def is_satisfied_by(self, val) -> bool:
        return sp.issparse(val)

    def __str__(self) -> str:
        return "a sparse matrix"


class _Callables(_Constraint):
    def is_satisfied_by(self, val) -> bool:
        return callable(val)

    def __str__(self) -> str:
        return "a callable"


class Interval(_Constraint):
    """Numbers of a type in an interval.

    Parameters
    ----------
    type : {numbers.Integral, numbers.Real, RealNotInt}
        The numbers allowed. Bools are rejected for every type, and NaN lies in no interval.
    left, right : float, int or None
        The bounds; ``None`` means unbounded on that side (and the infinite value itself is
        outside unless that side is closed).
    closed : {"left", "right", "both", "neither"}
        Which bounds belong to the interval.

    Examples
    --------
    >>> from numbers import Integral
    >>> Interval(Integral, 1, None, closed="left").is_satisfied_by(0)
    False
    >>> str(Interval(Integral, 1, None, closed="left"))
    'an int in the range [1, inf)'
    """

    def __init__(self, type, left, right, *, closed: str):
        if type not in (Integral, Real, RealNotInt):
            raise ValueError(f"Interval type must be Integral, Real or RealNotInt; got {type}.")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"closed must be 'left', 'right', 'both' or 'neither'; {closed!r}")
        if type is Integral:
            for bound in (left, right):
                if bound is not None and not isinstance(bound, Integral):
                    raise TypeError("The bounds of an Integral interval must be ints or None.")
        if left is not None and right is not None and right < left:
            raise ValueError(f"right bound {right} is below the left bound {left}.")
        self.type = type
        self.left = left
        self.right = right
        self.closed = closed

    def __contains__(self, val) -> bool:
        if not isinstance(val, Real) or _is_bool(val):
            return False
        val = float(val) if not isinstance(val, Integral) else val
        if isinstance(val, float) and np.isnan(val):
            return False
        # An unbounded side never contains its infinity, whatever ``closed`` says.
        left_closed = self.closed in ("left", "both") and self.left is not None
        right_closed = self.closed in ("right", "both") and self.right is not None
        left = -np.inf if self.left is None else self.left
        right = np.inf if self.right is None else self.right
        if (val < left) or (val == left and not left_closed):
            return False
        return not ((val > right) or (val == right and not right_closed))

    def is_satisfied_by(self, val) -> bool:
        if not _InstancesOf(self.type).is_satisfied_by(val):
            return False
        return val in self

    def __str__(self) -> str:
        kind = "an int" if self.type is Integral else "a float"
        left = "-inf" if self.left is None else self.left
        right = "inf" if self.right is None else self.right
        lb = "[" if self.closed in ("left", "both") and self.left is not None else "("
        rb = "]" if self.closed in ("right", "both") and self.right is not None else ")"
        return f"{kind} in the range {lb}{left}, {right}{rb}"


class Options(_Constraint):
    """A finite set of values of one type (``Options(Real, {0.5, 1.0})``)."""

    def __init__(self, type, options: Iterable):
        self.type = type
        self.options = set(options)

    def is_satisfied_by(self, val) -> bool:
        try:
            return isinstance(val, self.type) and val in self.options
        except TypeError:  # an unhashable value
            return False

    def _repr_options(self) -> str:
        return "{" + ", ".join(repr(o) for o in sorted(self.options, key=repr)) + "}"

    def __str__(self) -> str:
        return f"a {_type_name(self.type)} among {self._repr_options()}"


class StrOptions(Options):
    """A finite set of strings (``StrOptions({"auto", "full"})``)."""

    def __init__(self, options: Iterable[str]):
        super().__init__(str, options)


class HasMethods(_Constraint):
    """Objects that have every named method (``HasMethods(["fit", "predict"])``)."""

    def __init__(self, methods: str | Iterable[str]):
        self.methods = [methods] if isinstance(methods, str) else list(methods)

    def is_satisfied_by(self, val) -> bool:
        return all(callable(getattr(val, m, None)) for m in self.methods)

    def __str__(self) -> str:
        names = ", ".join(repr(m) for m in self.methods)
        return f"an object implementing {names}"


class Hidden:
    """Wraps a constraint that is accepted but left out of error messages (internal values)."""

    def __init__(self, constraint):
        self.constraint = constraint


_STRING_CONSTRAINTS = {
    "array-like": _ArrayLikes,
    "sparse matrix": _SparseMatrices,
    "random_state": _RandomStates,
    "boolean": _Booleans,
    "verbose": _Verbose,
}


def make_constraint(constraint) -> _Constraint:
    """Turn an entry of a constraint list into a constraint object."""
    if isinstance(constraint, Hidden):
        inner = make_constraint(constraint.constraint)
        inner.hidden = True
        return inner
    if isinstance(constraint, _Constraint):
        return constraint
    if constraint is None:
        return _NoneConstraint()
    if constraint is callable:
        return _Callables()
    if isinstance(constraint, str) and constraint in _STRING_CONSTRAINTS:
        return _STRING_CONSTRAINTS[constraint]()
    if isinstance(constraint, type):
        return _InstancesOf(constraint)
    raise ValueError(f"Unknown constraint type: {constraint!r}.")


def _describe(constraints: Sequence[_Constraint]) -> str:
    shown = [str(c) for c in constraints if not c.hidden]
    if len(shown) == 1:
        return shown[0]
    return f"{', '.join(shown[:-1])} or {shown[-1]}"


# Constraint objects of each constraint list, made once: the lists are class attributes (or
# a decorated function's), read at every fit. Keyed by the list's identity, the list kept
# (so that its identity is not reused) with the items it held, which must still be the same
# objects (a list changed in place is read again). A fit otherwise made them anew each
# time: about 9 kB of short-lived objects for BayesianGaussianMixture's sixteen parameters.
_CONSTRAINT_OBJECTS: dict[int, tuple[list, tuple, tuple[_Constraint, ...]]] = {}
_CONSTRAINT_OBJECTS_MAX = 4096


def _constraint_objects(entry: list) -> tuple[_Constraint, ...]:
    cached = _CONSTRAINT_OBJECTS.get(id(entry))
    if (
        cached is not None
        and cached[0] is entry
        and len(cached[1]) == len(entry)
        and all(a is b for a, b in zip(cached[1], entry, strict=True))
    ):
        return cached[2]
    objs = tuple(make_constraint(c) for c in entry)
    if len(_CONSTRAINT_OBJECTS) < _CONSTRAINT_OBJECTS_MAX:
        _CONSTRAINT_OBJECTS[id(entry)] = (entry, tuple(entry), objs)
    return objs


def validate_parameter_constraints(constraints: dict, params: dict, caller_name: str) -> None:
    """Check each of ``params`` against its constraint list in ``constraints``.

    Parameters
    ----------
    constraints : dict
        ``name -> list of constraints`` (or ``"no_validation"``). Parameters without an entry
        are not checked.
    params : dict
        ``name -> value`` to check.
    caller_name : str
        The estimator's class name or the function's name, for the message.

    Raises
    ------
    InvalidParameterError
        Naming the parameter, the caller, the allowed forms and the value given.
    """
    for name, value in params.items():
        if name not in constraints:
            continue
        entry = constraints[name]
        if isinstance(entry, str) and entry == "no_validation":
            continue
        objs = _constraint_objects(entry)
        if any(c.is_satisfied_by(value) for c in objs):
            continue
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller_name} must be {_describe(objs)}. "
            f"Got {value!r} instead."
        )


def validate_params(parameter_constraints: dict) -> Callable:
    """Decorator that validates a public function's arguments against constraint lists.

    Examples
    --------
    >>> from numbers import Integral
    >>> @validate_params({"n": [Interval(Integral, 1, None, closed="left")]})
    ... def ones(n):
    ...     return [1] * n
    >>> ones(2)
    [1, 1]
    >>> ones(0)
    Traceback (most recent call last):
    ...
    mathlearn.exceptions.InvalidParameterError: The 'n' parameter of ones must be an int in \
the range [1, inf). Got 0 instead.
    """

    def decorator(func):
        signature = inspect.signature(func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            params = {
                k: v
                for k, v in bound.arguments.items()
                if signature.parameters[k].kind
                not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
            }
            validate_parameter_constraints(parameter_constraints, params, func.__qualname__)
            return func(*args, **kwargs)

        wrapper._parameter_constraints = parameter_constraints
        return wrapper

    return decorator

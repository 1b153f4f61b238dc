"""Calling the user's own code (an Aspect's ``visit``, a validation, a module's ``define``):
whatever it does wrong becomes one :class:`~fleet.core.errors.DefinitionError` that names
its file:line and what was expected, never a traceback.

* a wrong signature is found before the call (``inspect.signature(...).bind``), located at
  the function's ``def`` line;
* an exception is located at the innermost line of the user's code that raised it (else at
  the ``def`` line); the fleet's own errors (:class:`~fleet.core.errors.FleetError`) pass
  through unchanged, they already say where;
* a wrong return value is checked by the caller, with :func:`wrong_result`.
"""

from __future__ import annotations

import functools
import inspect
import traceback
from collections.abc import Callable
from types import CodeType
from typing import Any, TypeVar

from fleet.core.errors import DefinitionError, FleetError
from fleet.core.hints import shown_value
from fleet.core.values import is_user_file, location_of

T = TypeVar("T")


def _code(function: object) -> CodeType | None:
    target: Any = function
    while isinstance(target, functools.partial):
        target = target.func
    target = getattr(target, "__func__", target)  # a bound method
    code = getattr(target, "__code__", None)
    if code is None and callable(target) and not isinstance(target, type):
        classes: tuple[type, ...] = inspect.getmro(type(target))
        method = next((k.__dict__["__call__"] for k in classes if "__call__" in k.__dict__), None)
        code = getattr(method, "__code__", None)
    return code if isinstance(code, CodeType) else None


def defined_at(function: object, fallback: str = "") -> str:
    """``file:line`` of the ``def`` of ``function`` (a function, a bound method, a callable
    object's ``__call__``); ``fallback`` when it has no Python code."""
    code = _code(function)
    return location_of(code.co_filename, code.co_firstlineno) if code else fallback


def name_of(function: object) -> str:
    """How messages name ``function``: ``Aspect.visit``, ``check``, ``define.<lambda>``."""
    target = getattr(function, "__func__", function)
    name = getattr(target, "__qualname__", None)
    return str(name).replace(".<locals>", "") if name else type(function).__name__


def raised_at(error: BaseException, fallback: str) -> str:
    """``file:line`` of the innermost frame of the user's code in ``error``'s traceback."""
    where = fallback
    for frame in traceback.extract_tb(error.__traceback__):
        if is_user_file(frame.filename):
            where = location_of(frame.filename, frame.lineno)
    return where


def check_signature(function: Callable[..., Any], *args: object, field: str, expected: str) -> None:
    """Refuse ``function`` unless it can be called with ``args`` (positionally): the error
    is located at its ``def`` and says ``expected`` (``"visit(node)"``)."""
    try:
        signature = inspect.signature(function)
        shown = inspect.signature(getattr(function, "__func__", function))  # with self
    except (TypeError, ValueError):  # a builtin without a signature: nothing to check
        return
    try:
        signature.bind(*args)
    except TypeError:
        raise DefinitionError(
            f"{name_of(function)}{shown} cannot be called as {expected}",
            where=defined_at(function, "?"),
            field=field,
        ) from None


def call(
    function: Callable[..., T],
    *args: object,
    field: str,
    doing: Callable[[], str] | None = None,
) -> T:
    """``function(*args)``; an exception other than the fleet's own becomes one
    DefinitionError at the line that raised it (``doing()`` says what it was called for,
    ``"visiting web"``; asked only then)."""
    try:
        return function(*args)
    except FleetError:
        raise
    except Exception as e:  # the user's code: report where it failed, in one line
        during = f" ({doing()})" if doing is not None else ""
        raise DefinitionError(
            f"{name_of(function)} raised {type(e).__name__}: {e}{during}",
            where=raised_at(e, defined_at(function, "?")),
            field=field,
        ) from e


def wrong_result(function: object, value: object, *, field: str, expected: str) -> DefinitionError:
    """The error for ``function`` having returned ``value`` where ``expected`` was due."""
    return DefinitionError(
        f"{name_of(function)} returned {shown_value(value)}; {expected}",
        where=defined_at(function, "?"),
        field=field,
    )

"""A constructor's arguments checked against its type hints (:class:`ArgumentChecks`,
:func:`checked_arguments`, :class:`CheckedArguments`): a wrong argument is an error at the
argument's own line."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from fleet.core.errors import DefinitionError, FleetError
from fleet.core.hints import (
    Check,
    Walk,
    compile_hint,
    compile_walk,
    fast_types,
    init_hints,
    per_env_key_errors,
)
from fleet.core.values import argument_location, relocate

C = TypeVar("C")


@dataclass(frozen=True, slots=True)
class ArgumentChecks:
    """The checks of one constructor's arguments, compiled from their type hints.

    A wrong argument is a :class:`DefinitionError` at the argument's line (its keyword in
    the caller's call), naming the field and what was expected: ``True or False`` for a
    ``bool`` (a string ``"false"`` is not), an integer for an ``int`` (a bool is not), a
    list for a ``Sequence`` (a single item or a string is not), and a ``per_env`` key that
    is not a configured environment. Values of an exact type the hint surely accepts skip
    the checks (the fast path, taken by almost every argument).
    """

    positional: tuple[str, ...]
    checks: Mapping[str, Check]
    fast: Mapping[str, frozenset[type]]
    walks: Mapping[str, Walk]

    @classmethod
    def compile(
        cls,
        hints: Mapping[str, Any],
        *,
        positional: tuple[str, ...] = (),
        bounds: Mapping[str, Check] | None = None,
    ) -> ArgumentChecks:
        """The checks for parameters ``hints`` (name -> hint); ``bounds`` (name -> check)
        run after the type check of the same argument."""
        checks: dict[str, Check] = {}
        for name, hint in hints.items():
            check = compile_hint(hint)
            bound = (bounds or {}).get(name)
            if check is not None and bound is not None:
                checks[name] = _then(check, bound)
            elif check is not None or bound is not None:
                checks[name] = check or bound  # type: ignore[assignment]
        walks = {name: compile_walk(hint) for name, hint in hints.items()}
        fast = {
            name: _EVERYTHING
            if name not in checks and walks[name] is None
            else frozenset()
            if name in (bounds or {})
            else fast_types(hint)
            for name, hint in hints.items()
        }
        return cls(
            positional,
            checks,
            fast,
            {name: walk for name, walk in walks.items() if walk is not None},
        )

    @classmethod
    @functools.cache
    def of_init(cls, init: Callable[..., Any]) -> ArgumentChecks:
        """The checks of ``init``'s parameters (without ``self``)."""
        parameters = list(inspect.signature(init).parameters.values())[1:]
        positional = tuple(
            p.name
            for p in parameters
            if p.kind
            in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        )
        return cls.compile(init_hints(init), positional=positional)

    def check(self, owner: type, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
        """Raise the first problem of a call of ``owner`` with ``args`` and ``kwargs``."""
        fast = self.fast
        slow = [
            (name, value)
            for name, value in (*zip(self.positional, args, strict=False), *kwargs.items())
            if type(value) not in fast.get(name, ())
        ]
        if slow:
            self._check_slow(owner, slow, args, kwargs)

    def _check_slow(
        self,
        owner: type,
        slow: list[tuple[str, Any]],
        args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
    ) -> None:
        for name, value in slow:
            check = self.checks.get(name)
            if check is not None and (error := check(value, name)) is not None:
                field, problem = _joined(name, error)
                raise DefinitionError(
                    problem, where=self._where(owner, name, args, kwargs), field=field
                )
        environments = _configured_environments(args, kwargs)
        if not environments:
            return
        for name, value in slow:
            walk = self.walks.get(name)
            if walk is not None:
                for field, problem in per_env_key_errors(value, walk, environments, name):
                    raise DefinitionError(
                        problem, where=self._where(owner, name, args, kwargs), field=field
                    )

    def _where(
        self, owner: type, name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]
    ) -> str:
        """``file:line (id)`` for a construct, ``file:line (Class name)`` for a value type;
        the line is the argument's."""
        argument: str | int = name
        if name in self.positional[: len(args)]:
            argument = self.positional.index(name)
        where = argument_location(argument)
        construct_id = kwargs.get("construct_id", args[1] if len(args) >= 2 else None)
        if isinstance(construct_id, str) and "scope" in (*self.positional, *kwargs):
            return f"{where} ({construct_id})"
        label = kwargs.get("name") if isinstance(kwargs.get("name"), str) else None
        noun = getattr(owner, "argument_noun", owner.__name__)  # NodeGroup: "node group"
        return f"{where} ({noun}{' ' + label if label else ''})"


class _Everything(frozenset[type]):
    """The fast-path types of an argument nothing checks: every type."""

    def __contains__(self, item: object) -> bool:
        return True


_EVERYTHING = _Everything()


def _then(first: Check, second: Check) -> Check:
    return lambda v, f: first(v, f) or second(v, f)


def _joined(name: str, error: str) -> tuple[str, str]:
    """``labels`` + ``['a']: expected ...`` -> (``labels['a']``, ``expected ...``)."""
    path = name
    while error[:1] in ("[", "k") and ": " in error and not error.startswith("must be "):
        step, error = error.split(": ", 1)
        path += step if step.startswith("[") else f".{step}"
    return path, error


_CHECKING = "_fleet_arguments_checked"


def checked_arguments(cls: type[C], checks: Callable[[], ArgumentChecks] | None = None) -> type[C]:
    """Check every argument of ``cls(...)`` against ``cls.__init__``'s type hints
    (:class:`ArgumentChecks`, or those ``checks`` returns); an error raised while ``cls``
    is built names the line of the argument at fault.

    For frozen dataclasses (``HelmChart``, ...): put ``@checked_arguments`` above
    ``@dataclass`` (or use :func:`fleet.core.options.value_type`).
    """
    init = cls.__dict__["__init__"]
    compiled = checks or functools.partial(ArgumentChecks.of_init, init)

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if getattr(self, _CHECKING, False):
            init(self, *args, **kwargs)
            return
        object.__setattr__(self, _CHECKING, True)
        compiled().check(cls, args, kwargs)
        try:
            init(self, *args, **kwargs)
        except FleetError as e:
            relocate(e, kwargs)
            raise

    setattr(cls, "__init__", __init__)  # noqa: B010  (mypy: no method assignment)
    return cls


def _configured_environments(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[str, ...]:
    """The fleet's environments when the first argument is the fleet (a construct's scope)."""
    scope = args[0] if args else kwargs.get("scope")
    config = getattr(scope, "config", None) or getattr(
        getattr(scope, "fleet", None), "config", None
    )
    environments = getattr(config, "environments", None)
    return environments if isinstance(environments, tuple) else ()


class CheckedArguments:
    """Base whose subclasses' own ``__init__`` arguments are checked (:func:`checked_arguments`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None and not getattr(init, "_fleet_generic", False):
            checked_arguments(cls)

"""Shared argument validators: Kubernetes name rules, and argument types from type hints."""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import enum
import functools
import inspect
import ipaddress
import re
import types
import typing
from collections import abc
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, Union

from fleet.core.errors import DefinitionError, FleetError
from fleet.core.secrets import credential_in
from fleet.core.values import PerEnv, argument_location, relocate

C = TypeVar("C")

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def check_dns_label(value: str, *, where: str, field: str, max_length: int = 63) -> str:
    """``value`` if it is a DNS-1123 label no longer than ``max_length``, else an error."""
    if not isinstance(value, str) or not _DNS_LABEL.match(value) or len(value) > max_length:
        raise DefinitionError(
            f"must be lower-case letters, digits and '-', start and end with a letter or "
            f"digit, at most {max_length} characters; got {value!r}",
            where=where,
            field=field,
        )
    return value


def check_dns_subdomain(value: str, *, where: str, field: str) -> str:
    """``value`` if it is a DNS-1123 subdomain (at most 253 characters), else an error."""
    if not isinstance(value, str) or not _DNS_SUBDOMAIN.match(value) or len(value) > 253:
        raise DefinitionError(
            "must be a DNS-1123 subdomain (lower-case letters, digits, '-' and '.'), "
            f"got {value!r}",
            where=where,
            field=field,
        )
    return value


EXACT_VERSION = re.compile(
    r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$"
)
"""An exact SemVer version, ``MAJOR.MINOR.PATCH[-pre][+build]`` with an optional ``v``."""
COMMIT = re.compile(r"^[0-9a-f]{40}$")
"""A full Git commit id."""


def check_version_pin(value: object, *, where: str, field: str, commit: bool = False) -> str:
    """``value`` if it pins one release (an exact version; with ``commit``, a full Git
    commit id too), else the error.

    ArgoCD hands a chart's ``targetRevision`` to Helm as it is when it parses as a version
    (argoproj/argo-cd v3.5.1 ``reposerver/repository/repository.go``
    ``newHelmClientResolveRevision``, ``util/versions/version.go``: Masterminds SemVer, which
    also reads ``1`` and ``1.2``), else resolves it as a constraint against the index; Helm's
    ``IndexFile.Get`` takes any non-exact string as a constraint and picks the newest match
    (helm/helm v4.2.1 ``pkg/repo/v1/index.go``). So ``1.2``, ``^1.2``, ``~1``, ``1.x``,
    ``>=1``, ``*`` float to whatever is newest at each sync, and ``latest`` fails.
    """
    if isinstance(value, str) and (EXACT_VERSION.match(value) or (commit and COMMIT.match(value))):
        return value
    also = " or a full commit id" if commit else ""
    raise DefinitionError(
        f"{value!r} is not an exact version: a range (^1.2, ~1, 1.x, >=1, *, and also 1 or "
        "1.2) resolves to the newest match at every sync, and a name such as 'latest' is "
        f"no version at all; pin MAJOR.MINOR.PATCH (1.2.3, v1.21.1){also}",
        where=where,
        field=field,
    )


def check_label_values(labels: Mapping[str, object], *, where: str, field: str) -> dict[str, str]:
    """``labels`` as a dict if every value is a string (labels never hold numbers or booleans)."""
    for key, value in labels.items():
        if not isinstance(value, str):
            raise DefinitionError(
                f"label values are strings, got {value!r} for {key!r}", where=where, field=field
            )
    return dict(labels)  # type: ignore[arg-type]  # checked above


E = TypeVar("E", bound=enum.StrEnum)


def check_choice(
    kind: type[E],
    value: object,
    *,
    where: str,
    field: str,
    aliases: Mapping[str, E] | None = None,
    quoted: bool = False,
) -> E:
    """``value`` as a member of ``kind``: the member, its value, or one of ``aliases``;
    else the error listing them (``quoted``: each in quotes)."""
    if isinstance(value, str) and aliases and value in aliases:
        return aliases[value]
    try:
        if not isinstance(value, str):
            raise ValueError(value)
        return kind(value)
    except ValueError:
        known = [*(aliases or {}), *(m.value for m in kind)]
        shown = ", ".join(repr(k) if quoted else k for k in known)
        raise DefinitionError(
            f"must be one of {shown}, got {value!r}", where=where, field=field
        ) from None


_CIDR = re.compile(r"([0-9]{1,3}(?:\.[0-9]{1,3}){3})/([0-9]{1,2})")


def check_cidr(
    value: object, *, where: str, field: str, prefixes: tuple[int, int] = (0, 32)
) -> ipaddress.IPv4Network:
    """``value`` as an IPv4 CIDR block, else the error: the one rule for every CIDR block a
    declaration takes (subnets, NSG rule sources, pods and services ranges).

    * CIDR notation, ``a.b.c.d/n``: a bare address is refused, as Go's ``net.ParseCIDR``
      refuses it (the webhooks of the controllers that read the blocks call it), and as
      the clouds' APIs document the fields ("an IP address range in CIDR notation");
      ``198.51.100.17`` gets "write 198.51.100.17/32";
    * the block's own network address: ``192.0.2.5/24`` is refused (network
      192.0.2.0/24, or the one address 192.0.2.5/32? fleet does not guess; and a
      controller that compares rules as strings with what the cloud returns would never
      find a block written another way than the cloud writes it);
    * a prefix length within ``prefixes`` (a cloud's limits, such as a VCN's /16 to /30).
    """
    match = _CIDR.fullmatch(value) if isinstance(value, str) else None
    address: ipaddress.IPv4Address | None = None
    if match:
        with contextlib.suppress(ValueError):
            address = ipaddress.IPv4Address(match[1])
    if address is None or match is None or int(match[2]) > 32 or match[2] != str(int(match[2])):
        single = None
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                single = ipaddress.IPv4Address(value)
        hint = f": write {single}/32 for that one address" if single is not None else ""
        raise DefinitionError(
            f"must be an IPv4 CIDR block (address/prefix length, such as 10.0.0.0/16), got "
            f"{shown_value(value, field)}{hint}",
            where=where,
            field=field,
        )
    prefix = int(match[2])
    network = ipaddress.IPv4Network(f"{address}/{prefix}", strict=False)
    if network.network_address != address:
        raise DefinitionError(
            f"{value} has bits set past its /{prefix}: write {network} for the block, or "
            f"{address}/32 for the one address",
            where=where,
            field=field,
        )
    low, high = prefixes
    if not low <= prefix <= high:
        raise DefinitionError(
            f"{value}: the prefix length must be /{low} to /{high} here, got /{prefix}",
            where=where,
            field=field,
        )
    return network


_KUBE_VERSION = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")


def check_kubernetes_version(value: str, *, where: str, field: str) -> tuple[int, int, int]:
    """(major, minor, patch) of a full Kubernetes version (``v1.30.1``), else the error."""
    match = _KUBE_VERSION.match(value) if isinstance(value, str) else None
    if not match:
        raise DefinitionError(
            f"must be a full Kubernetes version like v1.30.1, got {value!r}",
            where=where,
            field=field,
        )
    major, minor, patch = (int(g) for g in match.groups())
    return major, minor, patch


def positive_number(value: float | None, *, where: str, field: str, unit: str) -> str | None:
    """A number above 0 in its shortest string form (``"1"``, ``"1.5"``), None for None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise DefinitionError(
            f"must be a number of {unit} above 0, got {value!r}", where=where, field=field
        )
    return str(int(value)) if float(value).is_integer() else repr(float(value))


_SSH_KEY = re.compile(r"^(ssh-(rsa|ed25519|dss)|ecdsa-sha2-nistp\d+) [A-Za-z0-9+/]+=*( \S.*)?$")


def check_ssh_public_key(key: str, *, where: str, field: str) -> str:
    """``key`` stripped, if it is one OpenSSH public key line; else the error."""
    if not isinstance(key, str) or not _SSH_KEY.match(key.strip()):
        raise DefinitionError(
            "must be one OpenSSH public key line (ssh-ed25519 AAAA... comment)",
            where=where,
            field=field,
        )
    return key.strip()


# --- argument types, read from the constructors' type hints --------------------------------

Check = Callable[[Any, str], "str | None"]
"""Checks a value; returns None when it fits, else what was expected and what came."""


_SECRET_WORDS = ("password", "passwd", "secret", "token", "credential", "key", "auth")


def shown_value(value: object, field: str = "") -> str:
    """``str 'abc'``: the type and a short repr, for a message; only the type for a
    credential-like field or value (a secret given where a reference belongs must not reach
    the terminal or a CI log); an object whose repr is only its address, by its type."""
    if value is None:
        return "None"
    if any(word in field.lower() for word in _SECRET_WORDS):
        return type(value).__name__
    text = repr(value)
    if text.startswith("<") and " at 0x" in text:
        return f"a {type(value).__name__}"
    problem = credential_in(text)
    if problem:  # before shortening: a cut token is no longer recognisable
        return f"{type(value).__name__} (a {problem.split(';')[0]}, not shown)"
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def _noun(hint: Any) -> str:
    """``str``, ``NodeGroup``, ``str or None``: a type as a word, without an article."""
    if isinstance(hint, type):
        return hint.__name__
    if typing.get_origin(hint) in (Union, types.UnionType):
        return " or ".join(_noun(a) for a in typing.get_args(hint))
    return _name_of(hint)


def _name_of(hint: Any) -> str:
    if hint is type(None):
        return "None"
    if isinstance(hint, type):
        plain = {"bool": "True or False", "int": "an integer", "str": "a string"}
        if hint.__name__ in plain:
            return plain[hint.__name__]
        return ("an " if hint.__name__[:1] in "AEIOU" else "a ") + hint.__name__
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):  # "or None" goes without saying: leave it out
        members = [a for a in args if a is not type(None)]
        alone = [a for a in members if not _is_per_env_hint(a)]
        inner = [typing.get_args(typing.get_args(a)[0]) for a in members if a not in alone]
        if len(alone) > 1 and inner == [tuple(alone)]:  # X | Y | PerEnv[X | Y]
            return " or ".join(_name_of(a) for a in alone) + ", or per_env of those"
        return " or ".join(_name_of(a) for a in members)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin in (Mapping, dict, abc.Mapping):
        return f"a mapping of {_noun(args[0])} to {_noun(args[1])}" if args else "a mapping"
    if origin in (Sequence, list, tuple, abc.Sequence):
        return f"a list of {_noun(args[0])}" if args else "a list"
    if origin is not None and getattr(origin, "__name__", "") == "PerEnv":
        return f"per_env({_name_of(args[0])})"
    if origin is not None and getattr(origin, "__name__", "") == "Ref":
        return f"a reference to {_name_of(args[0])}"
    return getattr(hint, "__name__", str(hint))


def _outer(hint: Any) -> Callable[[Any], bool]:
    """A cheap test of whether a value has the outer shape of ``hint`` (for unions)."""
    origin = typing.get_origin(hint)
    if origin in (Mapping, dict, abc.Mapping) or hint in (dict, Mapping):
        return lambda v: isinstance(v, abc.Mapping)
    if origin in (Sequence, list, tuple, abc.Sequence) or hint in (list, tuple):
        return lambda v: isinstance(v, (list, tuple))
    if origin is not None and isinstance(origin, type):
        cls = origin
        return lambda v: isinstance(v, cls)
    if hint is float:
        return lambda v: isinstance(v, (int, float))
    if isinstance(hint, type):
        cls = hint
        return lambda v: isinstance(v, cls)
    return lambda v: True


def _compile_hint(hint: Any) -> Check | None:
    """A check for values of type ``hint``, or None for "anything goes"."""
    if hint is Any or hint is object or isinstance(hint, typing.TypeVar):
        return None
    if isinstance(hint, str):  # an unresolved forward reference: not checked
        return None
    expected = _name_of(hint)
    if hint is type(None):
        return lambda v, f: None if v is None else f"must be None, got {shown_value(v, f)}"
    if hint is bool:
        return lambda v, f: (
            None if v is True or v is False else f"must be {expected}, got {shown_value(v, f)}"
        )
    if hint is int:
        return lambda v, f: (
            None
            if isinstance(v, int) and not isinstance(v, bool)
            else f"must be {expected}, got {shown_value(v, f)}"
        )
    if hint is float:
        return lambda v, f: (
            None
            if isinstance(v, (int, float)) and not isinstance(v, bool)
            else f"must be a number, got {shown_value(v, f)}"
        )
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        checks = [_compile_hint(a) for a in args]
        if any(c is None for c in checks):
            return None
        members = [(_outer(a), c) for a, c in zip(args, checks, strict=True) if c is not None]

        def union(v: Any, f: str) -> str | None:
            inner = None
            for outer, check in members:
                if outer(v):  # only members of the value's shape: no messages built in vain
                    error = check(v, f)
                    if error is None:
                        return None
                    inner = inner or error
            # a value of the right outer shape gets the inner complaint (labels['a']: ...)
            if inner is not None and not inner.startswith("must be "):
                return inner
            return f"must be {expected}, got {shown_value(v, f)}"

        return union
    if origin is Literal:
        allowed = args
        return lambda v, f: None if v in allowed else f"must be {expected}, got {shown_value(v, f)}"
    if origin in (Mapping, dict, abc.Mapping) or hint in (dict, Mapping):
        key_check = _compile_hint(args[0]) if args else None
        value_check = _compile_hint(args[1]) if args else None

        def mapping(v: Any, f: str) -> str | None:
            if not isinstance(v, abc.Mapping):
                return f"must be {expected}, got {shown_value(v, f)}"
            for key, item in v.items():
                if key_check is not None and (error := key_check(key, f)) is not None:
                    return f"keys: {error}"
                if value_check is not None and (error := value_check(item, f)) is not None:
                    if f.endswith("labels") and error.startswith("must be "):
                        return f"label values are strings, got {item!r} for {key!r}"
                    return f"[{key!r}]: {error}"
            return None

        return mapping
    if origin in (Sequence, list, tuple, abc.Sequence) or hint in (list, tuple):
        if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
            args = args[:1]
        item_check = _compile_hint(args[0]) if len(args) == 1 else None
        item_type = args[0] if len(args) == 1 and isinstance(args[0], type) else None

        def sequence(v: Any, f: str) -> str | None:
            if isinstance(v, (str, bytes)) or not isinstance(v, (list, tuple)):
                if item_type not in (None, str, bytes) and isinstance(v, item_type):
                    return (
                        f"must be {expected}, got a single {item_type.__name__} "
                        "(put it in a list: [...])"
                    )
                return f"must be {expected}, got {shown_value(v, f)}"
            if item_check is not None:
                for i, item in enumerate(v):
                    if (error := item_check(item, f)) is not None:
                        return f"[{i}]: {error}"
            return None

        return sequence
    if origin is PerEnv:
        value_check = _compile_hint(args[0]) if args else None
        inner = per_env_values(value_check) if value_check is not None else None

        def per_env_value(v: Any, f: str) -> str | None:
            if not isinstance(v, PerEnv):
                return f"must be {expected}, got {shown_value(v, f)}"
            return inner(v, f) if inner is not None else None

        return per_env_value
    if origin is not None and isinstance(origin, type):
        hint = origin
    if callable(hint) and not isinstance(hint, type):  # Callable[...] and the like
        return None
    if isinstance(hint, type):
        if hint is abc.Callable:
            return lambda v, f: (
                None if callable(v) else f"must be a function, got {shown_value(v, f)}"
            )
        cls = hint
        return lambda v, f: (
            None if isinstance(v, cls) else f"must be {expected}, got {shown_value(v, f)}"
        )
    return None


_SCALARS = (str, int, float, bool, type(None))


def _fast_types(hint: Any) -> frozenset[type]:
    """Types whose values surely fit ``hint`` and hold no PerEnv: checked by ``type(v) in``.

    Exact types only (a bool is not an int here: ``type(True)`` is ``bool``); containers,
    PerEnv and dataclasses that may hold a PerEnv always take the full check.
    """
    if typing.get_origin(hint) in (Union, types.UnionType):
        out: frozenset[type] = frozenset()
        for a in typing.get_args(hint):
            out |= _fast_types(a)
        return out
    if hint is float:
        return frozenset({float, int})
    if hint in _SCALARS:
        return frozenset({hint})
    if (
        isinstance(hint, type)
        and typing.get_origin(hint) is None
        and not issubclass(hint, (abc.Mapping, abc.Sequence, abc.Set))
        and not (dataclasses.is_dataclass(hint) and _class_walks(hint))
    ):
        return frozenset({hint})
    return frozenset()


@functools.cache
def _hints(init: Callable[..., Any]) -> dict[str, Any]:
    """``init``'s parameter hints; ``**options: Unpack[SomeTypedDict]`` adds its keys."""
    try:
        hints = typing.get_type_hints(init)
    except (NameError, TypeError):  # a hint naming something not importable at run time
        return {}
    for p in inspect.signature(init).parameters.values():
        hint = hints.get(p.name)
        if p.kind is p.VAR_KEYWORD and typing.get_origin(hint) is typing.Unpack:
            (typed,) = typing.get_args(hint)
            del hints[p.name]
            with contextlib.suppress(NameError, TypeError):
                hints.update(typing.get_type_hints(typed))
        elif p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            hints.pop(p.name, None)
    hints.pop("return", None)
    return hints


def per_env_values(check: Check) -> Check:
    """``check`` applied to a value, or to each value (and the default) of a ``PerEnv``;
    a failure inside one names it (``[dev]: ...``)."""

    def each(v: Any, f: str) -> str | None:
        if not isinstance(v, PerEnv):
            return check(v, f)
        for env, item in v.values.items():
            if (error := check(item, f)) is not None:
                return f"[{env}]: {error}"
        if v.default is not None and (error := check(v.default, f)) is not None:
            return f"[default]: {error}"
        return None

    return each


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
            check = _compile_hint(hint)
            bound = (bounds or {}).get(name)
            if check is not None and bound is not None:
                checks[name] = _then(check, bound)
            elif check is not None or bound is not None:
                checks[name] = check or bound  # type: ignore[assignment]
        walks = {name: _compile_walk(hint) for name, hint in hints.items()}
        fast = {
            name: _EVERYTHING
            if name not in checks and walks[name] is None
            else frozenset()
            if name in (bounds or {})
            else _fast_types(hint)
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
        return cls.compile(_hints(init), positional=positional)

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


Walk = Callable[[Any, str], Iterator[tuple[str, PerEnv[Any]]]]
"""Yields (field path, PerEnv) for each PerEnv inside a value of one type hint."""


def _is_per_env_hint(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    return origin is not None and getattr(origin, "__name__", "") == "PerEnv"


@functools.cache
def _class_walks(cls: type) -> tuple[tuple[str, Walk], ...]:
    """(field, walk) for the fields of dataclass ``cls`` whose hints may hold a PerEnv."""
    if not dataclasses.is_dataclass(cls):
        return ()
    try:
        hints = typing.get_type_hints(cls)
    except (NameError, TypeError):
        return ()
    walks = []
    for f in dataclasses.fields(cls):
        walk = _compile_walk(hints.get(f.name))
        if walk is not None:
            walks.append((f.name, walk))
    return tuple(walks)


def _compile_walk(hint: Any, depth: int = 0) -> Walk | None:
    """A walk for values of type ``hint``, or None when no PerEnv can be inside."""
    if hint is None or depth > 4:
        return None
    if _is_per_env_hint(hint):

        def one(v: Any, path: str) -> Iterator[tuple[str, PerEnv[Any]]]:
            if isinstance(v, PerEnv):
                yield path, v

        return one
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        walks = [w for w in (_compile_walk(a, depth + 1) for a in args) if w is not None]
        if not walks:
            return None

        def any_of(v: Any, path: str) -> Iterator[tuple[str, PerEnv[Any]]]:
            for walk in walks:
                yield from walk(v, path)

        return any_of
    if origin in (Sequence, list, tuple, abc.Sequence) and args:
        item = _compile_walk(args[0], depth + 1)
        if item is None:
            return None

        def items(v: Any, path: str) -> Iterator[tuple[str, PerEnv[Any]]]:
            if isinstance(v, (list, tuple)):
                for i, x in enumerate(v):
                    name = getattr(x, "name", None)
                    yield from item(x, f"{path}[{name if isinstance(name, str) else i}]")

        return items
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        cls = hint
        if not _class_walks(cls):
            return None

        def fields(v: Any, path: str) -> Iterator[tuple[str, PerEnv[Any]]]:
            if isinstance(v, cls):  # a subclass's own fields too
                for name, walk in _class_walks(type(v)):
                    yield from walk(getattr(v, name, None), f"{path}.{name}")

        return fields
    return None


def per_env_key_errors(
    value: Any, walk: Walk, environments: Sequence[str], path: str
) -> Iterator[tuple[str, str]]:
    """(field, problem) for each ``per_env`` key in ``value`` that is not an environment.

    ``walk`` (compiled from the argument's type hint) follows lists and dataclass values
    (a NodeGroup's counts), so every :class:`PerEnv` reachable from a declaration's
    arguments is checked when it is attached to the declaration.
    """
    for field, per_env_value in walk(value, path):
        for key in per_env_value.values:
            if key not in environments:
                close = difflib.get_close_matches(key, environments, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                yield (
                    field,
                    f"per_env key {key!r} is not an environment "
                    f"(configured: {', '.join(environments)}){hint}",
                )


class CheckedArguments:
    """Base whose subclasses' own ``__init__`` arguments are checked (:func:`checked_arguments`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None and not getattr(init, "_fleet_generic", False):
            checked_arguments(cls)

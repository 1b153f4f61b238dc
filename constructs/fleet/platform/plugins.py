"""Plug-ins, and the platform of one fleet.

A declaration class names its plug-in in its body (``plugin: ClassVar[Plugin] = ...``); a
cluster class's is a :class:`fleet.clouds.base.CloudPlugin`, which adds what the fleet's
checks and the bootstrap need to know about the cloud.

What a fleet's platform holds is found from **the fleet's own declarations**, never from
what the process happens to have imported: the plug-ins of the classes of its declarations
(:attr:`Platform.plugins`), plus the components a ``define()`` adds fleet-wide
(``Platform.of(fleet).add(KYVERNO)``). Two fleets in one process never see each other's
plug-ins, and importing a cloud no fleet uses changes nothing. Everything derived from them
(the :class:`~fleet.platform.component.Catalogue`, the checks' reference tables) is made
once per fleet and kept on it (:meth:`PluginSet.memo`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from fleet.core.errors import DefinitionError
from fleet.core.fleet import Fleet, fleet_argument
from fleet.core.values import caller_location
from fleet.platform.component import Catalogue, PlatformComponent

if TYPE_CHECKING:
    from fleet.core.declaration import FleetConstruct

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class Plugin:
    """What a declaration class contributes: the platform components it may ask for."""

    components: tuple[PlatformComponent, ...] = ()
    """Components the bootstrap installs for such declarations (a cluster class: wherever
    one is placed), with everything they require."""


def plugin_of(cls: type) -> tuple[type, Plugin] | None:
    """The class whose body names ``cls``'s plug-in (``cls`` or its nearest base that
    does), with the plug-in; None when no class of its MRO names one."""
    for klass in cls.__mro__:
        plugin = klass.__dict__.get("plugin")
        if isinstance(plugin, Plugin):
            return klass, plugin
    return None


@dataclass(frozen=True, eq=False)
class PluginSet:
    """The plug-ins in force for one fleet and its fleet-wide components: a value, made by
    :attr:`Platform.plugins` (or :meth:`of` in a test) and read by the checks, the
    bootstrap and ``fleet diff``."""

    plugins: tuple[tuple[type[FleetConstruct], Plugin], ...] = ()
    """(the class whose body names the plug-in, the plug-in), once each, ordered by the
    class's module and name."""
    fleet_wide: tuple[PlatformComponent, ...] = ()
    """What ``Platform.of(fleet).add(...)`` added (in the order added)."""
    _memo: dict[Callable[[PluginSet], Any], Any] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def of(cls, classes: Iterable[type], fleet_wide: Sequence[PlatformComponent] = ()) -> PluginSet:
        """The plug-ins ``classes`` name (each through :func:`plugin_of`)."""
        found: dict[type, Plugin] = {}
        for c in classes:
            named = plugin_of(c)
            if named is not None:
                found.setdefault(*named)
        ordered = sorted(found.items(), key=lambda item: (item[0].__module__, item[0].__qualname__))
        return cls(tuple(ordered), tuple(fleet_wide))

    @cached_property
    def catalogue(self) -> Catalogue:
        """Every component a plug-in lists or the fleet added, with what they require, and
        which one owns each CRD kind."""
        return Catalogue(
            [*(c for _, plugin in self.plugins for c in plugin.components), *self.fleet_wide]
        )

    def memo(self, build: Callable[[PluginSet], T]) -> T:
        """``build(self)``, made once per set: what a consumer derives from the plug-ins
        (reference tables, ...) lives as long as the fleet, never in a module."""
        if build not in self._memo:
            self._memo[build] = build(self)
        return self._memo[build]  # type: ignore[no-any-return]


@dataclass(frozen=True)
class _FleetWide:
    component: PlatformComponent
    environments: frozenset[str] | None


_METADATA = "fleet:platform"
"""The ``add_metadata`` type fleet-wide components are kept under, on the Fleet's node."""


class _Cache:
    """The fleet's :class:`PluginSet`, once the tree is locked (no declaration comes later)."""

    def __init__(self) -> None:
        self.plugins: PluginSet | None = None


class Platform:
    """The platform of one fleet: ``Platform.of(fleet)``.

    ``add(component)`` in a ``define()`` installs a component fleet-wide (kyverno, a
    monitoring stack: what no declaration class asks for), like ``Checks.of(fleet).add``;
    :attr:`plugins` is what the fleet's declarations and those additions bring.
    """

    __slots__ = ("_fleet",)

    def __init__(self, fleet: Fleet) -> None:
        self._fleet = fleet

    @classmethod
    def of(cls, fleet: Fleet) -> Platform:
        """The platform of ``fleet``."""
        return cls(fleet_argument(fleet, "the platform belongs"))

    def add(
        self, component: PlatformComponent, *, environments: Sequence[str] | None = None
    ) -> None:
        """Install ``component`` (and what it requires) in every environment that has an
        ArgoCd, or only in ``environments``. In a ``define()``."""
        where = caller_location()
        if not isinstance(component, PlatformComponent):
            raise DefinitionError(
                f"expected a PlatformComponent, got {type(component).__name__}",
                where=where,
                field="component",
            )
        if self._fleet.node.locked:
            raise DefinitionError(
                "Platform.add() after the tree was locked (every define() has run); call "
                "it in define()",
                where=where,
                field="component",
            )
        envs: frozenset[str] | None = None
        if environments is not None:
            if isinstance(environments, str):
                environments = [environments]
            for env in environments:
                self._fleet.config.check_environment(env, where=where, field="environments")
            envs = frozenset(environments)
        self._fleet.node.add_metadata(_METADATA, _FleetWide(component, envs))

    def _added(self) -> list[_FleetWide]:
        return [e.data for e in self._fleet.node.metadata if e.type == _METADATA]

    def components(self, environment: str) -> tuple[PlatformComponent, ...]:
        """The fleet-wide components :meth:`add` placed in ``environment``."""
        return tuple(
            dict.fromkeys(
                e.component
                for e in self._added()
                if e.environments is None or environment in e.environments
            )
        )

    @property
    def plugins(self) -> PluginSet:
        """The plug-ins of the classes of the fleet's declarations, and the fleet-wide
        components; kept on the fleet once its tree is locked."""
        cache = self._fleet.catalog(_Cache)
        if cache.plugins is not None:
            return cache.plugins
        found = PluginSet.of(
            (type(d) for d in self._fleet.declarations()),
            tuple(dict.fromkeys(e.component for e in self._added())),
        )
        if self._fleet.node.locked:
            cache.plugins = found
        return found

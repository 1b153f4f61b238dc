"""Plug-ins: what a kind of declaration contributes to the platform.

A declaration class names its plug-in in its body (``plugin: ClassVar[Plugin] = ...``); a
cluster class's is a :class:`fleet.clouds.base.CloudPlugin`, which adds what the fleet's
checks and the bootstrap need to know about the cloud. Importing the class's module
registers it: the package ``fleet`` imports the built-in clouds and the ArgoCD layer, and a
cloud of your own is registered by importing its module (a fleet module in ``clusters/``
that uses it does). :func:`plugins` finds them all in one walk over the declaration classes;
every consumer (the bootstrap, the checks, ``fleet diff``) reads it and names no cloud.
"""

from __future__ import annotations

from dataclasses import dataclass

from fleet.core.declaration import FleetConstruct
from fleet.platform.component import Catalogue, PlatformComponent

_GENERATION = [0]
"""Bumped whenever a class body names a plug-in: :func:`plugins` walks again only then."""


@dataclass(frozen=True, kw_only=True)
class Plugin:
    """What a declaration class contributes: the platform components it may ask for."""

    components: tuple[PlatformComponent, ...] = ()
    """Components the bootstrap installs for such declarations (a cluster class: wherever
    one is placed), with everything they require."""

    def __set_name__(self, owner: type, name: str) -> None:
        # Python calls this when a class body assigns the plug-in: a new class may bring one.
        _GENERATION[0] += 1


_FOUND: list[tuple[int, tuple[tuple[type[FleetConstruct], Plugin], ...]]] = []


def plugins() -> tuple[tuple[type[FleetConstruct], Plugin], ...]:
    """Every declaration class that names a plug-in in its own body, with it, ordered by
    module and class name (a subclass that names none is left out: its base's counts).

    The walk is done again only once a class body named a plug-in since the last one
    (the checks ask for every object)."""
    if _FOUND and _FOUND[0][0] == _GENERATION[0]:
        return _FOUND[0][1]
    generation = _GENERATION[0]
    found: list[tuple[type[FleetConstruct], Plugin]] = []
    pending: list[type[FleetConstruct]] = [FleetConstruct]
    seen: set[type[FleetConstruct]] = set()
    while pending:
        cls = pending.pop()
        if cls in seen:
            continue
        seen.add(cls)
        pending.extend(cls.__subclasses__())
        plugin = cls.__dict__.get("plugin")
        if isinstance(plugin, Plugin):
            found.append((cls, plugin))
    out = tuple(sorted(found, key=lambda item: (item[0].__module__, item[0].__qualname__)))
    _FOUND[:] = [(generation, out)]
    return out


_CATALOGUE: list[tuple[tuple[tuple[type[FleetConstruct], Plugin], ...], Catalogue]] = []


def catalogue() -> Catalogue:
    """Every component some plug-in lists, with what they require (rebuilt only when the
    set of plug-ins changes)."""
    found = plugins()
    if _CATALOGUE and _CATALOGUE[0][0] is found:
        return _CATALOGUE[0][1]
    built = Catalogue(c for _, plugin in found for c in plugin.components)
    _CATALOGUE[:] = [(found, built)]
    return built

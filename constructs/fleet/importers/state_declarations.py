"""One declaration per imported cluster, or one for the same cluster in several
environments (the same address in the states of two environments, every value that
differs one the declaration takes per environment), its construct id, and its call.

Which values may differ per environment is the declaration's option table (``PerEnv`` in
an option's annotation); names that give no usable Kubernetes name are pinned
(``object_name=``), once, with why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from fleet.clouds.importer import (
    ExistingFleet,
    GeneratedCode,
    Member,
    Notes,
    needs_pin,
    pinned_object_name,
    why_pinned,
    with_object_name,
)
from fleet.codegen.layout import PER_ENV
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError
from fleet.core.names import object_name_from
from fleet.core.options import options_of
from fleet.core.pysource import Call, Value
from fleet.importers.state_modules import ClusterCall


@dataclass(frozen=True, kw_only=True)
class PlannedDeclaration:
    """One cluster declaration: its members (one per environment) and where it goes."""

    construct_id: str
    members: tuple[Member, ...]
    module: Path
    merge_note: str = ""

    @property
    def merged(self) -> bool:
        """Whether several environments share it."""
        return len(self.members) > 1


def _noun(cls: type) -> str:
    return str(getattr(cls, "argument_noun", "pool"))


def merge_problem(members: Sequence[Member], code: GeneratedCode) -> str | None:
    """Why these clusters (one per environment) cannot share one declaration, or None."""
    envs = [m.cluster.environment for m in members]
    if len(set(envs)) != len(envs):
        return "two clusters in one environment"
    cls = code.declaration
    options = options_of(cls)
    first = members[0]
    keys = set(first.keywords) - {"environments"}
    for member in members[1:]:
        if set(member.keywords) - {"environments"} != keys:
            differ = sorted(keys ^ (set(member.keywords) - {"environments"}))
            return f"{', '.join(differ)} set in some environments only"
    for key in sorted(keys):
        values = [repr(m.keywords[key]) for m in members]
        option = options.get(key)
        per_env = option.per_env if option is not None else False
        if len(set(values)) > 1 and not per_env:
            return f"{key} differs ({cls.__name__} takes one {key})"
    noun = _noun(code.pool)
    if any(set(m.pools) != set(first.pools) for m in members):
        return f"the {noun}s differ"
    pool_options = options_of(code.pool)
    for address, keywords in first.pools.items():
        for key in keywords:
            seen = {repr(m.pools[address].get(key)) for m in members}
            option = pool_options.get(key)
            if len(seen) > 1 and not (option is not None and option.per_env):
                return f"{noun} {keywords['name']!r}: {key} differs"
    return None


def by_env(values: Sequence[tuple[str, Value]]) -> Value:
    """The one value when every environment has the same (by ``repr``: ``1``, ``1.0`` and
    ``True`` differ), else ``per_env(env=value, ...)``."""
    first = values[0][1]
    if all(repr(v) == repr(first) for _, v in values):
        return first
    return Call(callee=PER_ENV, keywords=tuple(values))


def name_value(members: Sequence[Member]) -> Value:
    """``"x-{env}-y"`` when each name holds its environment as a segment, else per_env
    (one member: its name)."""
    names = [(m.cluster.environment, m.cluster.name) for m in members]
    if len(names) == 1:
        return names[0][1]
    patterns = {
        "-".join("{env}" if part == env else part for part in name.split("-"))
        for env, name in names
    }
    if len(patterns) == 1 and "{env}" in next(iter(patterns)):
        return patterns.pop()
    return by_env(names)


def declaration_call(decl: PlannedDeclaration) -> ClusterCall:
    """The call of ``decl``: per environment what differs, one value where all agree."""
    members = decl.members
    keywords: list[tuple[str, Value]] = []
    for key in members[0].keywords:
        if key == "name":
            value = name_value(members)
        elif key == "environments":
            value = [m.cluster.environment for m in members]
        else:
            value = by_env([(m.cluster.environment, m.keywords[key]) for m in members])
        keywords.append((key, value))
    pools = []
    for address, first in members[0].pools.items():
        pools.append(
            tuple(
                (key, by_env([(m.cluster.environment, m.pools[address][key]) for m in members]))
                for key in first
            )
        )
    comment = tuple(
        line
        for m in members
        for line in (
            f"{m.cluster.name} ({m.cluster.environment}): {m.cluster.resource.address}",
            f"  in {m.cluster.state.path.name}",
        )
    )
    return ClusterCall(
        construct_id=decl.construct_id,
        keywords=tuple(keywords),
        pools=tuple(pools),
        comment=comment,
    )


def plan_declarations(
    members: Sequence[Member],
    existing: ExistingFleet,
    config: FleetConfig,
    code: GeneratedCode,
    notes: Notes,
    errors: list[DefinitionError],
) -> list[PlannedDeclaration]:
    """The declarations of ``members``: the same address in several states (one per
    environment) merged where :func:`merge_problem` finds nothing, each construct id
    checked against the fleet (and pinned where it must be), each cluster against those
    the fleet declares already."""
    groups: dict[str, list[Member]] = {}
    for member in members:
        groups.setdefault(member.cluster.resource.address, []).append(member)
    order = {env: i for i, env in enumerate(config.environments)}
    planned: list[PlannedDeclaration] = []
    for address, found in groups.items():
        found.sort(key=lambda m: order.get(m.cluster.environment, len(order)))
        sources = {m.cluster.state.source for m in found}
        problem = merge_problem(found, code) if len(found) > 1 else None
        if len(found) > 1 and len(sources) == len(found) and problem is None:
            name = name_value(found)
            stem = name if isinstance(name, str) else found[-1].cluster.name
            construct_id = object_name_from(stem.replace("-{env}", "").replace("{env}-", ""))
            planned.append(
                PlannedDeclaration(
                    construct_id=construct_id, members=tuple(found), module=found[0].module
                )
            )
            continue
        note = f"not merged across environments at {address}: {problem}" if problem else ""
        for member in found:
            planned.append(
                PlannedDeclaration(
                    construct_id=object_name_from(member.cluster.name),
                    members=(member,),
                    module=member.module,
                    merge_note=note,
                )
            )
    ids: dict[str, str] = {}
    for index, decl in enumerate(planned):
        where = decl.members[0].cluster.where
        for member in decl.members:
            key = (member.cluster.environment, member.cluster.name)
            declared = existing.clusters.get(key)
            if declared is not None:
                errors.append(
                    DefinitionError(
                        f"cluster {member.cluster.name!r} ({key[0]}) is already "
                        f"declared at {declared}: leave its state out, or remove that "
                        "declaration first",
                        where=member.cluster.where,
                        field="name",
                    )
                )
        clash = existing.ids.get(decl.construct_id) or ids.get(decl.construct_id)
        if needs_pin(decl.construct_id, clash is not None):
            # A cloud's name need not give a usable Kubernetes name: the import pins one
            # (object_name=), which never changes afterwards, and says why.
            named = name_value(decl.members)
            pin = pinned_object_name(
                named if isinstance(named, str) else decl.members[-1].cluster.name, "cluster"
            )
            why = why_pinned(decl.construct_id, clash)
            for member in decl.members:
                member.keywords.update(with_object_name(member.keywords, pin))
                notes.setdefault((member.cluster.environment, member.cluster.name), []).append(
                    f"object name pinned to {pin!r} (object_name=): {why}"
                )
            decl = planned[index] = replace(decl, construct_id=pin)
        ids[decl.construct_id] = where
    return planned

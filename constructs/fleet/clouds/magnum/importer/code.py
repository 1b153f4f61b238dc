"""What the Magnum importer's generated modules call (the allow-list of their check is
built from it: :class:`fleet.clouds.importer.GeneratedCode`)."""

from __future__ import annotations

from collections.abc import Collection

from fleet.clouds.importer import GeneratedCode
from fleet.clouds.magnum.importer.catalog import TEMPLATES_MODULE
from fleet.clouds.magnum.importer.resources import Tables
from fleet.clouds.magnum.project import OpenStackProject
from fleet.codegen import layout
from fleet.codegen.shared import Repetition
from fleet.core.pysource import Value

PROJECT = OpenStackProject.__name__
NODE_GROUPS = Repetition(
    varying={"name": "name", "availability_zone": "zone", "external_name": "group_id"},
    name="name",
    zone="availability_zone",
)
"""Node groups alike but for their name, zone and id become one comprehension."""


def generated_code(tables: Tables) -> GeneratedCode:
    """The classes a module written with ``tables`` calls and looks up."""
    template = tables.template.__name__
    return GeneratedCode(
        declaration=tables.cluster,
        pool=tables.group,
        pools_keyword="node_groups",
        pools_before=("external_name", "deletion_policy", "management_policies"),
        repetition=NODE_GROUPS,
        calls=frozenset({tables.cluster.__name__, tables.group.__name__, PROJECT, template}),
        module_calls=frozenset({template}),
        lookups=frozenset({PROJECT}),
        catalogs=frozenset({TEMPLATES_MODULE}),
    )


CODE = generated_code(Tables())
"""What modules written with the built-in classes call."""


def statement(
    value: Value, *, indent: str = "", target: str = "", calls: Collection[str] = CODE.calls
) -> list[str]:
    """:func:`fleet.codegen.layout.statement`, calling only what the importer declares."""
    return layout.statement(value, calls=calls, lookups=CODE.lookups, indent=indent, target=target)

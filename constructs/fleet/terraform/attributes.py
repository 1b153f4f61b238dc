"""What each attribute of an imported Terraform resource becomes, decided by the columns of
the option table it imports into (:class:`fleet.core.options.Option`).

A cloud's importer describes each resource type it reads once (:class:`ResourceSpec`): the
declaration class whose options hold its attributes (``terraform=``), the attributes its
own code places (ids, the name, the parent's id) and those it drops, each with why. Every
other attribute of a state is refused (:meth:`ResourceSpec.unplaced`): a provider that adds
one, or a state not written by the provider, is never silently left out of an import. The
types of the attributes read come from the same place (:meth:`ResourceSpec.schema`).

An option's attribute gets its *fate* from the option's columns, unless the importer
decides it in code (labels, counts):

* ``inherits="<parent>.<attribute>"``: *inherited* (left out, as the configuration leaves
  it out) where the configuration does not set it and it equals the parent's, else
  *carried* (declared);
* ``cloud_default=``: left to the cloud's *default* where it equals it;
* ``computed=True``: *computed*, left to the cloud, unless the configuration sets it;
* none of these: *carried* whenever the state has a value (the cloud copies it from
  nowhere);

and *create-only* instead of carried where ``lifecycle { ignore_changes }`` names it, and
*unset* where the state holds no value.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fleet.core.errors import DefinitionError
from fleet.core.options import Option, options_of
from fleet.terraform.state import ResourceSchema, StateResource

if TYPE_CHECKING:
    from fleet.terraform.hcl import Block

CARRIED = "carried"
INHERITED = "inherited"
COMPUTED = "computed"
CREATE_ONLY = "create-only"
AUTOSCALED = "autoscaled"
UNSET = "unset"
DEFAULT = "default"
DECLARED = (CARRIED, CREATE_ONLY, AUTOSCALED)
"""The fates of the values a declaration states."""


@dataclass(frozen=True, kw_only=True)
class Value:
    """One attribute of an imported object: its state value, what the import does with it
    and the rule that decided."""

    attribute: str
    value: Any
    fate: str
    rule: str


def empty(value: Any) -> bool:
    """Whether a state value means "not set": null, "", 0 or an empty map or list (booleans
    are values)."""
    if isinstance(value, bool):
        return False
    return value is None or value == "" or value == 0 or value == {} or value == []


def whole(value: Any) -> Any:
    """``value``, a whole number written as a float (JSON's ``3.0``) as an int."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


@dataclass(frozen=True, kw_only=True)
class Parent:
    """What an object takes from a parent when it leaves an attribute out (a cluster from
    its template, a node pool from its cluster)."""

    noun: str
    """``template``, ``cluster``: for the rules the report shows."""
    values: Mapping[str, Any]
    """Its values, by Terraform attribute."""
    known: Callable[[str], bool] = lambda attribute: True
    """Whether its value of an attribute is known (a parent known only by its id is not)."""


def _declared(attribute: str, ignored: Sequence[str]) -> str:
    return CREATE_ONLY if attribute in ignored else CARRIED


def decide_inherited(
    attribute: str,
    value: Any,
    *,
    block: Block | None,
    parent: Parent,
    parent_attribute: str,
    ignored: Sequence[str],
) -> Value:
    """Carried, inherited or unset, for an attribute the parent may have given."""
    parent_value = parent.values.get(parent_attribute)
    parent_known = parent.known(parent_attribute)
    noun = parent.noun
    if empty(value):
        return Value(attribute=attribute, value=value, fate=UNSET, rule="not set in the state")
    if block is not None:
        if attribute in block.arguments:
            return Value(
                attribute=attribute,
                value=value,
                fate=_declared(attribute, ignored),
                rule=f"set at {block.at(attribute)}",
            )
        if not parent_known or value == parent_value:
            return Value(
                attribute=attribute,
                value=value,
                fate=INHERITED,
                rule=f"left to the {noun} by {block.where}",
            )
        # Left out of the configuration, yet the state holds another value than the
        # parent's: set by an earlier configuration (Terraform plans no change when an
        # Optional+Computed argument is removed). The state is what the cloud holds.
        return Value(
            attribute=attribute,
            value=value,
            fate=_declared(attribute, ignored),
            rule=f"not in {block.where}, but the state's differs from the {noun}'s",
        )
    if parent_known and value == parent_value:
        return Value(
            attribute=attribute, value=value, fate=INHERITED, rule=f"equal to the {noun}'s"
        )
    rule = f"differs from the {noun}'s" if parent_known else f"the {noun}'s values are unknown"
    return Value(attribute=attribute, value=value, fate=_declared(attribute, ignored), rule=rule)


def decide_default(
    attribute: str,
    value: Any,
    *,
    block: Block | None,
    default: Any,
    ignored: Sequence[str],
    cloud: str,
) -> Value:
    """An attribute no parent gives: the cloud's default when left out."""
    if value is None:
        return Value(attribute=attribute, value=value, fate=UNSET, rule="not in the state")
    if block is not None and attribute in block.arguments:
        return Value(
            attribute=attribute,
            value=value,
            fate=_declared(attribute, ignored),
            rule=f"set at {block.at(attribute)}",
        )
    if value == default:
        return Value(attribute=attribute, value=value, fate=DEFAULT, rule=f"{cloud}'s default")
    rule = f"not {cloud}'s default" if block is None else f"not in {block.where}, not the default"
    return Value(attribute=attribute, value=value, fate=_declared(attribute, ignored), rule=rule)


def decide_computed(attribute: str, value: Any, *, block: Block | None, cloud: str) -> Value:
    """Optional and Computed: declared only where the configuration sets it."""
    if block is not None and attribute in block.arguments and not empty(value):
        return Value(
            attribute=attribute, value=value, fate=CARRIED, rule=f"set at {block.at(attribute)}"
        )
    return Value(attribute=attribute, value=value, fate=COMPUTED, rule=f"Computed: left to {cloud}")


def decide_own(attribute: str, value: Any, *, ignored: Sequence[str], cloud: str) -> Value:
    """An attribute the cloud copies from nowhere: declared whenever the state has one."""
    if empty(value):
        return Value(attribute=attribute, value=value, fate=UNSET, rule="not set in the state")
    return Value(
        attribute=attribute,
        value=value,
        fate=_declared(attribute, ignored),
        rule=f"{cloud} does not copy it",
    )


def decide(
    option: Option,
    value: Any,
    *,
    block: Block | None,
    parents: Mapping[str, Parent],
    ignored: Sequence[str],
    cloud: str,
) -> Value:
    """The fate of ``option``'s attribute from its columns (see the module docstring);
    ``parents`` by the names ``inherits`` uses."""
    attribute = option.terraform
    if option.inherits:
        noun, _, parent_attribute = option.inherits.partition(".")
        return decide_inherited(
            attribute,
            value,
            block=block,
            parent=parents[noun],
            parent_attribute=parent_attribute,
            ignored=ignored,
        )
    if option.cloud_default is not None:
        return decide_default(
            attribute,
            value,
            block=block,
            default=option.cloud_default,
            ignored=ignored,
            cloud=cloud,
        )
    if option.computed:
        return decide_computed(attribute, value, block=block, cloud=cloud)
    return decide_own(attribute, value, ignored=ignored, cloud=cloud)


# --- resource types ---------------------------------------------------------------------------


def terraform_kind(option: Option) -> str:
    """The Terraform type of an option's attribute: ``string``, ``int``, ``bool`` or ``map``
    (of strings), from its annotation ("" when it is none of these)."""
    plain = option.scalar
    if plain is str:
        return "string"
    if plain is bool:
        return "bool"
    if plain is int:
        return "int"
    for member in option.members:
        if member in (Mapping, dict) or typing.get_origin(member) in (Mapping, dict):
            return "map"
    return ""


Decider = Callable[[Option, Any], Value | None]
"""How an importer decides one option's attribute in code (labels, counts): the Value, or
None when the attribute becomes no Value (the declaration's identity)."""


@dataclass(frozen=True, kw_only=True)
class ResourceSpec:
    """What one Terraform resource type becomes in a cloud's importer: once per type."""

    resource_type: str
    """The Terraform resource type (``<provider>_<name>``)."""
    table: type
    """The class whose option table holds its attributes (``Option.terraform``)."""
    provider: str
    """The Terraform provider that declares it (for messages)."""
    placed: Mapping[str, tuple[str, str]]
    """Attributes the importer places by its own code, no option naming them: attribute ->
    (its Terraform type, what it becomes)."""
    dropped: Mapping[str, str]
    """Attributes that belong to no option and are never declared: attribute -> why."""
    kinds: Mapping[str, str] = field(default_factory=dict)
    """More Terraform types to check: of option attributes whose annotation does not tell
    (a reference to another declaration, held by its id), and of dropped ones a state must
    still hold with the provider's type."""

    def options(self) -> dict[str, Option]:
        """The table's options that import an attribute, by attribute, in the table's order."""
        return {o.terraform: o for o in options_of(self.table).values() if o.terraform}

    def schema(self) -> ResourceSchema:
        """The types of the attributes read: the options' (from their annotations) and
        those the importer places; a dropped attribute is not read."""
        attributes = {a: kind for a, (kind, _) in self.placed.items()}
        for attribute, option in self.options().items():
            kind = self.kinds.get(attribute) or terraform_kind(option)
            if kind:
                attributes.setdefault(attribute, kind)
        for attribute, kind in self.kinds.items():
            attributes.setdefault(attribute, kind)
        return ResourceSchema(provider=self.provider, attributes=attributes)

    def unplaced(self, resource: StateResource) -> list[str]:
        """The attributes of ``resource`` with a value that no option, no code of the
        importer and no drop accounts for, sorted."""
        known = {*self.options(), *self.placed, *self.dropped}
        return sorted(a for a, v in resource.attributes.items() if a not in known and not empty(v))

    def values(
        self,
        resource: StateResource,
        *,
        block: Block | None,
        parents: Mapping[str, Parent],
        cloud: str,
        own: Mapping[str, Decider],
    ) -> tuple[Value, ...]:
        """Each option's attribute of ``resource``, in the table's order, decided by the
        option's columns, or by ``own`` (attribute -> the importer's code)."""
        ignored = block.ignore_changes if block is not None else ()
        out: list[Value] = []
        for attribute, option in self.options().items():
            value = resource.attributes.get(attribute)
            decider = own.get(attribute)
            found = (
                decider(option, value)
                if decider is not None
                else decide(
                    option, value, block=block, parents=parents, ignored=ignored, cloud=cloud
                )
            )
            if found is not None:
                out.append(found)
        return tuple(out)


def unplaced_errors(
    resources: Sequence[StateResource], specs: Mapping[str, ResourceSpec], importer: str
) -> list[DefinitionError]:
    """One error per attribute of ``resources`` that their spec neither places nor drops,
    naming the state file, the address and the attribute (never the value: it may be a
    secret); ``importer`` names who reads them."""
    errors: list[DefinitionError] = []
    for resource in resources:
        spec = specs.get(resource.type)
        if spec is None:
            continue
        for attribute in spec.unplaced(resource):
            errors.append(
                DefinitionError(
                    f"{resource.type} attribute {attribute!r} is neither imported nor dropped "
                    f"by the {importer} importer (a provider newer than its option table?): "
                    "nothing is written; add the option that imports it, or its drop",
                    where=resource.where,
                    field=attribute,
                )
            )
    return errors

"""What the states hold of Magnum: templates, clusters and node groups, each value with its
fate (:mod:`fleet.terraform.attributes`), and the rules of Magnum's labels.

Labels under ``merge_labels`` are the parent's updated with the object's own, and
terraform-provider-openstack v3.4.0 reads them back as the difference from the parent
(``containerInfraV1GetLabelsMerged``), so Magnum's labels are the parent's updated with the
state's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fleet.terraform.attributes import DECLARED, Value
from fleet.terraform.hcl import Block
from fleet.terraform.state import StateFile, StateResource

_KUBE_TAG = re.compile(r"^v?(\d+\.\d+\.\d+)")
_KUBE_IN_NAME = re.compile(r"(?<![0-9.])v?(1\.\d{1,2}\.\d+)(?![0-9])")


@dataclass(frozen=True, kw_only=True)
class ImportedTemplate:
    """A cluster template, from a resource or a data source of a state, or known only by the
    UUID its clusters name (never invented)."""

    uuid: str
    magnum_name: str
    known_from: str
    """``resource``, ``data-source``, ``fleet`` (not in the states, declared in the fleet's
    templates: a re-import) or ``uuid``."""
    where: str
    """``<state> <address>`` of its resource or data source (or of its first cluster); for
    one declared in the fleet, where."""
    labels: Mapping[str, str]
    values: Mapping[str, Any]
    """Every non-computed, non-empty attribute but ``name`` and ``labels``, by Terraform name
    (declared ones only, for a template of the fleet)."""
    kubernetes_version: str
    sensitive: frozenset[str] = frozenset()
    """The attributes its state marks sensitive (never written)."""
    project_id: str = ""
    """Its owner project, as the state holds it ("" when it does not)."""
    region: str = ""
    """The region its provider read it in ("" when the state does not hold it)."""
    public: bool = False

    def knows(self, attribute: str) -> bool:
        """Whether its value of ``attribute`` (Terraform's name; ``labels``) is known: every
        attribute of a template the states hold (an empty one is no value); of one declared
        in the fleet, those it declares."""
        if self.known_from == "fleet":
            return bool(self.labels) if attribute == "labels" else attribute in self.values
        return self.known_from != "uuid"


@dataclass(frozen=True, kw_only=True)
class ImportedGroup:
    """A node group of an imported cluster."""

    resource: StateResource
    magnum_name: str
    external_name: str
    """Terraform's id ``<cluster uuid>/<node group uuid>``: the NodegroupV1's external name."""
    values: tuple[Value, ...]
    labels: Mapping[str, str]
    """The labels it declares (its own, see :func:`own_labels`)."""
    merge_labels: bool | None
    block: Block | None = None

    def value(self, attribute: str) -> Value | None:
        """The decision on one attribute."""
        return next((v for v in self.values if v.attribute == attribute), None)

    def declared(self) -> dict[str, Any]:
        """The attributes it declares (carried and create-only), by Terraform name."""
        return {v.attribute: v.value for v in self.values if v.fate in DECLARED}

    @property
    def name(self) -> str:
        """Its name in Magnum."""
        return self.magnum_name


@dataclass(frozen=True, kw_only=True)
class StateCluster:
    """One Magnum cluster of one state, in its environment, with its node groups."""

    resource: StateResource
    state: StateFile
    environment: str
    environment_rule: str
    magnum_name: str
    uuid: str
    template: ImportedTemplate
    values: tuple[Value, ...]
    labels: Mapping[str, str]
    """The labels it declares (see :func:`own_labels`); ``magnum_labels`` are all of them."""
    magnum_labels: Mapping[str, str]
    merge_labels: bool | None
    node_groups: tuple[ImportedGroup, ...]
    project_id: str
    region: str
    block: Block | None = None
    notes: tuple[str, ...] = ()
    omitted_labels: frozenset[str] = frozenset()
    """Label keys left out (``--omit-label``): its labels are create-only, Magnum keeps
    these."""

    def value(self, attribute: str) -> Value | None:
        """The decision on one attribute."""
        return next((v for v in self.values if v.attribute == attribute), None)

    def declared(self) -> dict[str, Any]:
        """The attributes it declares (carried and create-only), by Terraform name."""
        return {v.attribute: v.value for v in self.values if v.fate in DECLARED}

    @property
    def where(self) -> str:
        """``<state> <address>``."""
        return self.resource.where

    @property
    def name(self) -> str:
        """Its name in Magnum."""
        return self.magnum_name

    @property
    def pools(self) -> Sequence[ImportedGroup]:
        """Its node groups."""
        return self.node_groups


@dataclass(frozen=True, kw_only=True)
class StateImport:
    """What the states hold: templates by UUID, clusters in state order."""

    templates: Mapping[str, ImportedTemplate]
    clusters: tuple[StateCluster, ...]
    ignored: tuple[str, ...] = ()
    """``<state>: N other resources`` lines for the report."""


def kubernetes_version(
    labels: Mapping[str, str], image: str, name: str, coe_versions: Sequence[str]
) -> str | None:
    """From the ``kube_tag`` label (the Heat drivers'), else a cluster's ``coe_version``
    (what Magnum reports running), else a Kubernetes version (1.x.y) in the image or
    template name."""
    for text in (labels.get("kube_tag", ""), *coe_versions):
        match = _KUBE_TAG.match(text)
        if match:
            return "v" + match.group(1)
    for text in (image, name):
        match = _KUBE_IN_NAME.search(text)
        if match:
            return "v" + match.group(1)
    return None


def magnum_labels(
    state_labels: Mapping[str, str], parent: Mapping[str, str], merge: bool | None
) -> dict[str, str]:
    """The labels Magnum holds: under ``merge_labels`` the parent's updated with the
    state's (the provider reads back only what differs, plus the declared ones); else the
    state's, which the provider reads back whole."""
    if merge:
        return {**parent, **state_labels}
    return dict(state_labels)


def own_labels(
    state_labels: Mapping[str, str],
    merge: bool | None,
    *,
    block: Block | None,
    parent: Mapping[str, str],
    parent_known: bool,
) -> tuple[dict[str, str], str]:
    """The labels an object declares, and why.

    Under ``merge_labels`` the state holds what differs from the parent plus the declared
    labels: all of it is declared. Without it the state holds all of Magnum's labels: they
    are declared when the configuration sets ``labels`` or when they differ from the
    parent's (set by an earlier configuration; or no configuration given), else left to
    the parent."""
    labels = dict(state_labels)
    if merge:
        return labels, "merge_labels: the state holds the object's own labels"
    if block is not None:
        if "labels" in block.arguments and labels:
            return labels, f"set at {block.at('labels')}"
        if not parent_known or labels == dict(parent) or not labels:
            return {}, f"left to the parent by {block.where}"
        return labels, f"not in {block.where}, but the state's differ from the parent's"
    if parent_known and labels == dict(parent):
        return {}, "equal to the parent's"
    return labels, "differ from the parent's" if parent_known else "the parent's are unknown"

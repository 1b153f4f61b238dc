"""Magnum's own naming rules: what it refuses, and what it cannot find by name.

openstack/magnum 22.0.0:

* a cluster's name: ``wtypes.StringType(min_length=1, max_length=242,
  pattern='^[a-zA-Z][a-zA-Z0-9_.-]*$')`` (``magnum/api/controllers/v1/cluster.py``,
  ``Cluster.name``; 242 because Heat stack names are at most 255 and Magnum appends a
  UUID);
* a node group's name: ``StringType(min_length=1, max_length=255)``, no pattern
  (``magnum/api/controllers/v1/nodegroup.py``);
* a cluster template's name: ``StringType(min_length=1, max_length=255)``, no pattern
  (``magnum/api/controllers/v1/cluster_template.py``).

Looking up by name: ``magnum/api/utils.py`` ``get_resource`` takes a UUID-like identifier
as a UUID (``oslo_utils.uuidutils.is_uuid_like``), and ``magnum/objects/nodegroup.py``
``NodeGroup.get`` an int-like one as the node group's database id
(``oslo_utils.strutils.is_int_like``): a cluster or node group named like that cannot be
found by its name. terraform-provider-openstack v3.4.0 puts the node group's identifier in
the URL unescaped (gophercloud v2.8.0 ``openstack/containerinfra/v1/nodegroups/urls.go``:
``ServiceURL("clusters", clusterID, "nodegroups", nodeGroupID)``, ``strings.Join``), and
splits the Terraform id ``<cluster>/<node group>`` at the first ``/`` (``util.go``
``parsePairedIDs``): a name with ``/``, ``?``, ``#`` or ``%`` is another URL. Dots are safe
(``magnum/api/app.py``: ``guess_content_type_from_ext=False``).
"""

from __future__ import annotations

import re

from fleet.core.errors import DefinitionError

CLUSTER_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9_.-]*")
"""Magnum's pattern of a cluster name (matched in full; Magnum's ``$`` would also let a
trailing newline through, which the fleet refuses)."""
CLUSTER_NAME_MAX = 242
NAME_MAX = 255
"""The longest node group or cluster template name."""
_URL_UNSAFE = ("/", "?", "#", "%")
_HEX32 = re.compile(r"[0-9a-f]{32}")


def uuid_like(value: str) -> bool:
    """Whether Magnum takes ``value`` for a UUID (``oslo_utils.uuidutils.is_uuid_like``:
    32 hex digits once ``urn:``, ``uuid:``, braces and dashes are removed)."""
    text = value.replace("urn:", "").replace("uuid:", "").strip("{}").replace("-", "")
    return _HEX32.fullmatch(text.lower()) is not None


def int_like(value: str) -> bool:
    """Whether Magnum takes ``value`` for an integer id (``oslo_utils.strutils.is_int_like``:
    ``str(int(value)) == value``)."""
    try:
        return str(int(value)) == value
    except ValueError:
        return False


def check_cluster_name(name: str, *, where: str, adopted_by_uuid: bool) -> str:
    """``name`` if Magnum takes it as a cluster name and can find the cluster by it (or
    the cluster is adopted by its UUID), else the error."""
    if not 1 <= len(name) <= CLUSTER_NAME_MAX or not CLUSTER_NAME.fullmatch(name):
        raise DefinitionError(
            f"Magnum refuses the cluster name {name!r}: 1 to {CLUSTER_NAME_MAX} characters, "
            "an ASCII letter first, then letters, digits, '_', '.' or '-' "
            "(magnum/api/controllers/v1/cluster.py)",
            where=where,
            field="name",
        )
    if uuid_like(name) and not adopted_by_uuid:
        raise DefinitionError(
            f"Magnum reads {name!r} as a UUID (magnum/api/utils.py get_resource), so the "
            "provider could never find the cluster by its name: choose another name, or "
            "adopt an existing cluster by its UUID (external_name=)",
            where=where,
            field="name",
        )
    return name


def node_group_name_problem(name: str) -> str | None:
    """Why the provider cannot find a node group by ``name`` (None: it can)."""
    if int_like(name):
        return "Magnum reads an integer as the node group's id (magnum/objects/nodegroup.py)"
    if uuid_like(name):
        return "Magnum reads it as the node group's UUID (magnum/objects/nodegroup.py)"
    unsafe = [c for c in _URL_UNSAFE if c in name]
    if unsafe:
        return (
            f"{unsafe[0]!r} changes the URL the provider builds from the name (gophercloud "
            "nodegroups/urls.go does not escape it)"
        )
    return None


def check_node_group_name(name: str, *, where: str, adopted: bool) -> str:
    """``name`` if Magnum takes it as a node group name and the provider can find the
    node group by it (or it is adopted by ``<cluster>/<node group UUID>``), else the error."""
    if not 1 <= len(name) <= NAME_MAX:
        raise DefinitionError(
            f"Magnum refuses a node group name of {len(name)} characters: 1 to {NAME_MAX} "
            "(magnum/api/controllers/v1/nodegroup.py)",
            where=where,
            field="name",
        )
    problem = None if adopted else node_group_name_problem(name)
    if problem:
        raise DefinitionError(
            f"the provider cannot find node group {name!r} by its name: {problem}; choose "
            "another name, or adopt an existing node group by its id "
            "(external_name='<cluster UUID>/<node group UUID>')",
            where=where,
            field="name",
        )
    return name


def check_template_name(name: str, *, where: str) -> str:
    """``name`` if Magnum takes it as a cluster template name (1 to 255 characters)."""
    if not 1 <= len(name) <= NAME_MAX:
        raise DefinitionError(
            f"Magnum refuses a cluster template name of {len(name)} characters: 1 to "
            f"{NAME_MAX} (magnum/api/controllers/v1/cluster_template.py)",
            where=where,
            field="name",
        )
    return name

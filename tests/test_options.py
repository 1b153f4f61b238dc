"""One table per field: a declaration's options, and everything that reads them.

The table (``fleet.core.options``) is checked against the pinned upstream data here: every
render path is a field of the vendored CRD (crds/, the schema provider-openstack and CAPOCI
serve), and every Terraform attribute is an argument of the vendored
terraform-provider-openstack data (checks/data/openstack-force-new.json, v3.4.0), naming the
same forProvider field as the render path. Then a subclass that adds one option gets it
checked, resolved, rendered and imported, with no other edit.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any, ClassVar

import pytest
from crd_samples import crds_dir

from fleet import (
    ClusterTemplate,
    DefinitionError,
    Fleet,
    FleetCluster,
    Lifecycle,
    MagnumCluster,
    NodeGroup,
    OciManagedCluster,
    OkeNodePool,
    OpenStackProject,
    PerEnv,
    per_env,
)
from fleet.checks.crds import load_crds
from fleet.clouds.base import declared_fields, force_new
from fleet.clouds.magnum.importer import tfvars
from fleet.clouds.magnum.plugin import FORCE_NEW_DATA
from fleet.core.options import Option, options_of, rendered, value_type
from fleet.core.options import option as option_
from fleet.terraform import tfvars as tfvars_values

TEMPLATE_UUID = "5a0c9d3e-1f2b-4c6d-8e7f-9a0b1c2d3e4f"
SCHEMA_TYPES = {
    int: ("integer", "number"),  # upjet's CRDs type Terraform's numbers as "number"
    str: ("string",),
    bool: ("boolean",),
    float: ("number",),
}

# (class, the cluster class whose objects its options render into)
TABLES: list[tuple[type, type[FleetCluster]]] = [
    (MagnumCluster, MagnumCluster),
    (NodeGroup, MagnumCluster),
    (OciManagedCluster, OciManagedCluster),
    (OkeNodePool, OciManagedCluster),
]


def _schema_at(schema: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any] | None:
    node: dict[str, Any] | None = schema
    for key in path:
        node = (node or {}).get("properties", {}).get(key)
    return node


@pytest.mark.parametrize(("cls", "cluster"), TABLES, ids=lambda c: c.__name__)
def test_every_render_path_is_a_field_of_the_pinned_crd(
    cls: type, cluster: type[FleetCluster]
) -> None:
    index = load_crds(crds_dir())
    options = rendered(cls)
    assert options, f"{cls.__name__} renders no option as it is"
    for o in options:
        kind = o.rendered_kind(cls)
        (api_version,) = [a for a, k in cluster.bearing_kinds if k == kind]
        crd = index.get(api_version, kind)
        assert crd is not None, (api_version, kind)
        field = _schema_at(crd.schema, o.render)
        assert field is not None, f"{o.keyword}: {'.'.join(o.render)} is not in {kind}'s CRD"
        assert o.scalar is not None, o.keyword
        assert field.get("type") in SCHEMA_TYPES[o.scalar], (o.keyword, field.get("type"))


def _provider_arguments(kind: str) -> dict[str, str]:
    """terraform attribute -> forProvider field of ``kind`` in the vendored provider data."""
    data = json.loads(Path(FORCE_NEW_DATA).read_text())["kinds"][kind]
    fields = {**data["forceNew"], **data["updatable"]}
    return {entry["terraform"]: name for name, entry in fields.items()}


@pytest.mark.parametrize("cls", [MagnumCluster, NodeGroup], ids=lambda c: c.__name__)
def test_every_terraform_attribute_is_an_argument_of_the_vendored_provider(cls: type) -> None:
    arguments = _provider_arguments(str(cls.rendered_kind))  # type: ignore[attr-defined]
    with_attribute = [o for o in options_of(cls).values() if o.terraform]
    assert len(with_attribute) >= 9
    for o in with_attribute:
        assert o.terraform in arguments, f"{o.keyword}: no Terraform argument {o.terraform}"
        if o.render[:2] == ("spec", "forProvider"):
            # Both columns name the same value: the render path is the attribute's field.
            assert o.render[2:] == (arguments[o.terraform],), o.keyword


def test_force_new_comes_from_the_plugins_provider_data() -> None:
    """Whether ``fleet diff`` refuses a change of an option is the plug-in's vendored
    provider data, found by the option's Terraform attribute: terraform-provider-openstack
    v3.4.0 ``resource_openstack_containerinfra_cluster_v1.go`` marks docker_volume_size,
    flavor and labels ForceNew and updates node_count in place; the node group's
    ``..._nodegroup_v1.go`` updates min/max_node_count in place."""
    cluster, group = options_of(MagnumCluster), options_of(NodeGroup)
    verdicts = {
        (table, keyword): force_new(MagnumCluster, table, options[keyword])
        for table, options in ((MagnumCluster, cluster), (NodeGroup, group))
        for keyword in options
    }
    assert verdicts[(MagnumCluster, "docker_volume_size_gb")] is True
    assert verdicts[(MagnumCluster, "flavor")] is True
    assert verdicts[(MagnumCluster, "labels")] is True
    assert verdicts[(MagnumCluster, "node_count")] is False
    assert verdicts[(NodeGroup, "max_node_count")] is False
    assert verdicts[(NodeGroup, "image_id")] is True
    assert verdicts[(MagnumCluster, "deletion_protection")] is None  # no Terraform attribute
    # OKE has no upjet provider: its create-only fields are its own (force_new_fields)
    oke = options_of(OciManagedCluster)
    assert force_new(OciManagedCluster, OciManagedCluster, oke["region"]) is None


def test_declared_fields_name_the_argument_of_a_rendered_field() -> None:
    fields = declared_fields()
    docker = fields[("ClusterV1", ("spec", "forProvider", "dockerVolumeSize"))]
    assert (docker.table, docker.option.keyword) == (MagnumCluster, "docker_volume_size_gb")
    image = fields[("NodegroupV1", ("spec", "forProvider", "imageId"))]
    assert (image.cluster, image.table, image.option.keyword) == (
        MagnumCluster,
        NodeGroup,
        "image_id",
    )
    shape = fields[("OCIManagedMachinePool", ("spec", "nodeShape"))]
    assert (shape.table, shape.option.keyword) == (OkeNodePool, "node_shape")


def test_the_importer_reads_the_cluster_table() -> None:
    """The tfvars keys the importer takes as they are are the table's Terraform attributes
    of the options that render as they are and default to None."""
    keys = {o.terraform: (o.keyword, o.render[-1]) for o in tfvars.cluster_options()}
    assert keys == {
        "discovery_url": ("discovery_url", "discoveryUrl"),
        "docker_volume_size": ("docker_volume_size_gb", "dockerVolumeSize"),
        "fixed_network": ("fixed_network", "fixedNetwork"),
        "fixed_subnet": ("fixed_subnet", "fixedSubnet"),
        "floating_ip_enabled": ("floating_ip_enabled", "floatingIpEnabled"),
        "master_lb_enabled": ("master_lb_enabled", "masterLbEnabled"),
        "region": ("openstack_region", "region"),
    }
    assert {o.terraform for o in tfvars.node_group_options()} == {
        "docker_volume_size",
        "image_id",
        "role",
    }


def _template() -> ClusterTemplate:
    return ClusterTemplate(
        name="tpl-options",
        kubernetes_version="v1.29.2",
        base_labels={"kube_tag": "v1.29.2"},
        uuid=TEMPLATE_UUID,
    )


SAMPLES: dict[type, Any] = {int: 7, str: "sample-value", bool: True}


@pytest.mark.parametrize(
    "option",
    [o for o in rendered(MagnumCluster) if o.default is None],
    ids=lambda o: o.keyword,
)
def test_an_optional_cluster_option_renders_where_its_table_says(
    fleet: Fleet, option: Option
) -> None:
    project = OpenStackProject(fleet, "p", project_name="P")
    value = SAMPLES[option.scalar]  # type: ignore[index]
    other = False if value is True else value
    args: dict[str, Any] = {"flavor": "m1", "keypair": "k"}
    args[option.keyword] = per_env(dev=value, prod=other)
    cluster = MagnumCluster(
        fleet,
        "c",
        name="c-{env}",
        environments=["dev", "prod"],
        project=project,
        template=_template(),
        node_count=1,
        **args,
    )
    for env, expected in (("dev", value), ("prod", other)):
        (body,) = [m.body for m in cluster.manifests(env) if m.kind == "ClusterV1"]
        node: Any = body
        for key in option.render:
            node = node[key]
        assert node == expected
        assert cluster.resolved(env).options[option.keyword] == expected


def test_lifecycle_is_the_table_of_fleet_cluster() -> None:
    """``Lifecycle`` (for wrappers' ``**lifecycle``) lists FleetCluster's lifecycle fields
    with the same types."""
    own = {k: o for k, o in options_of(FleetCluster).items() if o.owner is FleetCluster}
    hints = typing.get_type_hints(Lifecycle)
    assert set(hints) == set(own) - {"name"}
    for key, hint in hints.items():
        assert hint == own[key].hint, key


# --- a subclass that adds one option: nothing else changes ------------------------------------


@value_type
class RegionalNodeGroup(NodeGroup):
    """A node group with NodegroupV1's ``region`` (terraform-provider-openstack v3.4.0,
    ``openstack_containerinfra_nodegroup_v1``: ``region``, Optional, ForceNew)."""

    rendered_kind: ClassVar[str] = "NodegroupV1"

    region: str | PerEnv[str] | None = option_(
        default=None,
        render="spec.forProvider.region",
        terraform="region",
        nonempty=True,
        doc="The region of the node group.",
    )


def test_a_subclass_option_is_checked_resolved_rendered_and_imported(fleet: Fleet) -> None:
    # checked, with the constructor's own messages
    with pytest.raises(DefinitionError, match=r"region: must be a string or per_env\(a string\)"):
        RegionalNodeGroup(name="a", flavor="f", node_count=1, region=3)  # type: ignore[arg-type]
    with pytest.raises(DefinitionError, match=r"region\[dev\]: must be a non-empty string"):
        RegionalNodeGroup(name="a", flavor="f", node_count=1, region=per_env(dev=""))
    project = OpenStackProject(fleet, "p", project_name="P")
    group = RegionalNodeGroup(
        name="zone-a", flavor="f", node_count=1, region=per_env(dev="cern", prod="meyrin")
    )
    with pytest.raises(DefinitionError, match=r"per_env key 'dve' is not an environment"):
        MagnumCluster(
            fleet,
            "bad",
            name="bad",
            environments=["dev"],
            project=project,
            template=_template(),
            flavor="m1",
            keypair="k",
            node_count=1,
            node_groups=[
                RegionalNodeGroup(name="z", flavor="f", node_count=1, region=per_env(dve="x"))
            ],
        )
    cluster = MagnumCluster(
        fleet,
        "c",
        name="c-{env}",
        environments=["dev", "prod"],
        project=project,
        template=_template(),
        flavor="m1",
        keypair="k",
        node_count=1,
        node_groups=[group],
    )
    # resolved and rendered per environment, into a field the pinned CRD has
    from fleet import testing

    out = testing.synth(fleet, ["dev", "prod"], validate=True)
    for env, region in (("dev", "cern"), ("prod", "meyrin")):
        body = out.get("NodegroupV1", f"c-{env}-zone-a", env=env)
        assert body["spec"]["forProvider"]["region"] == region
    assert cluster.node_groups == (group,)
    # imported: the importer's table is the class's
    (added,) = [o for o in tfvars_values.importable(RegionalNodeGroup) if o.keyword == "region"]
    assert added.terraform not in {o.terraform for o in tfvars.node_group_options()}
    assert tfvars_values.convert_option(added, "cern", where="x.tfvars:3", field="region") == "cern"
    with pytest.raises(DefinitionError, match="must be a non-empty string"):
        tfvars_values.convert_option(added, "", where="x.tfvars:3", field="region")
    assert "region" in _provider_arguments("NodegroupV1")


def test_required_and_per_env_come_from_the_annotation() -> None:
    table = options_of(MagnumCluster)
    assert table["node_count"].required and table["node_count"].per_env
    assert not table["flavor"].required and table["flavor"].per_env  # the template's
    assert not table["create_timeout_minutes"].required
    assert not table["create_timeout_minutes"].per_env
    assert table["docker_volume_size_gb"].scalar is int
    assert table["template"].name == "_template"  # the normalized value is .template
    assert table["environments"].keyword == "environments"


# --- checks that could never fire were removed: the argument checker answers first ---------


def _magnum(fleet: Fleet, **kwargs: Any) -> MagnumCluster:
    args: dict[str, Any] = dict(
        name="c",
        environments=["dev"],
        project=OpenStackProject(fleet, "p", project_name="P"),
        template=_template(),
        flavor="m1",
        keypair="k",
        node_count=1,
    )
    return MagnumCluster(fleet, "c", **{**args, **kwargs})


@pytest.mark.parametrize(
    ("make", "field", "message"),
    [
        # MagnumCluster: isinstance(project, OpenStackProject), create_timeout_minutes an int
        (lambda f: _magnum(f, project="p"), "project", "must be an OpenStackProject or a"),
        (lambda f: _magnum(f, create_timeout_minutes="9"), "create_timeout_minutes", "integer"),
        # MagnumCluster._resolve: label values are strings; check_optional's types
        (lambda f: _magnum(f, labels={"a": 1}), "labels", "label values are strings"),
        (lambda f: _magnum(f, docker_volume_size_gb="5"), "docker_volume_size_gb", "integer"),
        (lambda f: _magnum(f, fixed_network=per_env(dev=3)), "fixed_network[dev]", "a string"),
        # FleetCluster: retired a string (not a list of environments)
        (lambda f: _magnum(f, retired="dev"), "retired", "must be True or False or a list"),
        # NodeGroup: retired a bool, labels strings, the optional arguments' types
        (lambda f: NodeGroup(name="a", flavor="f", node_count=1, retired="no"), "retired", "True"),
        (lambda f: NodeGroup(name="a", flavor="f", node_count=1, image_id=5), "image_id", "str"),
        # OkeNodePool: node_shape a string, boot volume an int, a list not one string
        (lambda f: OkeNodePool(name="a", node_shape=5, node_count=1), "node_shape", "string"),
        (
            lambda f: OkeNodePool(name="a", ocpus=1, node_count=1, boot_volume_size_gb=True),
            "boot_volume_size_gb",
            "an integer",
        ),
        (
            lambda f: OkeNodePool(name="a", ocpus=1, node_count=1, nsg_names="worker"),
            "nsg_names",
            "a list of str",
        ),
    ],
)
def test_the_argument_checker_answers_before_the_removed_checks(
    fleet: Fleet, make: Any, field: str, message: str
) -> None:
    with pytest.raises(DefinitionError) as caught:
        make(fleet)
    assert caught.value.field == field
    assert message in caught.value.message

"""``ClusterTemplate`` holds the Magnum template's attributes (#19: "a template resource in the
state becomes a ClusterTemplate with its real UUID, labels, image, COE and the rest").

The attributes are those of terraform-provider-openstack v3.4.0's
``openstack_containerinfra_clustertemplate_v1``
(``openstack/resource_openstack_containerinfra_clustertemplate_v1.go``), which upjet turns
into the ``forProvider`` fields of provider-openstack v0.9.0's ClustertemplateV1 CRD (pinned in
``fleet/data/crds/provider-openstack``): the table is checked against that CRD.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from crd_samples import crds_dir

from fleet import (
    ClusterTemplate,
    DefinitionError,
    DefinitionErrors,
    MagnumCluster,
    OpenStackProject,
    TemplateCatalog,
    testing,
)
from fleet.clouds.magnum.template import template_attribute
from fleet.core.options import options_of
from fleet.views.graph.structure import pool_line
from fleet.views.inventory import inventory

UUID = "5a0c9d3e-1f2b-4c6d-8e7f-9a0b1c2d3e4f"
CRD = "provider-openstack/containerinfra.openstack.crossplane.io_clustertemplatev1s.yaml.gz"


def template(**overrides: Any) -> ClusterTemplate:
    args: dict[str, Any] = {"name": "k8s v1.27", "kubernetes_version": "v1.27.8", "uuid": UUID}
    args.update(overrides)
    return ClusterTemplate(**args)


def crd_arguments() -> dict[str, str]:
    """forProvider field of the pinned ClustertemplateV1 CRD -> its JSON type."""
    document = yaml.safe_load(gzip.decompress((crds_dir() / CRD).read_bytes()))
    (version,) = [v for v in document["spec"]["versions"] if v["name"] == "v1alpha1"]
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    fields = spec["forProvider"]["properties"]
    return {name: str(field.get("type")) for name, field in fields.items()}


def camel(attribute: str) -> str:
    head, *rest = attribute.split("_")
    return head + "".join(word.title() for word in rest)


JSON_TYPES = {str: "string", int: "number", bool: "boolean"}


def test_every_attribute_of_the_provider_resource_is_a_field() -> None:
    """Each argument of the resource but ``region`` (the provider's, not the template's)
    has a field, of the type the CRD gives it; no field names another attribute."""
    crd = crd_arguments()
    table = {o.terraform: o for o in options_of(ClusterTemplate).values() if o.terraform}
    assert {camel(t) for t in table} == set(crd) - {"region"}
    for terraform, o in table.items():
        if terraform in ("name", "labels"):
            continue
        assert not o.required and o.default is None, o.keyword
        assert JSON_TYPES[o.scalar] == crd[camel(terraform)], o.keyword  # type: ignore[index]
    assert template_attribute("keypair_id") == "keypair"
    assert template_attribute("docker_volume_size") == "docker_volume_size_gb"
    assert template_attribute("labels") is None


def test_the_attributes_are_kept_and_read_back_by_terraform_name() -> None:
    t = template(image="Fedora-CoreOS-38", coe="kubernetes", keypair="k", public=False)
    assert t.magnum_attributes() == {
        "coe": "kubernetes",
        "image": "Fedora-CoreOS-38",
        "keypair_id": "k",
        "public": False,
    }
    assert template().magnum_attributes() == {}


@pytest.mark.parametrize(
    "attribute", ["http_proxy", "https_proxy", "insecure_registry", "no_proxy"]
)
def test_a_proxy_with_a_password_is_refused_without_echoing_it(attribute: str) -> None:
    with pytest.raises(DefinitionError) as e:
        template(**{attribute: "http://builder:s3cr3t-Pa55@proxy.example.org:3128"})
    message = str(e.value)
    assert "s3cr3t-Pa55" not in message
    assert re.search(rf"\(template k8s v1\.27\): {attribute}: holds a URL with a password", message)
    template(http_proxy="http://proxy.example.org:3128")  # no credential: kept


def test_the_provider_bounds_the_api_server_port() -> None:
    """``ValidateFunc: validation.IntBetween(1024, 65535)``."""
    for port in (1023, 65536):
        with pytest.raises(DefinitionError, match="apiserver_port: must be 1024"):
            template(apiserver_port=port)
    assert template(apiserver_port=6443).apiserver_port == 6443


def test_one_name_with_other_attributes_is_declared_twice(tmp_path: Path) -> None:
    catalog = TemplateCatalog()
    catalog.add(template(flavor="m1"))
    catalog.add(template(flavor="m1"))
    with pytest.raises(DefinitionError, match="declared twice with different content"):
        catalog.add(template(flavor="m2"))


# --- where the cluster uses them ----------------------------------------------------------


def cluster(fleet: Any, **overrides: Any) -> MagnumCluster:
    args: dict[str, Any] = {
        "name": "web",
        "environments": ["dev"],
        "project": OpenStackProject(fleet, "p", project_name="P"),
        "template": template(flavor="g4.large", master_lb_enabled=False),
        "node_count": 1,
        "inherit_from_template": True,
    }
    args.update(overrides)
    return MagnumCluster(fleet, "web", **args)


def test_masters_behind_no_load_balancer_of_the_template_are_refused(tmp_path: Path) -> None:
    """Magnum copies the template's master_lb_enabled into a cluster that sets none, then
    refuses more than one master without it (magnum 22.0.0 ``api/controllers/v1/cluster.py``
    ``_post``, ``api/attr_validator.py`` ``validate_master_count``)."""
    fleet = testing.fleet(environments=["dev"], root=tmp_path)
    with pytest.raises((DefinitionError, DefinitionErrors)) as e:
        cluster(fleet, master_count=3)
    assert (
        "master_lb_enabled: master_count 3 with master_lb_enabled=False (template 'k8s v1.27') "
        "(dev): Magnum refuses it" in str(e.value)
    )
    fleet = testing.fleet(environments=["dev"], root=tmp_path)
    cluster(fleet, master_count=3, master_lb_enabled=True)  # the cluster's own wins
    testing.synth(fleet)


def test_the_workers_flavor_left_to_the_template_is_shown(tmp_path: Path) -> None:
    fleet = testing.fleet(environments=["dev"], root=tmp_path)
    web = cluster(fleet)
    out = testing.synth(fleet)
    (body,) = [m.body for m in out.all("ClusterV1")]
    assert "flavor" not in body["spec"]["forProvider"]  # still Magnum's to copy
    (row,) = inventory(fleet)
    worker = row.node_pools[0]
    assert (worker.machine_size, worker.size_inherited) == ("g4.large", True)
    assert pool_line(worker) == "default-worker: 1 x g4.large (inherited)"
    assert web.resolved("dev").magnum_flavor == "g4.large"
    assert web.resolved("dev").flavor is None

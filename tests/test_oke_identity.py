"""Imported OKE clusters get credentials (issue 30's follow-up): in a fleet without
``CapociCredentials`` every imported cluster uses an ``OciClusterIdentity``: the fleet's own,
else one the generated module declares per tenancy (else per state), with the Secret to
create printed, and nothing of the private key anywhere.

Upstream read: oracle/cluster-api-provider-oci v0.24.0 ``cloud/util/util.go``
``GetOrBuildClientFromIdentity`` (a UserPrincipal identity's Secret is read for the keys
``tenancy``, ``user``, ``fingerprint``, ``key`` (the PEM itself, passed to
``NewRawConfigurationProvider``), ``passphrase``, ``region`` (the cluster's region when
empty)), ``cloud/config/config.go`` (the key names); ``api/v1beta2/ociclusteridentity_types.go``
(``principalSecret``, ``allowedNamespaces``). The fleet fixture ``oke-import`` installs CAPOCI
(ArgoCD per environment) and declares neither credentials nor identity.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import copy_fleet
from support import HYBRID

from fleet.cli.main import main

FIXTURES = Path(__file__).parent / "fixtures"
FLEET = FIXTURES / "fleets" / "oke-import"
REAL_OKE = FIXTURES / "terraform" / "real-oke"
OKE_FIXTURES = sorted(p.name for p in REAL_OKE.iterdir() if p.is_dir())


def _import(root: Path, *argv: str, capsys: pytest.CaptureFixture[str]) -> str:
    code = main(["--root", str(root), "import", "tfstate", *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def _args(fixture: str, env: str | None = None) -> list[str]:
    expected = yaml.safe_load((REAL_OKE / fixture / "expected.yaml").read_text())
    state = expected["import"]["states"][0]
    path = REAL_OKE / fixture / state["path"]
    given = ["--state", f"{env or state['environment']}={path}"] if state["flag"] else [str(path)]
    return [*given, "--source", str(REAL_OKE / fixture / "source")]


def _synth_validate(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(root), "synth"]) == 0, capsys.readouterr().err
    assert main(["--root", str(root), "validate"]) == 0, capsys.readouterr().err
    capsys.readouterr()


def _objects(root: Path, kind: str) -> dict[str, dict[str, Any]]:
    """Every rendered object of ``kind`` (lower case file prefix) by ``<env>/<name>``."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted((root / "dist").rglob(f"{kind}_*.yaml")):
        body = yaml.safe_load(path.read_text())
        env = path.relative_to(root / "dist").parts[0]
        found[f"{env}/{body['metadata']['name']}"] = body
    return found


@pytest.mark.parametrize("fixture", OKE_FIXTURES)
def test_real_oke_imports_into_a_fleet_without_credentials(
    fixture: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each real fixture imports, renders and validates in a fleet that installs CAPOCI
    without credentials: the module declares one identity, every cluster names it, and the
    report says which Secret to create, with the keys CAPOCI reads."""
    root = copy_fleet(FLEET, tmp_path / "fleet")
    out = _import(root, *_args(fixture), capsys=capsys)
    modules = [
        p for p in (root / "clusters").glob("*.py") if p.name not in ("platform.py", "__init__.py")
    ]
    text = "".join(p.read_text() for p in modules)
    assert text.count("OciClusterIdentity(") == 1
    _synth_validate(root, capsys)
    (identity,) = _objects(root, "ociclusteridentity").values()
    name = identity["metadata"]["name"]
    secret = identity["spec"]["principalSecret"]
    assert secret == {"name": f"{name}-principal", "namespace": "oke-clusters"}
    clusters = _objects(root, "ocimanagedcluster")
    assert clusters and all(c["spec"]["identityRef"]["name"] == name for c in clusters.values())
    assert identity["spec"]["allowedNamespaces"] == {"list": ["oke-clusters"]}
    assert f"create Secret oke-clusters/{name}-principal" in out
    assert "keys tenancy, user, fingerprint, key (the PEM API signing key)" in out
    (command,) = [line.split(":   ", 1)[1] for line in out.splitlines() if "kubectl create" in line]
    argv = shlex.split(command)
    assert argv[:5] == ["kubectl", "create", "secret", "generic", f"{name}-principal"]
    assert "--from-file=key=API_SIGNING_KEY.pem" in argv


def test_the_tenancy_names_the_identity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """vanisett1's state holds the cluster's compartment, whose parent is the tenancy:
    the identity is named after it and the command carries the tenancy OCID."""
    root = copy_fleet(FLEET, tmp_path / "fleet")
    out = _import(root, *_args("vanisett1-oci-iac"), capsys=capsys)
    assert (
        'OciClusterIdentity(\n        fleet,\n        "oci-tenancy-cyvanisett"'
        in (root / "clusters" / "devops.py").read_text()
    )
    assert "--from-literal=tenancy=ocid1.tenancy.oc1..aaaaaaaaexampletenancyvanisett" in out


def test_the_fleets_only_identity_is_reused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hybrid fleet declares one OciClusterIdentity ('oci-tenancy', by hand) and no
    CapociCredentials: the module looks it up and declares none, and one identity renders."""
    root = copy_fleet(HYBRID, tmp_path / "hybrid")
    out = _import(root, *_args("vanisett1-oci-iac", env="test"), capsys=capsys)
    module = (root / "clusters" / "devops.py").read_text()
    assert "OciClusterIdentity(" not in module
    assert 'fleet.declaration("oci-tenancy", OciClusterIdentity)' in module
    assert "the fleet's only OciClusterIdentity" in out
    assert "create Secret oke-clusters/oci-user-principal" in out
    _synth_validate(root, capsys)
    identities = _objects(root, "ociclusteridentity")
    assert sorted(identities) == ["prod/oci-tenancy", "test/oci-tenancy"]
    assert identities["test/oci-tenancy"]["spec"]["allowedNamespaces"] == {"list": ["oke-clusters"]}
    ref = _objects(root, "ocimanagedcluster")["test/devops"]["spec"]["identityRef"]
    assert ref["name"] == "oci-tenancy"


def test_capoci_credentials_need_no_identity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = copy_fleet(FLEET, tmp_path / "fleet")
    (root / "clusters" / "capoci.py").write_text(
        "from fleet import CapociCredentials, Fleet\n\n\n"
        "def define(fleet: Fleet) -> None:\n"
        '    CapociCredentials(fleet, "capoci", secret="capoci-variables")\n'
    )
    out = _import(root, *_args("vanisett1-oci-iac"), capsys=capsys)
    assert "identity" not in (root / "clusters" / "devops.py").read_text()
    assert "credentials: CAPOCI's own (CapociCredentials for prod): no identity" in out
    _synth_validate(root, capsys)
    assert not _objects(root, "ociclusteridentity")


def test_oci_identity_names_the_identity_every_cluster_uses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--oci-identity ID`` overrides the default rule: even with CapociCredentials and an
    identity of the fleet's, the clusters use the named one: the fleet's of that id, else
    one the module declares under it."""
    root = copy_fleet(HYBRID, tmp_path / "hybrid")
    (root / "clusters" / "capoci.py").write_text(
        "from fleet import CapociCredentials, Fleet\n\n\n"
        "def define(fleet: Fleet) -> None:\n"
        '    CapociCredentials(fleet, "capoci", secret="capoci-variables")\n'
    )
    out = _import(root, *_args("vanisett1-oci-iac", env="test"), "--oci-identity", "team-oci",
                  capsys=capsys)  # fmt: skip
    module = (root / "clusters" / "devops.py").read_text()
    assert 'OciClusterIdentity(fleet, "team-oci", principal_secret="team-oci-principal")' in module
    assert "declares OciClusterIdentity 'team-oci' for --oci-identity" in out
    _synth_validate(root, capsys)
    assert sorted(_objects(root, "ociclusteridentity")) == [
        "prod/oci-tenancy", "test/oci-tenancy", "test/team-oci",
    ]  # fmt: skip
    ref = _objects(root, "ocimanagedcluster")["test/devops"]["spec"]["identityRef"]
    assert ref["name"] == "team-oci"
    out = _import(root, *_args("vanisett1-oci-iac", env="test"), "--oci-identity", "oci-tenancy",
                  capsys=capsys)  # fmt: skip
    assert (
        'fleet.declaration("oci-tenancy", OciClusterIdentity)'
        in (root / "clusters" / "devops.py").read_text()
    )
    assert "OciClusterIdentity 'oci-tenancy' of clusters/hybrid_sso.py:37 (--oci-identity;" in out


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (["Team_OCI"], "error: --oci-identity: 'Team_OCI' is not a DNS-1123 label"),
        (["jeedy-sso"], "error: --oci-identity: 'jeedy-sso' is declared in "
                        "clusters/hybrid_sso.py:36, and not as an OciClusterIdentity"),
        (["a", "b"], "error: --oci-identity: given twice ('a' and 'b')"),
    ],
)  # fmt: skip
def test_a_wrong_oci_identity_is_one_line_and_writes_nothing(
    given: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = copy_fleet(HYBRID, tmp_path / "hybrid")
    before = sorted(p.name for p in (root / "clusters").iterdir())
    flags = [arg for value in given for arg in ("--oci-identity", value)]
    code = main(["--root", str(root), "import", "tfstate", *_args("vanisett1-oci-iac", "test"),
                 *flags])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines()[-1].startswith(message), err
    assert sorted(p.name for p in (root / "clusters").iterdir()) == before


def _copy_as(env: str, folder: Path) -> Path:
    """terraform-oci-oke's prod state as applied for ``env`` (its own OCIDs and name)."""
    text = (REAL_OKE / "terraform-oci-oke" / "state" / "prod.tfstate").read_text()
    text = text.replace("oke-prod", f"oke-{env}").replace("aaaaaaaaexample", f"aaaaaaaa{env}ex")
    text = text.replace("amaaaaaaexampleokevcn01", f"amaaaaaa{env}okevcn01")
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{env}.tfstate"
    out.write_text(text)
    return out


def test_one_identity_for_a_cluster_in_several_environments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = copy_fleet(FLEET, tmp_path / "fleet")
    states = tmp_path / "oke" / "state"
    _import(root, str(_copy_as("test", states)), str(_copy_as("prod", states)), capsys=capsys)
    (module,) = [
        p for p in (root / "clusters").glob("*.py") if p.name not in ("platform.py", "__init__.py")
    ]
    text = module.read_text()
    assert text.count("OciClusterIdentity(") == 1 and text.count("identity=oci_oke,") == 1
    _synth_validate(root, capsys)
    assert sorted(_objects(root, "ociclusteridentity")) == ["prod/oci-oke", "test/oci-oke"]


def test_one_identity_for_several_clusters_of_a_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = json.loads((REAL_OKE / "terraform-oci-oke" / "state" / "prod.tfstate").read_text())
    second = json.dumps(state["resources"]).replace("module.oke.", "module.oke2.")
    second = second.replace("oke-prod", "oke-b-prod").replace("aaaaaaaaexample", "aaaaaaaabex")
    state["resources"].extend(json.loads(second))
    path = tmp_path / "two" / "two.tfstate"
    path.parent.mkdir()
    path.write_text(json.dumps(state))
    root = copy_fleet(FLEET, tmp_path / "fleet")
    _import(root, str(path), capsys=capsys)
    text = (root / "clusters" / "two.py").read_text()
    assert text.count("OciClusterIdentity(") == 1 and text.count("identity=oci_two,") == 2
    _synth_validate(root, capsys)
    assert sorted(_objects(root, "ociclusteridentity")) == ["prod/oci-two"]


def test_the_private_key_is_never_read_nor_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A provider block with the principal: the tenancy, user and fingerprint (not secret)
    are shown; neither the key path nor a key given inline appears in any output or file."""
    source = tmp_path / "source"
    source.mkdir()
    for path in (REAL_OKE / "terraform-oci-oke" / "source").rglob("*"):
        target = source / path.relative_to(REAL_OKE / "terraform-oci-oke" / "source")
        if path.is_dir():
            target.mkdir(exist_ok=True)
        else:
            target.write_bytes(path.read_bytes())
    key_path = str(tmp_path / "no-such-dir" / "oci_api_key_SECRET_PATH.pem")
    key_text = "-----BEGIN PRIVATE KEY-----MIIEvQIBADANBgkqSECRETCONTENT"
    (source / "provider.tf").write_text(
        'provider "oci" {\n'
        '  tenancy_ocid     = "ocid1.tenancy.oc1..aaaaaaaaprovidertenancy01"\n'
        "  user_ocid        = var.user_ocid\n"
        '  fingerprint      = "12:34:56:78:9a:bc:de:f0:12:34:56:78:9a:bc:de:f0"\n'
        f'  private_key_path = "{key_path}"\n'
        "  private_key      = var.private_key\n"
        '  region           = "eu-frankfurt-1"\n'
        "}\n\n"
        'variable "user_ocid" {\n  default = "ocid1.user.oc1..aaaaaaaaprovideruser01"\n}\n\n'
        'variable "private_key" {\n  default = ""\n  sensitive = true\n}\n'
    )
    (source / "terraform.tfvars").write_text(f'private_key = "{key_text}"\n')
    root = copy_fleet(FLEET, tmp_path / "fleet")
    state = REAL_OKE / "terraform-oci-oke" / "state" / "prod.tfstate"
    out = _import(root, str(state), "--source", str(source), capsys=capsys)
    assert "--from-literal=tenancy=ocid1.tenancy.oc1..aaaaaaaaprovidertenancy01" in out
    assert "--from-literal=user=ocid1.user.oc1..aaaaaaaaprovideruser01" in out
    assert "--from-literal=fingerprint=12:34:56:78:9a:bc:de:f0:12:34:56:78:9a:bc:de:f0" in out
    assert "tenancy_ocid at " in out and "oci-tenancy-rtenancy01" in out
    assert main(["--root", str(root), "synth"]) == 0
    assert main(["--root", str(root), "validate"]) == 0
    out += "".join(capsys.readouterr())
    written = "".join(
        p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file()
    )
    for secret in ("SECRET_PATH", "oci_api_key_SECRET", "SECRETCONTENT", "BEGIN PRIVATE KEY"):
        assert secret not in out and secret not in written

"""Input the tool used to accept, or refuse badly (issue 26, section 4): each refused through
the real command line with one line naming where (file:line, or file and field) and what,
exit 2, dist/ untouched, no traceback, no credential echoed (the table runner of
tests/test_bad_inputs.py); and what must work (a long object name, ``dist = "deploy/dist"``).

Upstream rules read (see docs/upstream-behaviour.md):

* CIDR blocks: CAPOCI v0.24.0 ``api/v1beta2/validator.go`` (``validateCIDR``,
  ``validateVCNCIDR``: Go's ``net.ParseCIDR``, which refuses a bare address), OCI's API
  reference (NSG rule ``source``/``destination``: "an IP address range in CIDR notation";
  VCN ``cidrBlocks``: "/16 to /30"), CAPOCI ``cloud/scope/nsg_reconciler.go`` (rules
  compared with ``reflect.DeepEqual``);
* ``repo_url``: argo-cd v3.5.1 ``util/git/git.go`` (``IsSSHURL``, ``IsHTTPSURL``);
* a Secret's key: kubernetes/apimachinery v0.36.3 ``pkg/util/validation/validation.go``
  ``IsConfigMapKey``;
* provider-argocd's poll and OKE's token: Go's ``time.Duration`` (int64 nanoseconds),
  CAPOCI v0.24.0 ``controllers/ocimanagedcluster_controlplane_controller.go`` (requeue
  after 180 s), oci-cli ``containerengine_cli_extended.py`` ``generate_token``.
"""

from __future__ import annotations

import ipaddress
import re
import shutil
import textwrap
from pathlib import Path

import pytest
import yaml
from crd_samples import crds_dir
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support import HYBRID, tree_hash
from test_bad_inputs import (
    ARGOCD,
    PRELUDE,
    PYPROJECT,
    Case,
    oke,
    project,  # noqa: F401  (the fixture: a small project with dist/ rendered)
    run,
    sources,
    with_argocd,
)

from fleet import SecretKeyRef
from fleet.checks.crds import PACKAGED_CRDS
from fleet.cli.main import main
from fleet.core.config import check_repo_url
from fleet.core.errors import DefinitionError
from fleet.core.manifest import MAX_FILE_NAME, Manifest
from fleet.core.validators import check_cidr


def module(body: str) -> str:
    """A definition module whose define() runs ``body`` after the prelude's project."""
    return PRELUDE + textwrap.indent(textwrap.dedent(body), "    ")


OKE_VCN_ON_TWO_LINES = module(
    """\
    OkeVcn(
        cidr="10.20.0.0",
        api_allowed_cidrs=["192.0.2.0/24"],
    )
    """
)
CIDR_LINE = OKE_VCN_ON_TWO_LINES.splitlines().index('        cidr="10.20.0.0",') + 1

POLL = ARGOCD.replace('key="authToken"),', 'key="authToken"), provider_argocd_poll_seconds={},')
CREDENTIAL_JSON = '{"client_id": "fleet", "client_secret": "hunter2-FAKE-s3cr3t"}'

CASES = [
    Case(
        "a-bare-address-is-not-a-cidr-block",
        {"clusters/broken.py": oke(network='OkeVcn(api_allowed_cidrs=["198.51.100.17"])')},
        r"clusters/broken\.py:\d+ \(OkeVcn\): api_allowed_cidrs: must be an IPv4 CIDR block "
        r"\(address/prefix length, such as 10\.0\.0\.0/16\), got str '198\.51\.100\.17': write "
        r"198\.51\.100\.17/32 for that one address$",
    ),
    Case(
        "a-cidr-block-with-host-bits-says-which-block-was-meant",
        {"clusters/broken.py": oke(network='OkeVcn(api_allowed_cidrs=["192.0.2.5/24"])')},
        r"clusters/broken\.py:\d+ \(OkeVcn\): api_allowed_cidrs: 192\.0\.2\.5/24 has bits set "
        r"past its /24: write 192\.0\.2\.0/24 for the block, or 192\.0\.2\.5/32 for the one "
        r"address$",
    ),
    Case(
        "a-vcn-cidr-is-reported-at-its-own-line-under-its-own-field",
        {"clusters/broken.py": OKE_VCN_ON_TWO_LINES},
        rf"clusters/broken\.py:{CIDR_LINE} \(OkeVcn\): cidr: must be an IPv4 CIDR block .*, "
        r"got str '10\.20\.0\.0': write 10\.20\.0\.0/32",
    ),
    Case(
        "a-vcn-larger-than-oci-allows",
        {"clusters/broken.py": oke(network='OkeVcn(cidr="10.0.0.0/8", api_allowed_cidrs=[])')},
        r"clusters/broken\.py:\d+ \(OkeVcn\): cidr: 10\.0\.0\.0/8: the prefix length must be "
        r"/16 to /30 here, got /8$",
    ),
    Case(
        "a-pods-cidr-with-host-bits",
        {"clusters/broken.py": oke(pods_cidr='"10.244.7.0/16"')},
        r"clusters/broken\.py:\d+ \(oke\): pods_cidr: 10\.244\.7\.0/16 has bits set past",
    ),
    Case(
        "a-repo-url-without-a-scheme",
        {"pyproject.toml": PYPROJECT + 'repo_url = "gitlab.example.org/platform/fleet"\n'},
        r"pyproject\.toml: \[tool\.fleet\]: repo_url: 'gitlab\.example\.org/platform/fleet' has "
        r"no scheme: git, and so ArgoCD, would read it as a folder on ArgoCD's repo server; "
        r"write https://HOST/PATH, ssh://git@HOST/PATH or git@HOST:PATH$",
    ),
    Case(
        "a-repo-url-on-the-repo-servers-disk",
        {"pyproject.toml": PYPROJECT + 'repo_url = "file:///srv/fleet"\n'},
        r"pyproject\.toml: \[tool\.fleet\]: repo_url: 'file:///srv/fleet' scheme 'file' is "
        r"not one ArgoCD clones over",
    ),
    Case(
        "a-git-path-repo-url-without-a-scheme",
        {
            "clusters/broken.py": with_argocd(
                'FleetPackage(fleet, "apps", namespace="apps", '
                'source=GitPath(path="apps", repo_url="git.example.org/apps"))\n'
            )
        },
        r"clusters/broken\.py:\d+ \(apps\): source\.repo_url: 'git\.example\.org/apps' has no "
        r"scheme",
    ),
    Case(
        "a-credential-pasted-as-a-secret-key-is-not-echoed",
        {
            "clusters/broken.py": module(
                ARGOCD.replace('key="authToken"', f"key={CREDENTIAL_JSON!r}")
            )
        },
        r"clusters/broken\.py:\d+: key: a Secret's key is a name: 1 to 253 letters, digits, "
        r"'-', '_' or '\.', not '\.' and not starting with '\.\.' \(Kubernetes' "
        r"IsConfigMapKey\); got a value of \d+ characters that is not one \(not shown: it may "
        r"be the credential itself\)$",
        hidden="hunter2-FAKE",
    ),
    Case(
        "a-poll-longer-than-go-can-parse",
        {"clusters/broken.py": module(POLL.format("10**10"))},
        r"clusters/broken\.py:\d+ \(argocd\): provider_argocd_poll_seconds: must be a whole "
        r"number of seconds from 1 to 9223372036 \(Go's longest time\.Duration: "
        r"provider-argocd would not start with a longer --poll\), got int 10000000000$",
    ),
    Case(
        "a-poll-longer-than-an-oke-token-lives",
        {
            "clusters/broken.py": oke().replace(
                "    OciManagedCluster(",
                textwrap.indent(POLL.format(600), "    ") + "    OciManagedCluster(",
            )
        },
        r"clusters/broken\.py:\d+ \(argocd\): provider_argocd_poll_seconds: 600 s is too long "
        r"while oke \(OciManagedCluster\) is registered in dev: an OKE cluster's kubeconfig "
        r"holds a presigned token that lives about 300 s, rewritten by CAPOCI every 180 s, so "
        r"ArgoCD's copy, read every poll, must lag it by at most 120 s or ArgoCD holds a dead "
        r"credential$",
    ),
    Case(
        "a-kind-given-as-a-string",
        {"clusters/broken.py": module('fleet.declaration("broken", "OpenStackProject")\n')},
        r"clusters/broken\.py:\d+: kind: the kind of 'broken' must be a declaration class "
        r"\(imported from fleet\), got the string 'OpenStackProject': pass the class itself "
        r"\(from fleet import OpenStackProject\)$",
    ),
    Case(
        "an-exception-in-a-deferred-lambda",
        {
            "clusters/broken.py": module(
                'fleet.declaration("web", MagnumCluster).defer(lambda c: c.labels["gpu"])\n'
            )
        },
        r"clusters/broken\.py:\d+: defer: the mutator called at clusters/broken\.py:\d+ raised "
        r"(KeyError|TypeError|AttributeError): .* \(applied to web\)$",
    ),
    Case(
        "an-exception-in-a-deferred-function",
        {
            "clusters/broken.py": module(
                """\
                def widen(cluster):
                    return cluster.node_count / 0

                fleet.declaration("web", MagnumCluster).defer(widen)
                """
            )
        },
        r"clusters/broken\.py:\d+: defer: the mutator called at clusters/broken\.py:\d+ raised "
        r"(ZeroDivisionError|TypeError): .* \(applied to web\)$",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_refused(
    case: Case,
    project: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = tmp_path / "project"
    shutil.copytree(project, root, ignore=shutil.ignore_patterns("__pycache__"))
    for relpath, source in case.files.items():
        (root / relpath).write_text(source)
    monkeypatch.setenv("FLEET_CRDS_DIR", str(crds_dir()))
    monkeypatch.chdir(root)
    dist_before = tree_hash(root / "dist")
    clusters_before = sources(root / "clusters")

    code, out, err = run(root, case)

    lines = [line for line in err.splitlines() if not line.startswith("synth: [")]
    assert code == case.exit_code, err
    assert len(lines) == 1, err
    assert re.match(case.message, lines[0].removeprefix("error: ")), err
    assert "Traceback" not in err + out
    assert not case.hidden or case.hidden not in err + out
    assert tree_hash(root / "dist") == dist_before
    assert sources(root / "clusters") == clusters_before


def test_a_deferred_error_is_at_the_line_of_the_lambda(
    project: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = module(
        'web = fleet.declaration("web", MagnumCluster)\nweb.defer(lambda c: int("x"))\n'
    )
    line = source.splitlines().index('    web.defer(lambda c: int("x"))') + 1
    case = Case("lambda", {"clusters/broken.py": source}, "")
    root = tmp_path / "project"
    shutil.copytree(project, root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "clusters" / "broken.py").write_text(source)
    monkeypatch.setenv("FLEET_CRDS_DIR", str(crds_dir()))
    monkeypatch.chdir(root)
    code, _, err = run(root, case)
    assert code == 2
    assert err.startswith(
        f"error: clusters/broken.py:{line}: defer: the mutator called at "
        f"clusters/broken.py:{line} raised ValueError: invalid literal for int()"
    ), err


def test_versions_without_a_lock_beside_the_crds_in_use_stop_the_synth(
    project: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """docs/guide.md: ``ArgoCd(versions=...)`` deploys another release only where the lock
    beside the CRDs in use pins it; a FLEET_CRDS_DIR with no lock pins nothing."""
    root = tmp_path / "project"
    shutil.copytree(project, root, ignore=shutil.ignore_patterns("__pycache__"))
    argocd = ARGOCD.replace(
        'key="authToken"),', 'key="authToken"),\n    versions={"provider-openstack": "v0.9.1"},'
    )
    (root / "clusters" / "broken.py").write_text(module(argocd))
    unlocked = tmp_path / "mine" / "crds"
    shutil.copytree(PACKAGED_CRDS, unlocked)
    monkeypatch.setenv("FLEET_CRDS_DIR", str(unlocked))
    monkeypatch.chdir(root)
    before = tree_hash(root / "dist")
    code, out, err = run(root, Case("versions", {}, ""))
    lines = [line for line in err.splitlines() if not line.startswith("synth: [")]
    assert code == 2, err
    assert len(lines) == 1, err
    assert re.match(
        r"error: clusters/broken\.py:\d+ \(argocd\): versions\[provider-openstack\]: 'v0\.9\.1' "
        r"deploys provider-openstack v0\.9\.1, but no crds\.lock\.yaml beside .*mine/crds pins the "
        r"release its CRDs are of",
        lines[0],
    ), err
    assert "Traceback" not in err + out
    assert tree_hash(root / "dist") == before


def test_a_valid_object_name_too_long_for_a_file_name(
    project: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 220-character project name is a valid ProviderConfig name (253 at most), but its
    file name would be longer than file systems allow: it is cut, with a hash of the
    object's identity, the same on every run."""
    root = tmp_path / "project"
    shutil.copytree(project, root, ignore=shutil.ignore_patterns("__pycache__"))
    long_name = "p" * 220
    (root / "clusters" / "broken.py").write_text(
        module(f'OpenStackProject(fleet, "long", project_name="LONG", name={long_name!r})\n')
        + "    MagnumCluster(fleet, 'lc', name='lc-{env}', environments=['dev'], "
        "project=fleet.declaration('long', OpenStackProject), template=SINGLE, "
        "flavor='m2.large', keypair='k', node_count=1)\n"
    )
    monkeypatch.setenv("FLEET_CRDS_DIR", str(crds_dir()))
    monkeypatch.chdir(root)
    code, _, err = run(root, Case("long", {}, ""))
    assert code == 0, err
    files = [p for p in (root / "dist" / "dev").rglob("*.yaml") if long_name[:50] in p.name]
    assert len(files) == 1
    name = files[0].name
    assert len(name.encode()) == MAX_FILE_NAME
    assert re.fullmatch(r"providerconfig_openstack\.crossplane\.io_p+_[0-9a-f]{12}\.yaml", name)
    assert yaml.safe_load(files[0].read_text())["metadata"]["name"] == long_name


def test_a_file_name_is_cut_deterministically_and_by_identity() -> None:
    def manifest(name: str, namespace: str = "ns") -> Manifest:
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
        body["metadata"]["namespace"] = namespace
        return Manifest("dev", body, "extra", "x.py:1")

    short = manifest("a" * 100)
    assert short.filename == f"configmap_core_ns_{'a' * 100}.yaml"
    one, two = manifest("a" * 253), manifest("a" * 252 + "b")
    assert len(one.filename) == len(two.filename) == MAX_FILE_NAME
    assert one.filename != two.filename
    assert one.filename == manifest("a" * 253).filename
    assert manifest("a" * 253, "other").filename != one.filename


def test_dist_in_a_subfolder_synths_and_validates(tmp_path: Path) -> None:
    """``dist = "deploy/dist"`` (what the error for a bad ``dist`` suggests): every
    Application's path starts with it, and the wave check finds every folder synced."""
    root = tmp_path / "fleet"
    root.mkdir()
    shutil.copytree(HYBRID / "clusters", root / "clusters")
    text = (HYBRID / "pyproject.toml").read_text()
    assert "[tool.fleet]" in text and "dist =" not in text
    (root / "pyproject.toml").write_text(
        text.replace("[tool.fleet]\n", '[tool.fleet]\ndist = "deploy/dist"\n')
    )
    assert main(["--root", str(root), "synth"]) == 0
    assert main(["--root", str(root), "validate"]) == 0
    assert not (root / "dist").exists()
    paths = [
        yaml.safe_load(p.read_text())["spec"]["source"]["path"]
        for p in (root / "deploy" / "dist" / "dev" / "bootstrap").glob("application_*.yaml")
        if "path" in yaml.safe_load(p.read_text())["spec"].get("source", {})
    ]
    assert paths and all(p.startswith("deploy/dist/dev/") for p in paths), paths


# --- the rules, over generated input ------------------------------------------------------

octets = st.integers(0, 255)
addresses = st.tuples(octets, octets, octets, octets).map(lambda t: ".".join(map(str, t)))


@settings(max_examples=400, deadline=None)
@given(addresses, st.integers(0, 32))
def test_a_cidr_block_is_accepted_exactly_in_its_network_form(address: str, prefix: int) -> None:
    text = f"{address}/{prefix}"
    network = ipaddress.IPv4Network(text, strict=False)
    if str(network.network_address) == address:
        assert str(check_cidr(text, where="w", field="f")) == text
    else:
        with pytest.raises(DefinitionError, match=f"write {network} for the block"):
            check_cidr(text, where="w", field="f")
    with pytest.raises(DefinitionError, match=f"write {address}/32 for that one address"):
        check_cidr(address, where="w", field="f")


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=20), st.from_regex(r"[0-9./ ]{1,20}", fullmatch=True)))
def test_any_text_is_a_cidr_block_or_one_definition_error(text: str) -> None:
    try:
        network = check_cidr(text, where="w", field="f")
    except DefinitionError as e:
        assert "\n" not in str(e)
    else:
        assert str(network) == text  # only the canonical form passes


SECRET_KEY = re.compile(r"[-._a-zA-Z0-9]+")  # apimachinery IsConfigMapKey, as written there


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=300), st.from_regex(r"[-._a-zA-Z0-9]{1,260}", fullmatch=True)))
@example("Y2xpZW50LWtleS1kYXRh")  # base64 of "client-key-data": a name, but credential material
def test_a_secret_key_is_what_kubernetes_accepts_and_never_shown(key: str) -> None:
    """Kubernetes' IsConfigMapKey decides, except that a name which is credential material
    (core/secrets.py: here a base64-encoded kubeconfig field) is refused as such."""
    valid = (
        bool(SECRET_KEY.fullmatch(key))
        and len(key) <= 253
        and key not in (".", "..")
        and not key.startswith("..")
    )
    try:
        SecretKeyRef(name="argocd", namespace="argocd", key=key)
    except DefinitionError as e:
        assert not valid or "credential" in str(e), str(e)
        assert len(key) < 4 or key not in str(e)
    else:
        assert valid


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.text(max_size=40),
        st.from_regex(
            r"([a-z+]{1,6}://)?([a-z]{1,5}@)?[a-z.]{1,12}[:/][a-z/]{0,12}", fullmatch=True
        ),
    )
)
def test_a_repo_url_is_one_argocd_clones(url: str) -> None:
    try:
        check_repo_url(url, where="w", field="repo_url")
    except DefinitionError as e:
        assert "\n" not in str(e)
    else:
        scheme, sep, _ = url.partition("://")
        assert (sep and scheme in ("https", "http", "ssh", "git")) or (
            not sep and re.fullmatch(r"[^@/:\s]+@[^/:\s]+:\S+", url)
        )

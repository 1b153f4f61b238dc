"""Secrets are never echoed in errors (#26, section 2).

The five paths of the issue first, each through the real command line (``fleet.cli.main``,
in-process) and each failing before the fix: the secret was on stderr, or written into a
generated module. Then the pieces of the one redaction layer (:mod:`fleet.core.redact`), and
a property test: generated secrets placed into every input field of tfvars, state,
``--source`` HCL and declarations are absent from stdout, stderr and every file written.

The parse errors are python-hcl2 8.1.4's, raised by lark 1.x (``lark/exceptions.py``:
``UnexpectedToken`` carries ``line``, ``column``, ``token`` (with ``type``) and
``expected``; ``UnexpectedCharacters`` ``char`` and ``allowed``; ``str()`` of either quotes
the token's text, which is why the message is rebuilt from the attributes).
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import string
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hcl2
import lark
import pytest
from conftest import copy_fleet
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import HYBRID, tree_hash

from fleet.cli.main import main
from fleet.core.errors import DefinitionError
from fleet.core.redact import HIDDEN, is_secret_name, looks_random, parser_error, redact, shown
from fleet.core.secrets import credential_in

FIXTURES = Path(__file__).parent / "fixtures"
PPOULIOT = FIXTURES / "terraform/real/ppouliot-magnum-clusters/state/terraform.tfstate"
EDH_DEV = FIXTURES / "tfvars/edh/k8s-edh-dev-v25/terraform.tfvars"
TOKEN = "Zq8vT3kPw9LmN2xR7sYb4HcJ6dFg"
"""An API token of no known format (random, mixed case and digits)."""


# --- running the command ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def synthesised(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture fleet with its dist/ written (so that "dist/ untouched" means something)."""
    root = copy_fleet(HYBRID, tmp_path_factory.mktemp("secrets") / "project")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["--root", str(root), "synth"]) == 0
    return root


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str
    written: dict[str, str]
    """Every file of the project created or changed by the command, by its path."""

    def leaks(self, *needles: str) -> list[str]:
        """Where any of ``needles`` appears: ``stdout``, ``stderr`` or a written file."""
        places = {"stdout": self.out, "stderr": self.err, **self.written}
        return [where for where, text in places.items() for n in needles if n and n in text]


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def run(root: Path, *argv: str) -> Run:
    before = _files(root)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--root", str(root), *argv])
    after = _files(root)
    written = {
        path: data.decode("utf-8", "replace")
        for path, data in after.items()
        if before.get(path) != data and "__pycache__" not in path
    }
    return Run(code, out.getvalue(), err.getvalue(), written)


@contextlib.contextmanager
def project_copy(synthesised: Path) -> Iterator[tuple[Path, Path]]:
    """A fresh copy of the project and a scratch folder for the inputs, both removed after."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "project"
        shutil.copytree(synthesised, root, ignore=shutil.ignore_patterns("__pycache__"))
        inputs = Path(scratch) / "inputs"
        inputs.mkdir()
        yield root, inputs


def edited_state(path: Path, edit: Callable[[dict[str, Any], dict[str, Any]], None]) -> Path:
    """PPOULIOT's state with ``edit(cluster attributes, template attributes)`` applied."""
    document: dict[str, Any] = json.loads(PPOULIOT.read_text())
    by_type = {r["type"]: r["instances"][0]["attributes"] for r in document["resources"]}
    edit(
        by_type["openstack_containerinfra_cluster_v1"],
        by_type["openstack_containerinfra_clustertemplate_v1"],
    )
    path.write_text(json.dumps(document))
    return path


def tfvars_text(edit: Callable[[str], str] = lambda t: t) -> str:
    """The EDH dev tfvars as a cluster and project the fixture fleet does not declare."""
    text = EDH_DEV.read_text().replace("k8s-edh-dev-v25", "k8s-zz-dev-v25")
    return edit(text.replace("JEEDY EDH", "ZZ TEAM"))


def refused(result: Run, *needles: str) -> str:
    """The one error line of a refused command, after checking that nothing leaked or was
    written."""
    assert result.code == 2, (result.out, result.err)
    assert result.leaks(*needles) == []
    assert result.written == {}
    assert "Traceback" not in result.err
    lines = result.err.strip().splitlines()
    assert all(line.startswith("error: ") for line in lines)
    return lines[0]


# --- the five paths of the issue ----------------------------------------------------------------


def test_a_label_key_holding_a_token_is_refused_without_the_token(
    synthesised: Path,
) -> None:
    """Before: ``registry-token=<token>`` as a label key was imported and written into the
    generated module (the repository) and dist/."""
    with project_copy(synthesised) as (root, inputs):

        def edit(cluster: dict[str, Any], template: dict[str, Any]) -> None:
            cluster["labels"][f"registry-token={TOKEN}"] = "x"

        state = edited_state(inputs / "s.tfstate", edit)
        line = refused(run(root, "import", "tfstate", "--state", f"dev={state}"), TOKEN)
    assert f"{state} openstack_containerinfra_cluster_v1.cluster_1[0]: labels: " in line
    assert "holds credential material" in line


def test_a_label_value_under_a_password_key_is_refused_without_the_value(
    synthesised: Path,
) -> None:
    """``correct horse battery staple`` is no token of any format: the key names it a
    credential, in a state's labels and in a tfvars file's."""
    phrase = "correct horse battery staple"
    with project_copy(synthesised) as (root, inputs):
        state = edited_state(
            inputs / "s.tfstate",
            lambda cluster, _: cluster["labels"].update({"registry-password": phrase}),
        )
        line = refused(run(root, "import", "tfstate", "--state", f"dev={state}"), phrase)
        assert "labels.registry-password: holds credential material" in line
        (inputs / "terraform.tfvars").write_text(
            tfvars_text(
                lambda t: t.replace(
                    "labels = {\n", f'labels = {{\n  "registry-password": "{phrase}",\n'
                )
            )
        )
        line = refused(run(root, "import", "tfvars", str(inputs)), phrase)
    assert f"{inputs / 'terraform.tfvars'}:17: labels.registry-password: holds credential" in line


def test_a_parse_error_after_a_single_quoted_password_names_the_place_not_the_text(
    synthesised: Path,
) -> None:
    """Before: python-hcl2's message quoted the token (``Unexpected token
    Token('STRING_CHARS', "'<password>'\\n}")``) and the error printed it."""
    with project_copy(synthesised) as (root, inputs):
        (inputs / "main.tf").write_text(
            f'provider "openstack" {{\n  user_name = "admin"\n  password = \'{TOKEN}\'\n}}\n'
        )
        argv = ["import", "tfstate", "--state", f"dev={PPOULIOT}", "--source", str(inputs)]
        line = refused(run(root, *argv), TOKEN, TOKEN[:8])
    assert line == (
        f"error: {inputs / 'main.tf'}:3: malformed HCL at column 14: unexpected text outside "
        'a double-quoted string (HCL quotes strings with " only); expected a value (a quoted '
        "string, a number, true, false, null, a list or an object)"
    )


def test_a_numeric_label_value_under_a_credential_key_is_not_shown(synthesised: Path) -> None:
    """Before: "label values must be quoted strings, got 8675309112358 for
    'registry_password'": the number was not a string, so it was shown."""
    with project_copy(synthesised) as (root, inputs):
        (inputs / "terraform.tfvars").write_text(
            tfvars_text(
                lambda t: t.replace(
                    "labels = {\n", 'labels = {\n  "registry_password": 8675309112358,\n'
                )
            )
        )
        line = refused(run(root, "import", "tfvars", str(inputs)), "8675309112358")
    assert line == (
        f"error: {inputs / 'terraform.tfvars'}:17: labels: label values must be quoted strings, "
        f"got {HIDDEN} for 'registry_password'"
    )


@pytest.mark.parametrize(
    "auth_url",
    [
        f"https://admin:{TOKEN}@keystone.example.org:5000/v3",
        f"https://keystone.example.org:5000/v3?password={TOKEN}",
    ],
)
def test_a_password_in_auth_url_is_refused_at_the_tfvars_line_not_at_generated_code(
    synthesised: Path, auth_url: str
) -> None:
    """Before: "sec.py:9 (generated): metadata.annotations.fleet.openstack/auth-url: the
    imported declarations render an invalid ProviderConfig": a line of a module the user
    never sees. Now the tfvars file, its line and the field."""
    with project_copy(synthesised) as (root, inputs):
        (inputs / "terraform.tfvars").write_text(
            tfvars_text(lambda t: t.replace("https://keystone.cern.ch/v3", auth_url))
        )
        line = refused(run(root, "import", "tfvars", str(inputs)), TOKEN)
    assert line.startswith(f"error: {inputs / 'terraform.tfvars'}:2: auth_url: holds credential")
    assert "(generated)" not in line


def test_the_report_shows_no_label_value_of_a_credential_name(synthesised: Path) -> None:
    """The report line of an autoscaler switch without both bounds quoted the labels raw; a
    value under a name like a credential is never quoted there either."""
    with project_copy(synthesised) as (root, inputs):

        def edit(cluster: dict[str, Any], template: dict[str, Any]) -> None:
            cluster["labels"].update(auto_scaling_enabled="true", min_node_count=TOKEN)

        state = edited_state(inputs / "s.tfstate", edit)
        result = run(root, "import", "tfstate", "--state", f"dev={state}")
    assert result.leaks(TOKEN) == []


# --- the layer's pieces -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "field"),
    [
        (8675309112358, "registry_password"),
        ("correct horse battery staple", "registry-password"),
        ("hunter2", "OS_PASSWORD"),
        ("x", "client_secret"),
        (12345, "api_key"),
        ({"user": "u", "password": "p4ss"}, "auth"),
        ({f"registry-token={TOKEN}": "x"}, "labels"),
        (TOKEN, "flavor"),
        ("ghp_" + "A1b2" * 9, "image"),
        ([f"https://u:{TOKEN}@h/"], "urls"),
    ],
)
def test_values_that_may_be_secret_are_not_shown(value: object, field: str) -> None:
    assert shown(value, field) == HIDDEN


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ("m2.large", "flavor"),
        (3, "node_count"),
        ("v1.25.3-cern.0", "kube_tag"),
        ("6f1c2b0e-3d4a-4e5f-8a9b-0c1d2e3f4a5b", "uuid"),
        ("fedora-coreos-35.20220116.3.0-x86_64", "image"),
        ("--feature-gates=CSIMigration=true --bootstrap-token-ttl=1h", "kubelet_options"),
        (True, "password"),
        (None, "token"),
    ],
)
def test_values_that_cannot_be_secret_are_shown(value: object, field: str) -> None:
    assert shown(value, field) == repr(value)


def test_names_of_credentials() -> None:
    for name in ("password", "registry-password", "OS_TOKEN", "ssh_key", "key", "passwd"):
        assert is_secret_name(name), name
    for name in ("flavor", "keypair", "node_count", "labels", "kube_tag", "name"):
        assert not is_secret_name(name), name
    assert looks_random(TOKEN) and not looks_random("ExtendedResourceToleration")


def test_a_credential_assignment_is_credential_material_and_redacted_anywhere() -> None:
    assert credential_in(f"registry-token={TOKEN}")
    assert credential_in("https://h/v3?api_key=abcdefgh")
    assert credential_in("--feature-gates=CSIMigration=true --bootstrap-token-ttl=1h") is None
    assert credential_in("secretName=my-credentials-secret") is None  # names a Secret
    assert redact(f"labels.registry-token={TOKEN}: bad") == "labels.registry-token=<redacted>: bad"
    error = DefinitionError("bad key", where="f.tfvars:3", field=f"labels.os_token={TOKEN}")
    assert TOKEN not in error.line()


HCL_ERRORS = [
    "provider \"openstack\" {\n  password = 'SECRETtok3n'\n}\n",
    'a = "x" SECRETtok3n\n',
    "a = {\n",
    'a = "SECRETtok3n\n',
    "a = 1\nSECRETtok3n\n",
    'a = { SECRETtok3n = "x" "y" }\n',
    "a = `SECRETtok3n`\n",
    "a = ~SECRETtok3n\n",
]


@pytest.mark.parametrize("text", HCL_ERRORS)
def test_a_parse_error_is_its_position_and_what_was_expected(text: str) -> None:
    with pytest.raises(lark.exceptions.UnexpectedInput) as raised:
        hcl2.parses(text)
    line, message = parser_error(raised.value)
    assert line == raised.value.line
    assert message.startswith(f"malformed HCL at column {raised.value.column}: unexpected ")
    assert "SECRET" not in message and "tok3n" not in message


# --- property: generated secrets, every field ---------------------------------------------------

ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"


def _body(alphabet: str, low: int, high: int) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=low, max_size=high)


@dataclass(frozen=True)
class Secret:
    """A value to place and the parts of it that must never appear anywhere."""

    value: str
    needles: tuple[str, ...]


def _whole(prefix: str, body: st.SearchStrategy[str]) -> st.SearchStrategy[Secret]:
    return body.map(lambda b: Secret(prefix + b, (prefix + b,)))


FORMED = st.one_of(
    _whole("ghp_", _body(ALNUM, 36, 40)),
    _whole("glpat-", _body(B64URL, 20, 26)),
    _whole("AKIA", _body(string.ascii_uppercase + string.digits, 16, 16)),
    _whole("xoxb-", _body(ALNUM + "-", 12, 20)),
    st.tuples(_body(B64URL, 10, 20), _body(B64URL, 10, 20), _body(B64URL, 8, 16)).map(
        lambda p: Secret(f"eyJ{p[0]}.eyJ{p[1]}.{p[2]}", (f"eyJ{p[0]}", f"eyJ{p[1]}"))
    ),
    st.tuples(_body(string.ascii_lowercase, 3, 8), _body(ALNUM, 8, 20)).map(
        lambda p: Secret(f"https://{p[0]}:s3Cr{p[1]}@keystone.example.org/v3", (f"s3Cr{p[1]}",))
    ),
    _body(ALNUM, 8, 20)
    .map(lambda b: Secret(f"pr0x{b}", (f"pr0x{b}",)))
    .map(lambda s: Secret(f"https://h.example.org/v3?password={s.value}", s.needles)),
)
"""Credential material recognisable by its form: refused or hidden in any field."""

WORDS = ("correct", "horse", "battery", "staple", "lantern", "orbit", "quiver", "maple")
NAMED = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=4, max_size=5).map(
        lambda w: Secret(" ".join(w), (" ".join(w),))
    ),
    st.integers(10**9, 10**15).map(lambda n: Secret(str(n), (str(n),))),
    _body(ALNUM, 24, 40).filter(looks_random).map(lambda b: Secret(b, (b,))),
)
"""Secrets of no recognisable form: only the name of their field says what they are."""
CREDENTIAL_NAMES = ("registry-password", "os_password", "api_token", "client_secret")

PROPERTY = settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _hcl(text: str) -> str:
    """``text`` as the inside of an HCL double-quoted string."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


TFVARS_STRINGS = ("auth_url", "keypair", "project_id", "region_name", "flavor", "interface")


TFVARS_PLACES = (*TFVARS_STRINGS, "label-value", "label-named", "label-key", "label-number")
TFVARS_PLACES += ("unmapped",)


@st.composite
def tfvars_case(draw: st.DrawFn, kind: str) -> tuple[str, Callable[[str], str], tuple[str, ...]]:
    """(what, an edit of the tfvars text, needles)."""
    formed, named = draw(FORMED), draw(NAMED)
    name = draw(st.sampled_from(CREDENTIAL_NAMES))
    if kind in TFVARS_STRINGS:

        def edit(t: str) -> str:
            start = t.index(f"\n{kind} = ") + len(kind) + 4
            end = t.index("\n", start)
            return t[:start] + f'"{_hcl(formed.value)}"' + t[end:]

        return kind, edit, formed.needles
    label = {
        "label-value": (f'"kube_tag_mirror": "{_hcl(formed.value)}"', formed.needles),
        "label-named": (f'"{name}": "{_hcl(named.value)}"', named.needles),
        "label-key": (f'"{name.split("_")[0]}-token={_hcl(named.value)}": "x"', named.needles),
        "label-number": (f'"{name}": {draw(st.integers(10**9, 10**15))}', ()),
        "unmapped": ("", named.needles),
    }[kind]
    if kind == "label-number":
        number = label[0].rsplit(" ", 1)[1]
        label = (label[0], (number,))
    if kind == "unmapped":
        return kind, lambda t: t + f'\n{name} = "{_hcl(named.value)}"\n', named.needles
    return kind, lambda t: t.replace("labels = {\n", f"labels = {{\n  {label[0]},\n"), label[1]


@pytest.mark.parametrize("place", TFVARS_PLACES)
@PROPERTY
@given(data=st.data())
def test_no_secret_of_a_tfvars_file_is_echoed_or_written(
    synthesised: Path, place: str, data: st.DataObject
) -> None:
    kind, edit, needles = data.draw(tfvars_case(place))
    with project_copy(synthesised) as (root, inputs):
        (inputs / "terraform.tfvars").write_text(tfvars_text(edit))
        result = run(root, "import", "tfvars", str(inputs))
    assert result.leaks(*needles) == [], (kind, result.err)
    assert "Traceback" not in result.err
    if kind != "unmapped":
        assert result.code == 2, (kind, result.out)


CLUSTER_STRINGS = ("name", "keypair", "flavor", "master_flavor", "fixed_network", "fixed_subnet")
TEMPLATE_STRINGS = ("name", "image", "dns_nameserver", "external_network_id", "http_proxy")


STATE_PLACES = (
    *(f"cluster.{a}" for a in CLUSTER_STRINGS),
    *(f"template.{a}" for a in TEMPLATE_STRINGS),
    *(f"{o}.{k}" for o in ("cluster", "template") for k in ("value", "named", "key")),
)


@st.composite
def state_case(
    draw: st.DrawFn, place: str
) -> tuple[str, Callable[[dict[str, Any], dict[str, Any]], None], tuple[str, ...]]:
    formed, named = draw(FORMED), draw(NAMED)
    name = draw(st.sampled_from(CREDENTIAL_NAMES))
    owner, what = place.split(".")

    def edit(cluster: dict[str, Any], template: dict[str, Any]) -> None:
        target = cluster if owner == "cluster" else template
        if what == "value":
            target["labels"]["kube_tag_mirror"] = formed.value
        elif what == "named":
            target["labels"][name] = named.value
        elif what == "key":
            target["labels"][f"registry-token={named.value}"] = "x"
        else:
            target[what] = formed.value

    needles = named.needles if what in ("named", "key") else formed.needles
    return place, edit, needles


@pytest.mark.parametrize("where", STATE_PLACES)
@PROPERTY
@given(data=st.data())
def test_no_secret_of_a_state_is_echoed_or_written(
    synthesised: Path, where: str, data: st.DataObject
) -> None:
    place, edit, needles = data.draw(state_case(where))
    with project_copy(synthesised) as (root, inputs):
        state = edited_state(inputs / "s.tfstate", edit)
        result = run(root, "import", "tfstate", "--state", f"dev={state}")
    assert result.leaks(*needles) == [], (place, result.err)
    assert "Traceback" not in result.err


HCL_PLACES = ("password", "token", "single-quoted", "auth_url", "user_name", "tenant_name")
HCL_PLACES += ("label-named", "keypair")


@st.composite
def hcl_case(draw: st.DrawFn, kind: str) -> tuple[str, str, tuple[str, ...]]:
    formed, named = draw(FORMED), draw(NAMED)
    provider = {
        "password": f'  password = "{_hcl(named.value)}"',
        "token": f'  token = "{_hcl(named.value)}"',
        "single-quoted": f"  password = '{named.value}'",
        "auth_url": f'  auth_url = "{_hcl(formed.value)}"',
        "user_name": f'  user_name = "{_hcl(formed.value)}"',
        "tenant_name": f'  tenant_name = "{_hcl(formed.value)}"',
    }.get(kind, "")
    resource = {
        "label-named": f'  labels = {{\n    registry-password = "{_hcl(named.value)}"\n  }}',
        "keypair": f'  keypair = "{_hcl(formed.value)}"',
    }.get(kind, "")
    text = (
        f'provider "openstack" {{\n{provider}\n}}\n'
        f'resource "openstack_containerinfra_cluster_v1" "cluster_1" {{\n  name = "cluster_1"\n'
        f"{resource}\n}}\n"
    )
    needles = (
        formed.needles
        if kind in ("auth_url", "user_name", "tenant_name", "keypair")
        else named.needles
    )
    return kind, text, needles


@pytest.mark.parametrize("place", HCL_PLACES)
@PROPERTY
@given(data=st.data())
def test_no_secret_of_a_source_configuration_is_echoed_or_written(
    synthesised: Path, place: str, data: st.DataObject
) -> None:
    kind, text, needles = data.draw(hcl_case(place))
    with project_copy(synthesised) as (root, inputs):
        (inputs / "main.tf").write_text(text)
        argv = ["import", "tfstate", "--state", f"dev={PPOULIOT}", "--source", str(inputs)]
        result = run(root, *argv)
    assert result.leaks(*needles) == [], (kind, result.err)
    assert "Traceback" not in result.err


DECLARATION_PLACES = ("keypair", "flavor", "label-value", "label-named", "label-key")
DECLARATION_PLACES += ("label-number", "auth_url", "project_name")


@st.composite
def declaration_case(draw: st.DrawFn, kind: str) -> tuple[str, str, tuple[str, ...]]:
    formed, named = draw(FORMED), draw(NAMED)
    name = draw(st.sampled_from(CREDENTIAL_NAMES))
    number = draw(st.integers(10**9, 10**15))
    cluster = {"keypair": repr("k"), "flavor": repr("m2.large"), "labels": "{}"}
    project = {"project_name": repr("ZZ TEAM"), "auth_url": repr("https://k.example.org/v3")}
    needles = formed.needles
    if kind in ("keypair", "flavor"):
        cluster[kind] = repr(formed.value)
    elif kind in ("auth_url", "project_name"):
        project[kind] = repr(formed.value)
    elif kind == "label-value":
        cluster["labels"] = repr({"kube_tag_mirror": formed.value})
    elif kind == "label-named":
        cluster["labels"], needles = repr({name: named.value}), named.needles
    elif kind == "label-key":
        cluster["labels"], needles = repr({f"x-token={named.value}": "x"}), named.needles
    else:
        cluster["labels"], needles = repr({name: number}), (str(number),)
    source = (
        "from clusters._templates import SINGLE_1_25_3\n"
        "from fleet import Fleet, MagnumCluster, OpenStackProject\n\n\n"
        "def define(fleet: Fleet) -> None:\n"
        "    project = OpenStackProject(fleet, 'zz', "
        + ", ".join(f"{k}={v}" for k, v in project.items())
        + ")\n"
        "    MagnumCluster(fleet, 'zz-web', name='k8s-zz-{env}', environments=['dev'], "
        "project=project, template=SINGLE_1_25_3, node_count=1, "
        + ", ".join(f"{k}={v}" for k, v in cluster.items())
        + ")\n"
    )
    return kind, source, needles


@pytest.mark.parametrize("place", DECLARATION_PLACES)
@PROPERTY
@given(data=st.data())
def test_no_secret_of_a_declaration_is_echoed_or_written(
    synthesised: Path, place: str, data: st.DataObject
) -> None:
    kind, source, needles = data.draw(declaration_case(place))
    with project_copy(synthesised) as (root, _):
        (root / "clusters" / "zz.py").write_text(source)
        before = tree_hash(root / "dist")
        result = run(root, "synth")
        after = tree_hash(root / "dist")
    assert result.leaks(*needles) == [], (kind, result.err)
    assert "Traceback" not in result.err
    assert result.code == 2, (kind, result.out)
    assert after == before

"""Input is data, never code: `fleet import` writes Python from state and tfvars text, and
nothing of that text may run (#26, section 1).

A Terraform state is input from outside (a shared backend, a colleague's laptop), and a
generated module is trusted code from then on. Three layers are tested here:

- what Terraform could never write (a line break in a resource's name or address, an
  attribute name no provider schema has) is refused when the state or configuration is
  read (hashicorp/terraform v1.15.9 ``internal/configs/resource.go``,
  ``internal/addrs/instance_key.go``, ``internal/configs/configschema/internal_validate.go``;
  hashicorp/hcl v2.24.0 ``hclsyntax/public.go``; docs/upstream-behaviour.md);
- every piece of text that reaches a module goes through ``fleet.core.pysource``
  (literals, comments, docstrings, names), property-tested with arbitrary text here;
- every generated module is parsed and checked before anything writes or runs it
  (``fleet.codegen.source_check``; its refusals are tested in test_source_check.py).

End to end, a payload that writes a sentinel file is fed through each field that reaches
generated code: the import either refuses it (exit 2, one line, nothing written) or
imports it as the value it is, and the sentinel never appears.
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import shutil
import tempfile
import tokenize
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from conftest import copy_fleet
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support import HYBRID, tree_hash

from fleet.cli.main import main
from fleet.clouds.importer import SharedDecl
from fleet.clouds.magnum.importer.catalog import TemplateDecl, TemplateRef
from fleet.clouds.magnum.importer.catalog import templates_module as catalog_module
from fleet.clouds.magnum.importer.code import CODE
from fleet.clouds.magnum.importer.importer import MagnumImporter
from fleet.clouds.magnum.importer.template_derivation import TemplateSpec
from fleet.clouds.magnum.importer.tfvars import Connection, ImportedCluster, ImportedNodeGroup
from fleet.clouds.magnum.importer.tfvars_codegen import (
    ClusterDecl,
    Declaration,
    ProjectDecl,
)
from fleet.clouds.magnum.importer.tfvars_codegen import cluster_module as tfvars_module
from fleet.clouds.magnum.importer.tfvars_codegen import (
    templates_module as derived_templates_module,
)
from fleet.codegen.files import earlier_comments
from fleet.codegen.layout import FLEET, GENERATED_STATE
from fleet.codegen.source_check import GeneratedCodeError, check_source
from fleet.core.errors import DefinitionError
from fleet.core.pysource import (
    Call,
    Name,
    NamePattern,
    UnsafeSource,
    comment,
    comment_text,
    docstring,
    identifier,
    py_str,
)
from fleet.importers.generated import check_generated, shape
from fleet.importers.registry import cloud_importers
from fleet.importers.state_modules import ClusterCall, cluster_module, emptied_module
from fleet.terraform.names import is_terraform_name
from fleet.terraform.state import read_state_file as read_state

SHAPE = shape(cloud_importers())
"""The allow-list of every importer's generated modules."""
SCHEMAS = {t: spec.schema() for t, spec in MagnumImporter().specs.items()}
"""The types the Magnum importer reads the states with."""


def templates_module(templates: list[TemplateDecl]) -> str:
    """The Magnum importer's template catalog module."""
    return catalog_module(templates, CODE.calls)


def read_state_file(path: Path) -> object:
    """A state read with the Magnum importer's types."""
    return read_state(path, SCHEMAS)


REAL = Path(__file__).parent / "fixtures" / "terraform" / "real"
PPOULIOT = REAL / "ppouliot-magnum-clusters" / "state" / "terraform.tfstate"
PACKAGE = "clusters"

# --- arbitrary text ----------------------------------------------------------------------------

SPECIAL = (
    "\n",
    "\r",
    "\r\n",
    "\x00",
    "\x0c",
    "\t",
    "\x85",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\ud800",
    "\udfff",
    '"',
    "'",
    '"""',
    "'''",
    "\\",
    "\\n",
    "{",
    "}",
    "#",
    "é",
    "\U0001f600",
    "\n# x\nimport os\n",
    '"); import os; ("',
    "__import__",
)
"""Pieces that break naive quoting: line breaks Python or Unicode knows, NUL, a BOM, lone
surrogates (Python allows them in a str), quotes, backslashes, braces, comment and code."""

TEXT = st.lists(
    st.one_of(st.sampled_from(SPECIAL), st.characters(exclude_categories=())), max_size=12
).map("".join)
"""Arbitrary text, surrogates included, weighted towards :data:`SPECIAL`."""
LABELS = st.dictionaries(TEXT, TEXT, max_size=4)
FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""For the quoting functions and the readers (about 1 ms an example)."""
MODULES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""For whole modules generated, checked and run (about 15 ms an example)."""


# --- running a generated module with nothing but its declarations ---------------------------


@dataclass
class Recorded:
    """One call a generated module made: the class or function, and its arguments."""

    callee: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


@dataclass
class StubFleet:
    """``define``'s argument: records ``fleet.declaration`` look-ups, has nothing else."""

    lookups: list[tuple[str, Any]] = field(default_factory=list)

    def declaration(self, construct_id: str, cls: Any) -> Recorded:
        self.lookups.append((construct_id, cls))
        return Recorded("declaration", (construct_id, cls), {})


def run_module(text: str, modules: Mapping[str, Mapping[str, Any]] | None = None) -> list[Recorded]:
    """Execute a generated module with no builtins but an ``__import__`` that gives stubs
    for ``fleet``'s declaration classes (and ``modules``), then call its ``define``: any
    other name, attribute or call fails. Returns every call made, in order."""
    calls: list[Recorded] = []

    def stub(name: str) -> Callable[..., Recorded]:
        def call(*args: Any, **kwargs: Any) -> Recorded:
            recorded = Recorded(name, args, kwargs)
            calls.append(recorded)
            return recorded

        return call

    fleet = SimpleNamespace(**{name: stub(name) for name in SHAPE.fleet_names})
    given = {name: SimpleNamespace(**values) for name, values in (modules or {}).items()}

    def importer(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "fleet":
            return fleet
        if name in given:
            return given[name]
        raise ImportError(name)

    namespace: dict[str, Any] = {"__builtins__": {"__import__": importer}}
    exec(compile(text, "<generated>", "exec"), namespace)
    if "define" in namespace:
        namespace["define"](StubFleet())
    return calls


def comments_of(text: str) -> list[str]:
    """The text of every comment of a module, as the tokenizer reads it."""
    return [
        token.string
        for token in tokenize.generate_tokens(io.StringIO(text).readline)
        if token.type == tokenize.COMMENT
    ]


def checked(text: str, *, catalog: bool = False) -> str:
    check_source(text, SHAPE, package=PACKAGE, catalog=catalog, where="generated.py")
    return text


# --- the quoting functions --------------------------------------------------------------------


@FAST
@given(TEXT)
def test_a_string_literal_is_printable_ascii_and_reads_back_as_the_text(text: str) -> None:
    literal = py_str(text)
    assert all(" " <= c <= "~" for c in literal)
    node = ast.parse(literal, mode="eval").body
    assert isinstance(node, ast.Constant)
    assert node.value == text


@FAST
@given(TEXT)
def test_a_docstring_is_one_line_and_reads_back_as_the_text(text: str) -> None:
    source = docstring(text)
    assert all(" " <= c <= "~" for c in source)
    module = ast.parse(source + "\n")
    assert ast.get_docstring(module, clean=False) == text
    assert len(module.body) == 1


@FAST
@given(TEXT)
def test_a_comment_stays_one_comment_line_and_escaping_it_again_changes_nothing(
    text: str,
) -> None:
    line = comment(text, "    ")
    assert "\n" not in line
    assert all(" " <= c <= "~" for c in line)
    source = f"x = 1\n{line}\ny = 2\n"
    assert [type(n) for n in ast.parse(source).body] == [ast.Assign, ast.Assign]
    assert comments_of(source) == [line.lstrip()]
    assert comment_text(comment_text(text)) == comment_text(text)


@FAST
@given(TEXT)
def test_a_name_is_a_python_identifier_or_refused(text: str) -> None:
    try:
        name = identifier(text)
    except UnsafeSource as e:
        assert "\n" not in str(e)
        return
    node = ast.parse(name, mode="eval").body
    assert isinstance(node, ast.Name)
    assert node.id == text
    assert text.isascii()
    assert not (text.startswith("__") and text.endswith("__"))


@pytest.mark.parametrize(
    "text",
    [
        "if",
        "None",
        "match",
        "case",
        "_",
        "type",
        "__import__",
        "__builtins__",
        "é",
        "a-b",
        "1a",
        "",
    ],
)
def test_keywords_soft_keywords_dunders_and_non_ascii_names_are_refused(text: str) -> None:
    with pytest.raises(UnsafeSource):
        Name(text)


@FAST
@given(TEXT, TEXT, st.sampled_from(["zone", "name"]))
def test_a_name_pattern_evaluates_to_its_texts_around_the_variable(
    prefix: str, suffix: str, variable: str
) -> None:
    pattern = NamePattern(prefix=prefix, target=Name(variable), suffix=suffix)
    node = ast.parse(pattern.code, mode="eval").body
    assert isinstance(node, ast.JoinedStr)
    formatted = [v for v in node.values if isinstance(v, ast.FormattedValue)]
    assert [ast.unparse(v.value) for v in formatted] == [variable]
    code = compile(ast.Expression(node), "<pattern>", "eval")
    assert eval(code, {"__builtins__": {}}, {variable: "Z"}) == f"{prefix}Z{suffix}"


def test_a_call_with_a_keyword_that_is_not_a_name_cannot_be_built() -> None:
    with pytest.raises(UnsafeSource):
        Call(callee="MagnumCluster", keywords=(("a=1, b", 1),))
    with pytest.raises(UnsafeSource):
        Call(callee="print(1) or MagnumCluster")


# --- the generators: any text in every field ----------------------------------------------------


def node_group(name: str, zone: str, group_id: str) -> tuple[tuple[str, Any], ...]:
    return (
        ("name", name),
        ("flavor", "m1.large"),
        ("node_count", 2),
        ("availability_zone", zone),
        ("external_name", group_id),
    )


@MODULES
@given(
    title=TEXT,
    construct_id=TEXT,
    name=TEXT,
    labels=LABELS,
    lines=st.lists(TEXT, max_size=3),
    project_id=TEXT,
    reused=TEXT,
    reused_from=TEXT,
    prefix=TEXT,
    suffix=TEXT,
    zones=st.lists(TEXT.filter(bool), min_size=3, max_size=4, unique=True),
)
def test_a_state_import_module_holds_the_values_and_runs_nothing_else(
    title: str,
    construct_id: str,
    name: str,
    labels: dict[str, str],
    lines: list[str],
    project_id: str,
    reused: str,
    reused_from: str,
    prefix: str,
    suffix: str,
    zones: list[str],
) -> None:
    groups = tuple(
        node_group(f"{prefix}{zone}{suffix}", zone, f"id-{i}") for i, zone in enumerate(zones)
    )
    cluster = ClusterCall(
        construct_id=construct_id,
        keywords=(
            ("name", name),
            ("environments", ["dev"]),
            ("project", Name("project")),
            ("template", Name("TEMPLATE")),
            ("labels", labels),
            ("external_name", "uuid"),
        ),
        pools=groups,
        comment=tuple(lines),
    )
    projects = [
        SharedDecl(
            variable="project",
            cls="OpenStackProject",
            call=Call(
                callee="OpenStackProject",
                positional=(FLEET, project_id),
                keywords=(("project_name", project_id),),
            ),
        ),
        SharedDecl(
            variable="other", cls="OpenStackProject", reused=reused, reused_from=reused_from
        ),
    ]
    text = cluster_module(
        title=title,
        shared=projects,
        clusters=[cluster],
        imports={f"{PACKAGE}._imported_templates": {"TEMPLATE"}},
        code=CODE,
    ).text
    checked(text)
    tree = ast.parse(text)
    about = f" ({title})" if title else ""
    assert ast.get_docstring(tree, clean=False) == f"{GENERATED_STATE}{about}: re-import to update."
    expected = [comment(f"Declared in {reused_from}.")] + [comment(x) for x in lines]
    found = [c for c in comments_of(text) if c != "# noqa: E501"]  # a long literal's mark
    assert len(found) == len(expected)
    assert all(c in (e, f"{e}  # noqa: E501") for c, e in zip(found, expected, strict=True))
    calls = run_module(text, {f"{PACKAGE}._imported_templates": {"TEMPLATE": "T"}})
    by_callee = {c.callee: c for c in calls}
    assert [c.callee for c in calls].count("MagnumCluster") == 1
    assert by_callee["OpenStackProject"].args[1] == project_id
    magnum = by_callee["MagnumCluster"]
    assert magnum.args[1] == construct_id
    assert magnum.kwargs["name"] == name
    assert magnum.kwargs["template"] == "T"
    assert magnum.kwargs.get("labels", {}) == labels
    made = [(g.kwargs["name"], g.kwargs["availability_zone"]) for g in magnum.kwargs["node_groups"]]
    assert made == [(f"{prefix}{zone}{suffix}", zone) for zone in zones]
    assert {c.callee for c in calls} <= SHAPE.calls


@MODULES
@given(
    names=st.lists(TEXT, min_size=1, max_size=3),
    labels=LABELS,
    lines=st.lists(st.lists(TEXT, max_size=2), min_size=3, max_size=3),
)
def test_a_template_catalog_holds_the_values_and_its_comments_survive_a_re_import(
    names: list[str], labels: dict[str, str], lines: list[list[str]]
) -> None:
    templates = [
        TemplateDecl(
            variable=f"TEMPLATE_{i}",
            keywords=(("name", name), ("kubernetes_version", "v1.27.8"), ("base_labels", labels)),
            comment=tuple(lines[i]),
        )
        for i, name in enumerate(names)
    ]
    text = checked(templates_module(templates), catalog=True)
    calls = run_module(text)
    assert [c.kwargs["name"] for c in calls] == names
    assert all(c.kwargs["base_labels"] == labels for c in calls)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "_imported_templates.py"
        path.write_text(text, encoding="utf-8")
        earlier = earlier_comments(path)
    for i in range(len(names)):
        assert earlier[f"TEMPLATE_{i}"] == tuple(comment_text(x).rstrip() for x in lines[i])
    again = [
        TemplateDecl(variable=t.variable, keywords=t.keywords, comment=earlier[t.variable])
        for t in templates
    ]
    assert templates_module(again) == text  # escaping twice changes nothing: same bytes


@MODULES
@given(title=TEXT, moved=st.lists(TEXT, max_size=3))
def test_an_emptied_module_declares_nothing_whatever_the_paths(
    title: str, moved: list[str]
) -> None:
    text = checked(emptied_module(title=title, moved_to=moved))
    assert run_module(text) == []
    assert len(comments_of(text)) == len(moved)


def imported_cluster(
    name: str, template: str, labels: dict[str, str], group: str, project: str
) -> ImportedCluster:
    return ImportedCluster(
        source="x.tfvars",
        community="c",
        name=name,
        template=template,
        flavor="m1.large",
        keypair="key",
        node_count=1,
        master_count=None,
        master_flavor=None,
        create_timeout_minutes=None,
        merge_labels=None,
        labels=labels,
        node_groups=(
            ImportedNodeGroup(name=group, flavor="m1.small", node_count=1, labels=labels),
        ),
        connection=Connection(project_name=project, region=project),
        unmapped=(),
        values={},
        lines={},
    )


NAMEISH = st.one_of(TEXT, st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True))
"""Text that is sometimes a Python name."""


@MODULES
@given(
    title=TEXT,
    name=TEXT,
    labels=LABELS,
    group=TEXT,
    project=TEXT,
    reused_from=TEXT,
    variable=NAMEISH,
)
def test_a_tfvars_import_module_holds_the_values_and_runs_nothing_else(
    title: str,
    name: str,
    labels: dict[str, str],
    group: str,
    project: str,
    reused_from: str,
    variable: str,
) -> None:
    cluster = imported_cluster(name, "tpl", labels, group, project)
    connection = cluster.connection
    decl = ClusterDecl(
        cluster=cluster,
        environment="dev",
        template=TemplateRef(module=f"{PACKAGE}._imported_templates", variable=variable),
        labels=labels,
        allow_extra_labels=True,
    )
    projects = [
        ProjectDecl(variable="project", connection=connection),
        ProjectDecl(variable="other", connection=connection, reused=name, reused_from=reused_from),
    ]
    try:
        text = checked(
            tfvars_module(
                title=title,
                projects=projects,
                declarations=[
                    Declaration(construct_id=name, name=name, members=(decl,), project="project")
                ],
                observe=False,
            )
        )
    except UnsafeSource:  # the template's variable: not a name
        assert not _is_name(variable)
        return
    except GeneratedCodeError as e:  # a name the module has already, or a builtin
        assert variable in {
            "Fleet",
            "fleet",
            "project",
            "other",
            *SHAPE.fleet_names,
            *dir(builtins),
        }
        assert "\n" not in str(e)
        return
    calls = run_module(text, {f"{PACKAGE}._imported_templates": {variable: "T"}})
    magnum = next(c for c in calls if c.callee == "MagnumCluster")
    assert magnum.kwargs["name"] == name
    assert magnum.kwargs.get("labels", {}) == labels
    assert magnum.kwargs["template"] == "T"
    (node_group,) = magnum.kwargs["node_groups"]
    assert node_group.kwargs["name"] == group
    project_call = next(c for c in calls if c.callee == "OpenStackProject")
    assert project_call.kwargs["project_name"] == project


def _is_name(text: str) -> bool:
    try:
        identifier(text)
    except UnsafeSource:
        return False
    return True


@MODULES
@given(name=TEXT, labels=LABELS, optional=st.lists(TEXT, max_size=3), uuid=TEXT)
@example(name="t", labels={"k" * 120: ""}, optional=[], uuid="u")  # was an IndexError
def test_a_derived_template_catalog_holds_the_values(
    name: str, labels: dict[str, str], optional: list[str], uuid: str
) -> None:
    spec = TemplateSpec(
        name=name,
        kubernetes_version="v1.27.8",
        base_labels=labels,
        optional_labels=tuple(optional),
        uuid=uuid,
    )
    text = checked(derived_templates_module([spec]), catalog=True)
    (call,) = run_module(text)
    assert call.kwargs["name"] == name
    assert call.kwargs["base_labels"] == dict(sorted(labels.items()))
    assert call.kwargs["optional_labels"] == sorted(optional)
    assert call.kwargs["uuid"] == uuid


# --- reading: what Terraform never writes is refused -----------------------------------------


def v4_state(**resource: Any) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(PPOULIOT.read_text())
    for item in document["resources"]:
        if item["type"] == "openstack_containerinfra_cluster_v1":
            item.update(resource)
    return document


def read_text_state(document: dict[str, Any], name: str = "state.tfstate") -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_text(json.dumps(document), encoding="utf-8")
        read_state_file(path)


@FAST
@given(TEXT)
def test_a_resource_name_terraform_never_writes_is_refused_on_one_line(name: str) -> None:
    # The name as a JSON reader gets it back (two escaped surrogates are one character).
    read = json.loads(json.dumps(name))
    try:
        read_text_state(v4_state(name=name))
    except DefinitionError as e:
        assert not is_terraform_name(read)
        line = str(e)
        assert "\n" not in line and line.isprintable()
        assert py_str(read) in line
        return
    assert is_terraform_name(read)


@FAST
@given(TEXT)
def test_a_shown_address_with_a_character_terraform_escapes_is_refused(text: str) -> None:
    document = {
        "format_version": "1.0",
        "values": {
            "root_module": {
                "resources": [
                    {
                        "address": f"openstack_containerinfra_cluster_v1.c{text}",
                        "mode": "managed",
                        "type": "openstack_containerinfra_cluster_v1",
                        "name": "c",
                        "values": {"name": "c", "id": "u"},
                    }
                ]
            }
        },
    }
    try:
        read_text_state(document)
    except DefinitionError as e:
        assert not text.isprintable()
        assert "\n" not in str(e) and str(e).isprintable()
        return
    assert text.isprintable()


def test_an_attribute_name_no_provider_schema_has_is_refused() -> None:
    document = v4_state()
    for item in document["resources"]:
        if item["type"] == "openstack_containerinfra_cluster_v1":
            item["instances"][0]["attributes"]["name\nimport os"] = "x"
    with pytest.raises(DefinitionError, match=r'attribute name "name\\nimport os"'):
        read_text_state(document)


def test_a_module_path_with_a_line_break_is_refused() -> None:
    with pytest.raises(DefinitionError, match=r"module\.a\\nimport os"):
        read_text_state(v4_state(module="module.a\nimport os"))


# --- end to end: the command ------------------------------------------------------------------


@pytest.fixture(scope="module")
def synthesised(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture fleet with its dist/ written (so that "dist/ untouched" means something)."""
    root = copy_fleet(HYBRID, tmp_path_factory.mktemp("injection") / "project")
    assert main(["--root", str(root), "synth"]) == 0
    return root


@pytest.fixture
def project(synthesised: Path, tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "project"
    shutil.copytree(synthesised, root)
    yield root


def payload(
    sentinel: Path, *, indents: tuple[str, ...] = ("", "    "), tail: str = "\n# x\nimport os\n"
) -> str:
    """Text that, pasted raw into a module, writes ``sentinel`` (at each of ``indents``:
    at module level, in ``define``), then ``tail``."""
    code = f"import pathlib; pathlib.Path({str(sentinel)!r}).touch()"
    return "".join(f"\n{indent}{code} #" for indent in indents) + tail


def run(root: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["--root", str(root), *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_line_break_in_a_resource_address_is_refused_and_nothing_runs_or_is_written(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reproduction: a v4 state whose cluster resource's name holds a line break and
    Python that writes a file. Before: the text after the break became code in a comment of
    the generated module and ran in the import's render check."""
    sentinel = tmp_path / "ran"
    state = tmp_path / "evil.tfstate"
    name = "cluster_1" + payload(sentinel)
    state.write_text(json.dumps(v4_state(name=name)))
    before = tree_hash(project)
    code, out, err = run(project, ["import", "tfstate", "--state", f"dev={state}"], capsys)
    assert code == 2
    assert out == ""
    (line,) = err.strip().split("\n")
    assert str(state) in line
    assert py_str(name) in line  # the address, escaped
    assert not sentinel.exists()
    assert tree_hash(project) == before  # clusters/ and dist/ untouched


def test_the_same_through_terraform_show_json(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sentinel = tmp_path / "ran"
    state = tmp_path / "evil.json"
    address = "openstack_containerinfra_cluster_v1.c" + payload(sentinel)
    state.write_text(
        json.dumps(
            {
                "format_version": "1.0",
                "values": {
                    "root_module": {
                        "resources": [
                            {
                                "address": address,
                                "mode": "managed",
                                "type": "openstack_containerinfra_cluster_v1",
                                "name": "c",
                                "values": {"name": "c", "id": "u"},
                            }
                        ]
                    }
                },
            }
        )
    )
    before = tree_hash(project)
    code, _, err = run(project, ["import", "tfstate", "--state", f"dev={state}"], capsys)
    assert code == 2
    (line,) = err.strip().split("\n")
    assert str(state) in line and py_str(address) in line
    assert not sentinel.exists()
    assert tree_hash(project) == before


def test_a_resource_label_terraform_refuses_in_the_configuration_is_refused(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "tf"
    source.mkdir()
    (source / "main.tf").write_text(
        'resource "openstack_containerinfra_cluster_v1" "a\\n# x\\nimport os" {\n  name = "a"\n}\n'
    )
    before = tree_hash(project)
    argv = ["import", "tfstate", "--state", f"dev={PPOULIOT}", "--source", str(source)]
    code, _, err = run(project, argv, capsys)
    assert code == 2
    (line,) = err.strip().split("\n")
    assert f"{source / 'main.tf'}:1" in line and "resource name" in line
    assert tree_hash(project) == before


def edited(
    tmp_path: Path, name: str, cluster: Mapping[str, Any], template: Mapping[str, Any]
) -> Path:
    document: dict[str, Any] = json.loads(PPOULIOT.read_text())
    for item in document["resources"]:
        attributes = item["instances"][0]["attributes"]
        if item["type"] == "openstack_containerinfra_cluster_v1":
            attributes.update(cluster)
        if item["type"] == "openstack_containerinfra_clustertemplate_v1":
            attributes.update(template)
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def values_case(sentinel: Path) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(id, state file name, cluster attributes, template attributes) of each case."""
    evil = payload(sentinel)
    (labels,) = [
        r["instances"][0]["attributes"]["labels"]
        for r in json.loads(PPOULIOT.read_text())["resources"]
        if r["type"] == "openstack_containerinfra_cluster_v1"
    ]
    return [
        ("file-name", "st\"\"\"ate'''.tfstate", {}, {}),
        ("label-value", "s.tfstate", {"labels": {**labels, "kube_tag": "v1" + evil}}, {}),
        ("label-key", "s.tfstate", {"labels": {**labels, "k" + evil: "v"}}, {}),
        # A template's comment is at module level (and Magnum takes 255 characters).
        ("template-name", "s.tfstate", {}, {"name": "tpl" + payload(sentinel, indents=("",))}),
        ("template-image", "s.tfstate", {}, {"image": "img" + evil + '"""'}),
    ]


@pytest.mark.parametrize(
    "case", ["file-name", "label-value", "label-key", "template-name", "template-image"]
)
def test_a_payload_in_a_value_terraform_can_write_is_imported_as_that_value(
    case: str, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Label keys and values, a template's name and attributes, the state file's name are
    data Terraform (or a person) can write, line breaks and quotes included: the import
    writes them as literals (escaped in comments and the docstring), the modules pass the
    check, synth renders them byte for byte, and the payload never runs."""
    sentinel = tmp_path / "ran"
    _, file_name, cluster, template = next(c for c in values_case(sentinel) if c[0] == case)
    state = edited(tmp_path, file_name, cluster, template)
    code, _, err = run(project, ["import", "tfstate", "--state", f"dev={state}"], capsys)
    assert not sentinel.exists()
    assert code == 0, err
    written = {
        p: p.read_text()
        for p in (project / "clusters").glob("*.py")
        if p.read_text().startswith('"""Generated by')
    }
    check_generated(written, PACKAGE)
    assert main(["--root", str(project), "synth"]) == 0
    assert not sentinel.exists()
    rendered = [yaml.safe_load(p.read_text()) for p in (project / "dist" / "dev").rglob("*.yaml")]
    clusters = [o for o in rendered if o and o.get("kind") == "ClusterV1"]
    imported = next(
        o
        for o in clusters
        if o["metadata"]["annotations"].get("crossplane.io/external-name")
        == "57c5eba4-c277-408e-8765-bc6ad60ea1b0"
    )
    if "labels" in cluster:
        assert imported["spec"]["forProvider"]["labels"] == cluster["labels"]
    if case == "file-name":
        module = next(iter(p for p in written if p.stem != "_imported_templates"))
        docstring_text = ast.get_docstring(ast.parse(written[module]), clean=False)
        assert docstring_text is not None and file_name in docstring_text
    if template:
        catalog = written[project / "clusters" / "_imported_templates.py"]
        (call,) = [c for c in run_module(catalog) if c.callee == "ClusterTemplate"]
        key = "name" if "name" in template else "image"
        assert call.kwargs[key] == template[key]


def test_a_payload_in_the_configurations_project_name_is_a_literal(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--source``'s provider block names the project: it reaches the module as the
    OpenStackProject's project_name literal, and the render carries it unchanged."""
    sentinel = tmp_path / "ran"
    source = tmp_path / "tf"
    source.mkdir()
    name = "p" + payload(sentinel).replace("\\", "/").replace("\n", " ").replace('"', "'")
    (source / "main.tf").write_text(
        f'provider "openstack" {{\n  tenant_name = "{name}"\n}}\n'
        'resource "openstack_containerinfra_cluster_v1" "cluster_1" {\n  name = "cluster_1"\n}\n'
    )
    argv = ["import", "tfstate", "--state", f"dev={PPOULIOT}", "--source", str(source)]
    code, _, err = run(project, argv, capsys)
    assert not sentinel.exists()
    assert code == 0, err
    (module,) = [
        p for p in (project / "clusters").glob("*.py") if p.stem == "ppouliot_magnum_clusters"
    ]
    calls = run_module(
        check_and_return(module.read_text()),
        {f"{PACKAGE}._imported_templates": {"CLUSTERTEMPLATE_1": "T"}},
    )
    (openstack_project,) = [c for c in calls if c.callee == "OpenStackProject"]
    assert openstack_project.kwargs["project_name"] == name


def check_and_return(text: str) -> str:
    check_generated({Path("m.py"): text}, PACKAGE)
    return text


# --- each layer holds alone ---------------------------------------------------------------------


def evil_state(tmp_path: Path, sentinel: Path) -> Path:
    """A state whose cluster's resource name ends with Python valid inside ``define``."""
    state = tmp_path / "evil.tfstate"
    name = "cluster_1" + payload(sentinel, indents=("    ",), tail="")
    state.write_text(json.dumps(v4_state(name=name)))
    return state


def test_without_the_readers_check_the_address_is_an_escaped_comment(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Were the state reader to let the name through, the comment quoting still holds: the
    address is one escaped comment line, and nothing runs."""
    import fleet.terraform.state as tfstate

    monkeypatch.setattr(tfstate, "check_name", lambda *args, **kwargs: None)
    sentinel = tmp_path / "ran"
    state = evil_state(tmp_path, sentinel)
    code, _, err = run(project, ["import", "tfstate", "--state", f"dev={state}"], capsys)
    assert code == 0, err
    assert not sentinel.exists()
    text = (project / "clusters" / "evil.py").read_text()
    (line,) = [c for c in comments_of(text) if "openstack_containerinfra_cluster_v1" in c]
    assert "\\n    import pathlib" in line


def test_without_the_reader_and_the_quoting_the_check_refuses_the_module(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Were a generator to paste the address raw (the bug this fixes), the check of the
    module refuses it before it is written or run: exit 2, one line, nothing written."""
    import fleet.codegen.layout as codegen
    import fleet.terraform.state as tfstate

    monkeypatch.setattr(tfstate, "check_name", lambda *args, **kwargs: None)
    monkeypatch.setattr(codegen, "comment", lambda text, indent="": f"{indent}# {text}")
    sentinel = tmp_path / "ran"
    state = evil_state(tmp_path, sentinel)
    before = tree_hash(project)
    code, _, err = run(project, ["import", "tfstate", "--state", f"dev={state}"], capsys)
    assert code == 2
    (line,) = err.strip().split("\n")
    assert "evil.py: line " in line and "a statement of kind Import" in line
    assert not sentinel.exists()
    assert tree_hash(project) == before

"""dist/ is YAML that every reader reads as we wrote it: no anchors, and every string, plain or
quoted, read back as that string by a YAML 1.1 reader (PyYAML), a YAML 1.2 reader
(ruamel.yaml 0.19.1, pinned in the dev dependencies; also under ``%YAML 1.1``), and the
port of go-yaml's ``resolve`` that Kubernetes decodes with (sigs.k8s.io/yaml -> go-yaml v2:
go-yaml/yaml v2.4.0 and v3.0.1 ``resolve.go``, ``encode.go``; identical to
kubernetes-sigs/yaml v1.4.0 ``goyaml.v2/resolve.go`` and ``goyaml.v3/resolve.go``, and to
yaml/go-yaml v2.4.2 that sigs.k8s.io/yaml v1.5.0+ requires).

The port itself was run against the Go library (Debian's go-yaml v2.4.0 and v3.0.1, Go 1.19)
on 85,720 generated strings with no disagreement: tests/crosscheck/go_yaml_resolve/run.py,
recorded in docs/upstream-behaviour.md.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from fleet.clouds.oci.network import OkeVcn
from fleet.pipeline.writer import read_tree
from fleet.pipeline.yaml_canonical import SelfContainingObject, reading_problems, to_yaml
from fleet.pipeline.yaml_fast import fast_to_yaml
from fleet.pipeline.yaml_scalars import STR, go_yaml_tag, reads_as_string

# Plain-looking strings that some resolver types: YAML 1.1 booleans and nulls, numbers in
# every base and spelling Go's strconv and the YAML tables accept, sexagesimals, dates, and
# their near misses (which must stay plain only if every reader agrees).
SPECIAL = [
    *[
        "y",
        "Y",
        "n",
        "N",
        "yes",
        "Yes",
        "YES",
        "no",
        "No",
        "NO",
        "on",
        "On",
        "ON",
        "off",
        "Off",
        "OFF",
        "true",
        "True",
        "TRUE",
        "false",
        "False",
    ],
    *[
        "FALSE",
        "~",
        "null",
        "Null",
        "NULL",
        ".inf",
        ".Inf",
        ".INF",
        "-.inf",
        "+.inf",
        ".nan",
        ".NaN",
        ".NAN",
        "=",
        "<<",
    ],
    *[
        "1e3",
        "1E3",
        "1e+3",
        "1e-3",
        ".5",
        ".5e3",
        "._5",
        ".5_5",
        "1.",
        "0.",
        "08",
        "09",
        "0777",
        "0o17",
        "0O17",
        "-0o17",
        "0x1F",
        "0X1F",
    ],
    *[
        "-0x1F",
        "0b101",
        "0B101",
        "-0b101",
        "0b+1",
        "0b-1",
        "0x_1F",
        "1_000",
        "1__",
        "-_",
        "+_",
        "_1",
        "1:20",
        "190:20:30.15",
    ],
    "2001-12-14",
    "2002-1-1",
    "2001-02-29",
    "2000-02-29",
    "2001-12-14t21:59:43.10-05:00",
    "2001-12-14 21:59:43.10 -5",
    *[
        "18446744073709551616",
        "1e309",
        "1e-400",
        "0x",
        "0b",
        "0o",
        "v1.30.1",
        "1.25.3",
        "10.0.0.0/16",
        "0.0.0",
    ],
]
NUMBERISH = st.from_regex(r"[-+.]?[0-9][0-9a-fA-FxXoObB_.:eE+-]{0,10}", fullmatch=True)
DATEISH = st.from_regex(
    r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}([.,][0-9]{0,3})?"
    r"(Z|[-+][0-9]{2}:[0-9]{2})?)?",
    fullmatch=True,
)
WORDISH = st.text(alphabet="yYnNtTfFoO~.sSeEuUlLrRaA<=_-+0 :", max_size=6)
STRINGS = st.one_of(st.sampled_from(SPECIAL), NUMBERISH, DATEISH, WORDISH, st.text(max_size=12))

_RUAMEL = YAML(typ="safe", pure=True)


def ruamel_load(text: str, version: str = "1.2") -> Any:
    """ruamel.yaml's reading of ``text`` under YAML ``version``."""
    return _RUAMEL.load(io.StringIO(f"%YAML {version}\n---\n{text}"))


def plain_scalars(text: str) -> list[str]:
    """The plain scalars of ``text`` (a reader types them; quoted ones are strings)."""
    return [
        e.value
        for e in yaml.parse(text, Loader=yaml.CSafeLoader)
        if isinstance(e, yaml.ScalarEvent) and e.implicit[0] and not e.style
    ]


@settings(max_examples=1500, deadline=None)
@given(STRINGS)
def test_every_string_reads_back_as_written(value: str) -> None:
    body = {"v": value, "l": [value, {value: value}], value: "k"}
    data = fast_to_yaml(body)
    assert data == to_yaml(body)
    text = data.decode("utf-8")
    assert yaml.load(text, Loader=yaml.CSafeLoader) == body  # YAML 1.1
    assert ruamel_load(text) == body  # YAML 1.2
    assert ruamel_load(text, "1.1") == body
    for plain in plain_scalars(text):  # what Kubernetes (go-yaml v2) and go-yaml v3 see
        assert plain in ("v", "l", "k") or plain == value
        assert go_yaml_tag(plain) == STR and go_yaml_tag(plain, v3=True) == STR, plain
    assert reading_problems(data) == []


@pytest.mark.parametrize(
    ("text", "v2", "v3"),
    [
        # go-yaml v2.4.0 decode_test.go cases (the resolver's own examples)
        ("hi", STR, STR),
        ("true", "!!bool", "!!bool"),
        ("yes", "!!bool", STR),  # v3 reads YAML 1.1 booleans as strings
        ("0b10", "!!int", "!!int"),
        ("0x0A", "!!int", "!!int"),
        ("0.1", "!!float", "!!float"),
        (".1", "!!float", "!!float"),
        ("-.inf", "!!float", "!!float"),
        ("6.8523e+5", "!!float", "!!float"),
        ("685_230.15", "!!float", "!!float"),
        ("02472256", "!!int", "!!int"),
        ("-0b101010", "!!int", "!!int"),
        ("-9223372036854775808", "!!int", "!!int"),
        ("190:20:30", STR, STR),  # sexagesimal: unsupported (the encoders quote it)
        ("~", "!!null", "!!null"),
        ("-b_c", STR, STR),
        ("50cent_of_dollar", STR, STR),
        ("2015-01-01", "!!timestamp", "!!timestamp"),
        # what Go's strconv accepts besides: the issue's list and its near misses
        ("y", "!!bool", STR),
        ("1e3", "!!float", "!!float"),
        ("0o17", "!!int", "!!int"),
        ("08", "!!float", "!!float"),  # not octal, so yamlStyleFloat
        ("1_000", "!!int", "!!int"),
        ("0b+1", "!!int", "!!int"),  # the "0b" branch: ParseInt("+1", 2)
        ("1e999", STR, STR),  # ParseFloat's range error
        ("2002-1-1", "!!timestamp", "!!timestamp"),
        ("2001-02-29", STR, STR),  # day out of range
        ("<<", "!!merge", "!!merge"),
    ],
)
def test_go_yaml_port(text: str, v2: str, v3: str) -> None:
    assert (go_yaml_tag(text), go_yaml_tag(text, v3=True)) == (v2, v3)


@pytest.mark.parametrize(
    "value",
    [
        "y",
        "n",
        "Y",
        "N",
        "yes",
        "off",
        "on",
        "~",
        "null",
        "1e3",
        "0o17",
        "0x1F",
        "1_000",
        ".inf",
        "0b101",
        "1:20",
        "2001-12-14",
        "2002-1-1",
        "=",
        "<<",
        "08",
        "0b+1",
        "-_",
    ],
)
def test_the_issues_strings_are_quoted(value: str) -> None:
    assert not reads_as_string(value)
    assert fast_to_yaml({"gpu": value}) in (
        f"gpu: '{value}'\n".encode(),
        f'gpu: "{value}"\n'.encode(),
    )


@pytest.mark.parametrize("value", ["v1.30.1", "1.25.3", "10.0.0.0/16", "ocid1.image.oc1", "eu-1"])
def test_ordinary_strings_stay_plain(value: str) -> None:
    assert fast_to_yaml({"k": value}) == f"k: {value}\n".encode()


def test_an_object_holding_itself_is_refused() -> None:
    body: dict[str, Any] = {"a": 1}
    body["self"] = body
    with pytest.raises(SelfContainingObject, match="holds itself"):
        fast_to_yaml(body)


def test_the_oke_network_shares_no_dict_between_rules() -> None:
    """The source of today's ``&id001``: one icmpOptions dict in four NSG rules."""
    spec = OkeVcn(api_allowed_cidrs=["192.0.2.0/24"]).network_spec("all-fra-services")
    seen: dict[int, Any] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict | list):
            assert id(node) not in seen, node
            seen[id(node)] = node
            for child in node.values() if isinstance(node, dict) else node:
                walk(child)

    walk(spec)
    assert sum(1 for n in seen.values() if isinstance(n, dict) and "code" in n) >= 4


def test_the_fixture_fleets_dist_reads_as_written(hybrid_rendered: Path) -> None:
    files = {
        f"{env}/{p}": data
        for env in ("dev", "test", "prod")
        for p, data in read_tree(hybrid_rendered / "dist" / env).items()
    }
    assert any(b"icmpOptions" in data for data in files.values())
    for path, data in files.items():
        assert reading_problems(data) == [], path
        text = data.decode("utf-8")
        assert ruamel_load(text) == yaml.load(text, Loader=yaml.CSafeLoader), path

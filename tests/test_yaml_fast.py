"""fast_to_yaml writes the bytes of yaml_canonical.to_yaml (PyYAML), for any plain object."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fleet.pipeline.writer import read_tree
from fleet.pipeline.yaml_canonical import to_yaml
from fleet.pipeline.yaml_fast import fast_to_yaml

# Strings PyYAML quotes, escapes or would read back as another type.
TRICKY = [
    "",
    "true",
    "False",
    "yes",
    "on",
    "null",
    "~",
    "1",
    "0x1F",
    "0o7",
    "1.5",
    "1e3",
    ".inf",
    "2020-01-01",
    "- x",
    "a: b",
    "#c",
    "x #y",
    " lead",
    "trail ",
    "'q'",
    '"dq"',
    "@x",
    "%p",
    "*a",
    "&b",
    "!t",
    "{x}",
    "[y]",
    "k:v",
    "http://x/y?z=1",
    "é",
    "日本",
    "a\nb",
    "tab\there",
    "\x07bell",
    "a" * 200,
    "<container_infra_prefix>",
    "--feature-gates= --x=1",
]
scalars = st.one_of(
    st.sampled_from(TRICKY),
    st.text(max_size=12),
    st.integers(),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False),
)
keys = st.one_of(st.sampled_from(TRICKY), st.text(max_size=10))
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=4)
    ),
    max_leaves=25,
)


def _share(body: Any, pool: list[Any]) -> Any:
    """Replace some containers by earlier ones (which PyYAML's own dumper would anchor)."""
    if isinstance(body, dict):
        out = {k: _share(v, pool) for k, v in body.items()}
    elif isinstance(body, list):
        out = [_share(v, pool) for v in body]
    else:
        return body
    if pool and len(out) % 2:
        return pool[len(out) % len(pool)]
    pool.append(out)
    return out


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(keys, values, min_size=1, max_size=5), st.booleans())
def test_same_bytes_as_pyyaml(body: dict[str, Any], shared: bool) -> None:
    if shared:
        body = {k: _share(v, []) for k, v in body.items()}
    assert fast_to_yaml(body) == to_yaml(body)


# Strings of the characters the fast path writes as they are, which PyYAML's resolver may
# still read as another type (and so quotes): YAML 1.1 booleans, nulls, ints in every base,
# floats, sexagesimal-free timestamps; and some that stay strings.
PLAIN_LOOKING = [
    *("yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"),
    *("true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL"),
    *("y", "Y", "n", "N", "e1", "1e", "inf", "nan", "NaN", "Inf"),
    *("0", "1", "08", "0777", "0x1F", "0o17", "0b101", "1_000", "0_1", "1__", "12e03"),
    *("1.5", "1.", "0.", "3.14e0", "1.0e3", "6.8523015e5", "685.230_15e03", "1/2"),
    *("2001-12-14", "2001-12-14t21", "2002-1-1", "1-2", "v1.25.3", "a.b/c-d_e"),
    "ocid1.image.oc1.eu-frankfurt-1.aaaaaaaa",
]


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.sampled_from(PLAIN_LOOKING),
        st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,11}", fullmatch=True),
        st.from_regex(r"[0-9][0-9._eE-]{0,7}", fullmatch=True),
    )
)
def test_plain_strings_like_pyyaml(value: str) -> None:
    # A value's text is decided once per process: as a value, in a list, and as a key.
    body = {"v": value, "l": [value, {value: value}]}
    assert fast_to_yaml(body) == to_yaml(body)


def test_a_shared_object_is_written_twice_without_anchors() -> None:
    d, e, items = {"x": 1, "y": 2}, {}, [1, 2]
    body = {"a": d, "b": d, "c": [d, d], "e": e, "f": e, "l": items, "m": [items, [items]]}
    assert fast_to_yaml(body) == to_yaml(body)
    assert b"&" not in fast_to_yaml(body) and b"*" not in fast_to_yaml(body)
    copies = {"a": dict(d), "b": dict(d), "c": [dict(d), dict(d)], "e": {}, "f": {}}
    copies |= {"l": [1, 2], "m": [[1, 2], [[1, 2]]]}
    assert fast_to_yaml(body) == fast_to_yaml(copies)
    assert yaml.safe_load(fast_to_yaml(body)) == body


def test_same_bytes_for_every_file_in_dist(hybrid_rendered: Path) -> None:
    files = {
        f"{env}/{p}": data
        for env in ("dev", "test", "prod")
        for p, data in read_tree(hybrid_rendered / "dist" / env).items()
    }
    assert len(files) > 50
    for path, data in files.items():
        body = yaml.load(data, Loader=yaml.CSafeLoader)
        assert fast_to_yaml(body) == to_yaml(body) == data, path

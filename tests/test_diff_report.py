"""``fleet diff``'s report: text of several lines (Lua health checks in ``argocd-cm``) is shown
as a line diff, in the terminal and in the Markdown comment."""

from __future__ import annotations

import yaml

from fleet.guards.diff import ABSENT, FieldChange, compare_files
from fleet.views.diff_report import is_text_block, render_markdown, render_text

LUA = """hs = {}
if obj.status ~= nil then
  if obj.status.ready == true then
    hs.status = "Healthy"
    hs.message = "ready"
    return hs
  end
end
hs.status = "Progressing"
hs.message = "waiting"
return hs
"""
KEY = "resource.customizations.health.infrastructure.cluster.x-k8s.io_OCIManagedCluster"
FIELD = f'data["{KEY}"]'  # keys with dots are quoted
RELPATH = "bootstrap/configmap_core_argocd_argocd-cm.yaml"


def argocd_cm(data: dict[str, str]) -> bytes:
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm", "namespace": "argocd"},
        "data": data,
    }
    return yaml.safe_dump(body).encode()


def lua_change() -> str:
    return LUA.replace('hs.message = "waiting"', 'hs.message = "waiting for CAPOCI"')


def reports(old: dict[str, str], new: dict[str, str]) -> tuple[str, str]:
    diff = compare_files({"dev": {RELPATH: argocd_cm(old)}}, {"dev": {RELPATH: argocd_cm(new)}})
    return (
        render_text(diff, [], title="t"),
        render_markdown(diff, [], title="t"),
    )


def test_a_changed_health_check_is_a_line_diff() -> None:
    text, markdown = reports({KEY: LUA}, {KEY: lua_change()})
    lines = text.splitlines()
    head = lines.index(f"      {FIELD}: text, 11 lines -> 11 lines")
    assert lines[head + 1 : head + 7] == [
        "        @@ -8,4 +8,4 @@",
        "         end",
        '         hs.status = "Progressing"',
        '        -hs.message = "waiting"',
        '        +hs.message = "waiting for CAPOCI"',
        "         return hs",
    ]
    assert "\\n" not in text  # not one quoted string
    assert f"# {FIELD}: text, 11 lines -> 11 lines\n@@ -8,4 +8,4 @@\n end\n" in markdown
    assert '\n-hs.message = "waiting"\n+hs.message = "waiting for CAPOCI"\n' in markdown
    assert "\\n" not in markdown


def test_an_added_health_check_is_every_line_added() -> None:
    text, _ = reports({}, {KEY: LUA})
    assert f"      {FIELD}: text, (absent) -> 11 lines" in text
    assert "        +hs = {}" in text and "        +return hs" in text


def test_one_line_values_stay_on_one_line() -> None:
    text, _ = reports({"a": "1", KEY: LUA}, {"a": "2", KEY: LUA})
    assert '      data.a: "1" -> "2"' in text
    assert not is_text_block(FieldChange(("spec", "x"), "one", "two"))
    assert not is_text_block(FieldChange(("spec", "x"), None, "one\ntwo"))
    assert is_text_block(FieldChange(("spec", "x"), "one\ntwo", ABSENT))

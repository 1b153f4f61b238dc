"""Canonical YAML: the same object gives the same bytes, everywhere."""

from __future__ import annotations

from typing import Any

import yaml

DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when available
"""The dumper of canonical YAML (:mod:`fleet.pipeline.yaml_fast` resolves scalars with it too)."""


def dump(data: Any) -> str:
    """``data`` as canonical YAML text: sorted keys, block style, no folding."""
    return yaml.dump(
        data,
        Dumper=DUMPER,
        sort_keys=True,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 30,
    )


def to_yaml(body: dict[str, Any]) -> bytes:
    """One Kubernetes object as YAML bytes: sorted keys, block style, UTF-8, no folding."""
    return dump(body).encode("utf-8")

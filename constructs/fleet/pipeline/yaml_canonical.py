"""Canonical YAML: the same object gives the same bytes, everywhere."""

from __future__ import annotations

from typing import Any

import yaml

_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when available


def to_yaml(body: dict[str, Any]) -> bytes:
    """One Kubernetes object as YAML bytes: sorted keys, block style, UTF-8, no folding."""
    text = yaml.dump(
        body,
        Dumper=_Dumper,
        sort_keys=True,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 30,
    )
    return text.encode("utf-8")

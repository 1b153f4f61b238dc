"""Kubernetes name rules, checked where names are declared."""

from __future__ import annotations

import re
from collections.abc import Mapping

from fleet.core.errors import DefinitionError

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def check_dns_label(value: str, *, where: str, field: str, max_length: int = 63) -> str:
    """``value`` if it is a DNS-1123 label no longer than ``max_length``, else an error."""
    if not isinstance(value, str) or not _DNS_LABEL.match(value) or len(value) > max_length:
        raise DefinitionError(
            f"must be lower-case letters, digits and '-', start and end with a letter or "
            f"digit, at most {max_length} characters; got {value!r}",
            where=where,
            field=field,
        )
    return value


def check_dns_subdomain(value: str, *, where: str, field: str) -> str:
    """``value`` if it is a DNS-1123 subdomain (at most 253 characters), else an error."""
    if not isinstance(value, str) or not _DNS_SUBDOMAIN.match(value) or len(value) > 253:
        raise DefinitionError(
            "must be a DNS-1123 subdomain (lower-case letters, digits, '-' and '.'), "
            f"got {value!r}",
            where=where,
            field=field,
        )
    return value


def check_label_values(labels: Mapping[str, object], *, where: str, field: str) -> dict[str, str]:
    """``labels`` as a dict if every value is a string (labels never hold numbers or booleans)."""
    for key, value in labels.items():
        if not isinstance(value, str):
            raise DefinitionError(
                f"label values are strings, got {value!r} for {key!r}", where=where, field=field
            )
    return dict(labels)  # type: ignore[arg-type]  # checked above

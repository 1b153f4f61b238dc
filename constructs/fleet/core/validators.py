"""Shared argument validators: Kubernetes name rules and value checks (DNS labels, version
pins, CIDRs, SSH keys, ...). Argument types from type hints are in :mod:`fleet.core.hints`
and :mod:`fleet.core.arguments`."""

from __future__ import annotations

import contextlib
import enum
import ipaddress
import re
from collections.abc import Mapping
from typing import TypeVar

from fleet.core.errors import DefinitionError
from fleet.core.hints import shown_value
from fleet.core.redact import shown

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


EXACT_VERSION = re.compile(
    r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$"
)
"""An exact SemVer version, ``MAJOR.MINOR.PATCH[-pre][+build]`` with an optional ``v``."""
COMMIT = re.compile(r"^[0-9a-f]{40}$")
"""A full Git commit id."""


def check_version_pin(value: object, *, where: str, field: str, commit: bool = False) -> str:
    """``value`` if it pins one release (an exact version; with ``commit``, a full Git
    commit id too), else the error.

    ArgoCD hands a chart's ``targetRevision`` to Helm as it is when it parses as a version
    (argoproj/argo-cd v3.5.1 ``reposerver/repository/repository.go``
    ``newHelmClientResolveRevision``, ``util/versions/version.go``: Masterminds SemVer, which
    also reads ``1`` and ``1.2``), else resolves it as a constraint against the index; Helm's
    ``IndexFile.Get`` takes any non-exact string as a constraint and picks the newest match
    (helm/helm v4.2.1 ``pkg/repo/v1/index.go``). So ``1.2``, ``^1.2``, ``~1``, ``1.x``,
    ``>=1``, ``*`` float to whatever is newest at each sync, and ``latest`` fails.
    """
    if isinstance(value, str) and (EXACT_VERSION.match(value) or (commit and COMMIT.match(value))):
        return value
    also = " or a full commit id" if commit else ""
    raise DefinitionError(
        f"{value!r} is not an exact version: a range (^1.2, ~1, 1.x, >=1, *, and also 1 or "
        "1.2) resolves to the newest match at every sync, and a name such as 'latest' is "
        f"no version at all; pin MAJOR.MINOR.PATCH (1.2.3, v1.21.1){also}",
        where=where,
        field=field,
    )


def check_label_values(labels: Mapping[str, object], *, where: str, field: str) -> dict[str, str]:
    """``labels`` as a dict if every value is a string (labels never hold numbers or booleans)."""
    for key, value in labels.items():
        if not isinstance(value, str):
            raise DefinitionError(
                f"label values are strings, got {shown(value, str(key))} for {key!r}",
                where=where,
                field=field,
            )
    return dict(labels)  # type: ignore[arg-type]  # checked above


E = TypeVar("E", bound=enum.StrEnum)


def check_choice(
    kind: type[E],
    value: object,
    *,
    where: str,
    field: str,
    aliases: Mapping[str, E] | None = None,
    quoted: bool = False,
) -> E:
    """``value`` as a member of ``kind``: the member, its value, or one of ``aliases``;
    else the error listing them (``quoted``: each in quotes)."""
    if isinstance(value, str) and aliases and value in aliases:
        return aliases[value]
    try:
        if not isinstance(value, str):
            raise ValueError(value)
        return kind(value)
    except ValueError:
        known = [*(aliases or {}), *(m.value for m in kind)]
        shown = ", ".join(repr(k) if quoted else k for k in known)
        raise DefinitionError(
            f"must be one of {shown}, got {value!r}", where=where, field=field
        ) from None


_CIDR = re.compile(r"([0-9]{1,3}(?:\.[0-9]{1,3}){3})/([0-9]{1,2})")


def check_cidr(
    value: object, *, where: str, field: str, prefixes: tuple[int, int] = (0, 32)
) -> ipaddress.IPv4Network:
    """``value`` as an IPv4 CIDR block, else the error: the one rule for every CIDR block a
    declaration takes (subnets, NSG rule sources, pods and services ranges).

    * CIDR notation, ``a.b.c.d/n``: a bare address is refused, as Go's ``net.ParseCIDR``
      refuses it (the webhooks of the controllers that read the blocks call it), and as
      the clouds' APIs document the fields ("an IP address range in CIDR notation");
      ``198.51.100.17`` gets "write 198.51.100.17/32";
    * the block's own network address: ``192.0.2.5/24`` is refused (network
      192.0.2.0/24, or the one address 192.0.2.5/32? fleet does not guess; and a
      controller that compares rules as strings with what the cloud returns would never
      find a block written another way than the cloud writes it);
    * a prefix length within ``prefixes`` (a cloud's limits, such as a VCN's /16 to /30).
    """
    match = _CIDR.fullmatch(value) if isinstance(value, str) else None
    address: ipaddress.IPv4Address | None = None
    if match:
        with contextlib.suppress(ValueError):
            address = ipaddress.IPv4Address(match[1])
    if address is None or match is None or int(match[2]) > 32 or match[2] != str(int(match[2])):
        single = None
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                single = ipaddress.IPv4Address(value)
        hint = f": write {single}/32 for that one address" if single is not None else ""
        raise DefinitionError(
            f"must be an IPv4 CIDR block (address/prefix length, such as 10.0.0.0/16), got "
            f"{shown_value(value, field)}{hint}",
            where=where,
            field=field,
        )
    prefix = int(match[2])
    network = ipaddress.IPv4Network(f"{address}/{prefix}", strict=False)
    if network.network_address != address:
        raise DefinitionError(
            f"{value} has bits set past its /{prefix}: write {network} for the block, or "
            f"{address}/32 for the one address",
            where=where,
            field=field,
        )
    low, high = prefixes
    if not low <= prefix <= high:
        raise DefinitionError(
            f"{value}: the prefix length must be /{low} to /{high} here, got /{prefix}",
            where=where,
            field=field,
        )
    return network


_KUBE_VERSION = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")


def check_kubernetes_version(value: str, *, where: str, field: str) -> tuple[int, int, int]:
    """(major, minor, patch) of a full Kubernetes version (``v1.30.1``), else the error."""
    match = _KUBE_VERSION.match(value) if isinstance(value, str) else None
    if not match:
        raise DefinitionError(
            f"must be a full Kubernetes version like v1.30.1, got {value!r}",
            where=where,
            field=field,
        )
    major, minor, patch = (int(g) for g in match.groups())
    return major, minor, patch


def positive_number(value: float | None, *, where: str, field: str, unit: str) -> str | None:
    """A number above 0 in its shortest string form (``"1"``, ``"1.5"``), None for None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise DefinitionError(
            f"must be a number of {unit} above 0, got {value!r}", where=where, field=field
        )
    return str(int(value)) if float(value).is_integer() else repr(float(value))


_SSH_KEY = re.compile(r"^(ssh-(rsa|ed25519|dss)|ecdsa-sha2-nistp\d+) [A-Za-z0-9+/]+=*( \S.*)?$")


def check_ssh_public_key(key: str, *, where: str, field: str) -> str:
    """``key`` stripped, if it is one OpenSSH public key line; else the error."""
    if not isinstance(key, str) or not _SSH_KEY.match(key.strip()):
        raise DefinitionError(
            "must be one OpenSSH public key line (ssh-ed25519 AAAA... comment)",
            where=where,
            field=field,
        )
    return key.strip()

"""Checks of OCI's own formats: OCIDs, availability domains, OKE's node cycling counts.

The checks any declaration may use are in :mod:`fleet.core.validators`; these name OCI,
so they stay in its cloud package.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fleet.core.errors import DefinitionError

AVAILABILITY_DOMAIN = re.compile(r"^[A-Za-z0-9]+:(?P<region>[A-Z0-9-]+)-AD-\d+$")
"""An OCI availability domain: ``<tenancy prefix>:<REGION>-AD-<n>``."""
_SURGE = re.compile(r"^(\d+|(100|[1-9]?\d)%)$")

_OCID = "^ocid1\\.{kind}\\.oc[0-9]+\\.[a-z0-9-]*\\.[a-z0-9]+$"


def check_ocid(value: object, kinds: Sequence[str], *, where: str, field: str) -> str:
    """``value`` if it is an Oracle Cloud id of one of ``kinds`` (``ocid1.<kind>.oc1..<id>``)."""
    pattern = _OCID.format(kind="(" + "|".join(re.escape(k) for k in kinds) + ")")
    if not isinstance(value, str) or not re.match(pattern, value):
        raise DefinitionError(
            f"must be an OCID like ocid1.{kinds[0]}.oc1..<id>, got {value!r}",
            where=where,
            field=field,
        )
    return value


def check_surge(value: object, *, where: str, field: str) -> str:
    """OKE's cycling count: an integer of 0 or more, or a percentage, as CAPOCI's string."""
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str) or not _SURGE.match(text):
        raise DefinitionError(
            f"must be an integer of 0 or more or a percentage like '25%', got {value!r}",
            where=where,
            field=field,
        )
    return text


def check_availability_domains(ads: Sequence[str], ctx: str) -> tuple[str, ...]:
    """``ads`` as a tuple, if each is an availability domain and none is listed twice."""
    for ad in ads:
        if not AVAILABILITY_DOMAIN.match(ad):
            raise DefinitionError(
                f"must look like BKrI:EU-FRANKFURT-1-AD-1, got {ad!r}",
                where=ctx,
                field="availability_domains",
            )
    if len(set(ads)) != len(ads):
        raise DefinitionError(
            f"lists an availability domain twice: {list(ads)}",
            where=ctx,
            field="availability_domains",
        )
    return tuple(ads)

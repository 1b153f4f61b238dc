"""Kubernetes names and label values derived from the names a cloud knows.

A cloud's names need not be Kubernetes names: Magnum takes a cluster ``Cluster`` or
``cluster_1``, a node group ``user-m3.large``, a template ``Kubernetes v1.26.8``. The
objects, folders and labels the fleet renders need DNS-1123 labels and label values, so
they are derived from the cloud's name by the two rules below, which never change (a
changed rule would rename live objects). The cloud's own name is kept byte for byte
wherever the cloud reads it.

**Object names** (:func:`object_name_from`): lower-case; every character other than
``a-z`` and ``0-9`` becomes ``-``; runs of ``-`` collapse to one; leading and trailing
``-`` go. ``Cluster`` -> ``cluster``, ``cluster_1`` -> ``cluster-1``, ``user-m3.large``
-> ``user-m3-large``, ``Kubernetes v1.26.8`` -> ``kubernetes-v1-26-8``. A name that is
already a DNS-1123 label is its own object name. The result must still be 1 to 63
characters: the declaration pins another (``object_name=``) where it is not.

**Label values** (:func:`label_value_from`): every run of characters other than
letters, digits, ``-``, ``_`` and ``.`` becomes ``-``; then leading and trailing
characters that are not letters or digits go, and the value is cut to 63 characters
(and trimmed again). ``Kubernetes v1.26.8`` -> ``Kubernetes-v1.26.8``. A valid label
value is its own.
"""

from __future__ import annotations

import re

from fleet.core.errors import DefinitionError

MAX_LABEL = 63
"""The longest DNS-1123 label, and the longest Kubernetes label value."""

_NOT_DNS = re.compile(r"[^a-z0-9]+")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_NOT_LABEL_VALUE = re.compile(r"[^A-Za-z0-9_.-]+")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_EDGE = re.compile(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$")


def is_dns_label(value: str) -> bool:
    """Whether ``value`` is a DNS-1123 label (lower-case letters, digits and ``-``,
    starting and ending with a letter or digit, at most 63 characters)."""
    return len(value) <= MAX_LABEL and _DNS_LABEL.fullmatch(value) is not None


def object_name_from(name: str) -> str:
    """The Kubernetes object name derived from a cloud's ``name`` (the module's rule;
    may be empty or longer than 63 characters: the caller checks)."""
    return _NOT_DNS.sub("-", name.lower()).strip("-")


def is_label_value(value: str) -> bool:
    """Whether ``value`` is a valid Kubernetes label value (empty included)."""
    return len(value) <= MAX_LABEL and _LABEL_VALUE.fullmatch(value) is not None


def label_value_from(text: str) -> str:
    """A valid Kubernetes label value derived from free ``text`` (the module's rule; ""
    when nothing of it is left)."""
    value = _EDGE.sub("", _NOT_LABEL_VALUE.sub("-", text))
    return _EDGE.sub("", value[:MAX_LABEL])


def object_name_for(cloud_name: str, pinned: str | None, *, where: str) -> str:
    """The object name of something the cloud calls ``cloud_name``: ``pinned`` if given
    (checked), else derived (:func:`object_name_from`); the error asks for a pin
    (``object_name=``) where the derived name is empty or too long."""
    if pinned is not None:
        if not is_dns_label(pinned):
            raise DefinitionError(
                "must be lower-case letters, digits and '-', start and end with a letter or "
                f"digit, at most {MAX_LABEL} characters; got {pinned!r}",
                where=where,
                field="object_name",
            )
        return pinned
    derived = object_name_from(cloud_name)
    if not is_dns_label(derived):
        why = (
            "nothing of it is left"
            if not derived
            else f"{derived!r} has {len(derived)} characters (at most {MAX_LABEL})"
        )
        raise DefinitionError(
            f"the Kubernetes name derived from {cloud_name!r}: {why}; pin one with "
            "object_name= (lower-case letters, digits and '-')",
            where=where,
            field="name",
        )
    return derived

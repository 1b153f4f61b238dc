"""How ``fleet status`` reads and judges a live object, whatever its controller: values.

A kind the status view reads is a :class:`LiveKind`: where its API serves it (group,
version, plural, scope), who installs it (for the "CRD missing" message) and the
:class:`ConditionRules` that judge its conditions. The rules of the shared controllers are
here (:data:`CROSSPLANE_MANAGED`, :data:`CLUSTER_API_V1BETA2`,
:data:`CLUSTER_API_V1BETA1_CONTRACT`); a cloud plug-in names, through
:class:`LiveStatus`, the kinds its clusters render and where the live Kubernetes version
is (:class:`VersionAt`). Nothing here reads a cluster: :mod:`fleet.views.status` does.

Every condition path is verified in the upstream Go types (docs/upstream-behaviour.md,
"fleet status"): crossplane-runtime v2.1.0 ``apis/common/condition.go`` (``Condition``:
type, status, lastTransitionTime, reason, message; ``ReconcileError`` is ``Synced=False``
with the error as message); upjet v2.2.0 ``pkg/resource/conditions.go``
(``LastAsyncOperation``); cluster-api v1.12.11 ``api/core/v1beta2/cluster_types.go``
(``status.conditions``, ``metav1.Condition``) and ``api/core/v1beta1/cluster_types.go``
(``status.v1beta2.conditions``); the v1beta1 contract's ``clusterv1beta1.Conditions``
(with ``severity``) that CAPOCI v0.24.0 keeps on its ``v1beta2`` kinds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from fleet.core.manifest import dig


class Verdict(StrEnum):
    """Where something stands: the worst of its parts wins (:func:`worst`)."""

    CONVERGED = "converged"
    PROGRESSING = "progressing"
    FAILED = "failed"
    UNKNOWN = "unknown"
    """Not read (the management cluster could not be reached or read)."""


_RANK = {Verdict.CONVERGED: 0, Verdict.PROGRESSING: 1, Verdict.UNKNOWN: 2, Verdict.FAILED: 3}


def worst(verdicts: Sequence[Verdict]) -> Verdict:
    """The worst verdict of ``verdicts`` (converged when empty)."""
    return max(verdicts, key=_RANK.__getitem__, default=Verdict.CONVERGED)


@dataclass(frozen=True, kw_only=True)
class Condition:
    """One condition of a live object, as its controller wrote it."""

    type: str
    status: str
    """``True``, ``False`` or ``Unknown``."""
    reason: str = ""
    message: str = ""
    since: str | None = None
    """Its ``lastTransitionTime`` (RFC 3339), when set."""
    severity: str = ""
    """The v1beta1 contract's severity (``Error``, ``Warning``, ``Info``), else ""."""

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> Condition:
        """A condition from its JSON form (any of the three layouts above)."""
        return cls(
            type=str(raw.get("type", "")),
            status=str(raw.get("status", "")),
            reason=str(raw.get("reason") or ""),
            message=str(raw.get("message") or ""),
            since=str(raw["lastTransitionTime"]) if raw.get("lastTransitionTime") else None,
            severity=str(raw.get("severity") or ""),
        )


@dataclass(frozen=True, kw_only=True)
class Finding:
    """Why an object is not converged: its verdict and the condition (or fact) saying so."""

    verdict: Verdict
    kind: str
    name: str
    what: str
    """The condition type, or the field (``operationState``, ``version``)."""
    reason: str = ""
    message: str = ""
    since: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The finding for JSON."""
        return {
            "verdict": self.verdict.value,
            "kind": self.kind,
            "name": self.name,
            "condition": self.what,
            "reason": self.reason,
            "message": self.message,
            "since": self.since,
        }


@dataclass(frozen=True, kw_only=True)
class ConditionRules:
    """How one controller's conditions say converged, progressing or failed.

    ``required`` (and any type ending in one of ``required_suffixes``) must be ``True``;
    ``busy`` types are ``True`` while the controller is still at work (Cluster API's
    ``RollingOut``); ``fail_when_false`` types are failures, not progress, when ``False``
    (Crossplane's ``Synced``); ``severity_fails``: a ``False`` condition with severity
    ``Error`` is a failure (the Cluster API v1beta1 contract). ``not_failures`` are reasons
    that never fail (a paused object). A type absent from the object is not judged.
    """

    locate: Callable[[Mapping[str, Any]], list[Any]]
    """The object's conditions (a list of JSON objects)."""
    required: tuple[str, ...] = ()
    required_suffixes: tuple[str, ...] = ()
    busy: tuple[str, ...] = ()
    fail_when_false: tuple[str, ...] = ()
    severity_fails: bool = False
    not_failures: frozenset[str] = frozenset()
    failure_messages: tuple[str, ...] = ()
    """A field (path) holding a list of failure messages that complete a failing
    condition's (CAPOCI's ``status.failureMessages``)."""

    def conditions(self, body: Mapping[str, Any]) -> list[Condition]:
        """The object's conditions, parsed."""
        return [Condition.of(c) for c in self.locate(body) if isinstance(c, Mapping)]

    def _required(self, kind: str) -> bool:
        return kind in self.required or any(kind.endswith(s) for s in self.required_suffixes)

    def judge(self, kind: str, body: Mapping[str, Any]) -> list[Finding]:
        """What keeps the object from converging: failures first, in ``fail_when_false``
        then document order, then what is still in progress; [] when it has converged."""
        name = str(dig(body, *("metadata", "name")) or "")
        conditions = self.conditions(body)
        if not conditions:
            return [
                Finding(
                    verdict=Verdict.PROGRESSING,
                    kind=kind,
                    name=name,
                    what="conditions",
                    message="no conditions yet: its controller has not reported on it",
                )
            ]
        extra = dig(body, *self.failure_messages) if self.failure_messages else None
        extra_text = "; ".join(str(m) for m in extra) if isinstance(extra, list) else ""
        failed: list[tuple[int, Finding]] = []
        waiting: list[Finding] = []
        for c in conditions:
            if c.type in self.busy:
                if c.status == "True":
                    waiting.append(self._finding(Verdict.PROGRESSING, kind, name, c, ""))
                continue
            judged = c.type in self.fail_when_false or self._required(c.type)
            if not judged or c.status == "True":
                continue
            fails = c.status == "False" and c.reason not in self.not_failures
            if fails and c.type in self.fail_when_false:
                rank = self.fail_when_false.index(c.type)
                failed.append((rank, self._finding(Verdict.FAILED, kind, name, c, extra_text)))
            elif fails and self.severity_fails and c.severity == "Error":
                failed.append(
                    (
                        len(self.fail_when_false),
                        self._finding(Verdict.FAILED, kind, name, c, extra_text),
                    )
                )
            else:  # required and not True, or a failure type that is not a failure now
                waiting.append(self._finding(Verdict.PROGRESSING, kind, name, c, ""))
        return [f for _, f in sorted(failed, key=lambda item: item[0])] + waiting

    @staticmethod
    def _finding(verdict: Verdict, kind: str, name: str, c: Condition, extra: str) -> Finding:
        message = c.message
        if extra and extra not in message:
            message = f"{message}: {extra}" if message else extra
        return Finding(
            verdict=verdict,
            kind=kind,
            name=name,
            what=c.type,
            reason=c.reason,
            message=message,
            since=c.since,
        )


def _status_conditions(body: Mapping[str, Any]) -> list[Any]:
    found = dig(body, *("status", "conditions"))
    return found if isinstance(found, list) else []


def _cluster_api_v1beta2(body: Mapping[str, Any]) -> list[Any]:
    """The v1beta2 conditions of a Cluster API core object: ``status.conditions`` when
    read as ``v1beta2``, ``status.v1beta2.conditions`` when read as ``v1beta1``."""
    if str(body.get("apiVersion", "")).endswith("/v1beta1"):
        found = dig(body, *("status", "v1beta2", "conditions"))
        return found if isinstance(found, list) else []
    return _status_conditions(body)


CROSSPLANE_MANAGED = ConditionRules(
    locate=_status_conditions,
    required=("Ready",),
    fail_when_false=("Synced", "LastAsyncOperation"),
    not_failures=frozenset({"ReconcilePaused"}),
)
"""A Crossplane managed resource (crossplane-runtime ``Ready``/``Synced``; upjet's
``LastAsyncOperation``). ``Synced=False`` is a failure: the reconciler could not make the
external resource match (``ReconcileError``), upjet's refusal of a ForceNew update among
them; ``Ready`` not ``True`` is progress (``Creating``, ``Deleting``, ``Unavailable``)."""

CLUSTER_API_V1BETA2 = ConditionRules(
    locate=_cluster_api_v1beta2,
    required=(
        "RemoteConnectionProbe",
        "ControlPlaneAvailable",
        "WorkersAvailable",
        "InfrastructureReady",
        "Available",
    ),
    required_suffixes=("UpToDate",),
    busy=("RollingOut", "ScalingUp", "ScalingDown", "Remediating", "Deleting"),
)
"""A Cluster API core ``Cluster`` or ``MachinePool`` by its v1beta2 conditions (which carry
no severity: only progress; a failure shows on the provider's objects)."""

CLUSTER_API_V1BETA1_CONTRACT = ConditionRules(
    locate=_status_conditions,
    required=("Ready",),
    required_suffixes=("Ready",),
    severity_fails=True,
)
"""A provider object keeping the v1beta1 contract's conditions (``Ready`` and the other
``*Ready``, with ``severity``): ``False`` with severity ``Error`` is a failure."""


@dataclass(frozen=True, kw_only=True)
class LiveKind:
    """A kind ``fleet status`` reads: where the API serves it and how to judge it."""

    group: str
    kind: str
    version: str
    """The version read (the one the fleet renders)."""
    plural: str
    namespaced: bool
    component: str
    """What installs its CRD (named when the API server does not serve it)."""
    rules: ConditionRules | None = None
    """None: read, not judged (its state is judged elsewhere, an Application's say)."""

    @property
    def api_version(self) -> str:
        """``group/version``."""
        return f"{self.group}/{self.version}"


_RELEASE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


def release(version: str) -> tuple[int, int, int] | None:
    """``(major, minor, patch)`` of a Kubernetes version (``v1.25.3-cern.0`` -> 1, 25, 3),
    None when it is not one."""
    match = _RELEASE.match(version.strip())
    if match is None:
        return None
    return (int(match.group(1)), int(match.group(2)), int(match.group(3) or 0))


def same_release(declared: str, live: str) -> bool:
    """Whether ``live`` runs the Kubernetes release ``declared`` names (build suffixes
    such as ``-cern.0`` aside)."""
    wanted, found = release(declared), release(live)
    return wanted is not None and wanted == found


@dataclass(frozen=True, kw_only=True)
class VersionAt:
    """Where the live Kubernetes version of a cluster is: a field of one of its objects."""

    group: str
    kind: str
    path: tuple[str, ...]

    def read(self, body: Mapping[str, Any]) -> str | None:
        """The version in ``body``, None when the field is not set (yet)."""
        found = dig(body, *self.path)
        return str(found) if found not in (None, "") else None


@dataclass(frozen=True, kw_only=True)
class LiveStatus:
    """What a cloud tells ``fleet status`` (``CloudPlugin.status``): the kinds of its
    clusters to read and judge, and where the live Kubernetes version is."""

    kinds: tuple[LiveKind, ...] = ()
    version: VersionAt | None = None
    same_version: Callable[[str, str], bool] = field(default=same_release)
    """Whether a live version (second) is the declared one (first)."""

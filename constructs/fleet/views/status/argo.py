"""An ArgoCD Application, read and judged (argo-cd v3.5.1 ``ApplicationStatus``).

Paths (``pkg/apis/application/v1alpha1/types.go``): ``status.sync.status`` and
``status.sync.revision`` (``SyncStatus``), ``status.health.{status,message,
lastTransitionTime}`` (``AppHealthStatus``), ``status.operationState.{phase,message,
retryCount,finishedAt}`` (``OperationState``), ``status.conditions[].{type,message,
lastTransitionTime}`` (``ApplicationCondition``; the error types end in ``Error``), and
``status.resources[].health`` (``ResourceStatus``), present only when the controller
persists resource health (``--persist-resource-health``, off by default in v3: then
``status.resourceHealthSource`` is ``appTree`` and the objects' own conditions are read).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fleet.core.manifest import dig
from fleet.platform.live import Finding, Verdict
from fleet.views.status.model import ApplicationView
from fleet.views.status.revisions import Expected, History, RevisionState

KIND = "Application"
FAILED_OPERATIONS = ("Failed", "Error")


def _text(value: Any) -> str:
    return str(value) if value not in (None, "") else ""


def view(
    name: str,
    namespace: str,
    live: Mapping[str, Any] | None,
    expected: Expected,
    history: History,
) -> ApplicationView:
    """The Application's view, its revision judged against ``expected``."""
    if live is None:
        return ApplicationView(
            name=name, namespace=namespace, present=False, expected=expected.commit
        )
    revision = _text(dig(live, "status", "sync", "revision")) or None
    retries = dig(live, "status", "operationState", "retryCount")
    return ApplicationView(
        name=name,
        namespace=namespace,
        present=True,
        sync=_text(dig(live, "status", "sync", "status")) or None,
        revision=revision,
        expected=expected.commit,
        revision_state=history.state(expected, revision),
        health=_text(dig(live, "status", "health", "status")) or None,
        health_message=_text(dig(live, "status", "health", "message")),
        operation=_text(dig(live, "status", "operationState", "phase")) or None,
        operation_message=_text(dig(live, "status", "operationState", "message")),
        retry_count=retries if isinstance(retries, int) else 0,
    )


def findings(app: ApplicationView, live: Mapping[str, Any] | None) -> list[Finding]:
    """What the Application says keeps its cluster from converging."""
    name = app.name
    if live is None:
        return [
            Finding(
                verdict=Verdict.PROGRESSING,
                kind=KIND,
                name=name,
                what="present",
                message=f"Application {app.namespace}/{name} is not live yet (the environment's "
                "root Application creates it once it syncs dist/<env>/bootstrap)",
            )
        ]
    out: list[Finding] = []
    operation = dig(live, "status", "operationState") or {}
    if app.operation in FAILED_OPERATIONS:
        tries = f" (retry {app.retry_count})" if app.retry_count else ""
        out.append(
            Finding(
                verdict=Verdict.FAILED,
                kind=KIND,
                name=name,
                what="operationState",
                reason=f"{app.operation}{tries}",
                message=app.operation_message,
                since=_text(operation.get("finishedAt") or operation.get("startedAt")) or None,
            )
        )
    for condition in dig(live, "status", "conditions") or []:
        if isinstance(condition, Mapping) and str(condition.get("type", "")).endswith("Error"):
            out.append(
                Finding(
                    verdict=Verdict.FAILED,
                    kind=KIND,
                    name=name,
                    what=str(condition.get("type")),
                    message=_text(condition.get("message")),
                    since=_text(condition.get("lastTransitionTime")) or None,
                )
            )
    health = dig(live, "status", "health") or {}
    for resource in dig(live, "status", "resources") or []:
        rhealth = resource.get("health") if isinstance(resource, Mapping) else None
        if isinstance(rhealth, Mapping) and rhealth.get("status") == "Degraded":
            out.append(
                Finding(
                    verdict=Verdict.FAILED,
                    kind=str(resource.get("kind", "")),
                    name=str(resource.get("name", "")),
                    what="health",
                    reason="Degraded",
                    message=_text(rhealth.get("message")),
                    since=_text(rhealth.get("lastTransitionTime")) or None,
                )
            )
    if app.health == "Degraded":
        out.append(
            Finding(
                verdict=Verdict.FAILED,
                kind=KIND,
                name=name,
                what="health",
                reason="Degraded",
                message=app.health_message,
                since=_text(health.get("lastTransitionTime")) or None,
            )
        )
    if app.sync != "Synced":
        out.append(
            Finding(
                verdict=Verdict.PROGRESSING,
                kind=KIND,
                name=name,
                what="sync",
                reason=app.sync or "Unknown",
                message="ArgoCD has not applied what dist/ holds",
            )
        )
    if app.revision_state is RevisionState.BEHIND:
        out.append(
            Finding(
                verdict=Verdict.PROGRESSING,
                kind=KIND,
                name=name,
                what="revision",
                reason="Behind",
                message=f"ArgoCD compared with {app.revision}, older than {app.expected}, the "
                "last commit that changed dist/<env>/ (it refreshes every 3 minutes by default)",
            )
        )
    if app.operation in ("Running", "Terminating"):
        tries = f", retry {app.retry_count}" if app.retry_count else ""
        out.append(
            Finding(
                verdict=Verdict.PROGRESSING,
                kind=KIND,
                name=name,
                what="operationState",
                reason=f"{app.operation}{tries}",
                message=app.operation_message,
                since=_text(operation.get("startedAt")) or None,
            )
        )
    if app.health not in ("Healthy", "Degraded"):
        out.append(
            Finding(
                verdict=Verdict.PROGRESSING,
                kind=KIND,
                name=name,
                what="health",
                reason=app.health or "Unknown",
                message=app.health_message,
                since=_text(health.get("lastTransitionTime")) or None,
            )
        )
    return out

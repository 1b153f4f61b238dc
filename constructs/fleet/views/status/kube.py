"""Reading a management cluster through the Kubernetes Python client, read-only.

The ``kubernetes`` package is imported here only, and only when a client is made: ``fleet
synth`` never loads it. Each environment gets its own ``ApiClient`` from its kubeconfig
context (``new_client_from_config``: no process-wide configuration). Every request has a
connect and a read timeout and urllib3 retries nothing, so an unreachable or silent API
server costs one timeout, not minutes of retries. A failure becomes a :class:`ReadError`
whose message is one line: the environment, what went wrong, what to do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from fleet.core.errors import FleetError
from fleet.platform.live import LiveKind

CONNECT_TIMEOUT = 5.0
"""Seconds to open a connection to the API server."""
READ_TIMEOUT = 15.0
"""Seconds to wait for an answer once connected."""
PAGE = 500
"""Objects per list request (the API server's chunking: ``limit`` and ``continue``)."""


class ReadError(FleetError):
    """A read of one environment failed; ``problem`` says how (``unreachable``,
    ``timeout``, ``unauthorized``, ``forbidden``, ``missing-crd``, ``kubeconfig``,
    ``error``). ``fatal``: nothing more can be read there (the server is unreachable or
    refuses the credentials), so the other kinds are not tried."""

    def __init__(self, problem: str, message: str, *, fatal: bool) -> None:
        super().__init__(message)
        self.problem = problem
        self.fatal = fatal


class LiveClient(Protocol):
    """What :func:`fleet.views.status.read_status` asks of a management cluster."""

    @property
    def context(self) -> str:
        """The kubeconfig context (or a description of where it reads), for messages."""
        ...

    def list(self, kind: LiveKind) -> list[dict[str, Any]]:
        """Every object of ``kind`` (all namespaces); raises :class:`ReadError`."""
        ...


@dataclass(frozen=True, kw_only=True)
class Connection:
    """How to reach one environment's management cluster."""

    environment: str
    context: str | None
    """The kubeconfig context; None: the kubeconfig's current context."""
    kubeconfig: Path | None
    """The kubeconfig file; None: ``$KUBECONFIG``, else ``~/.kube/config``."""
    connect_timeout: float = CONNECT_TIMEOUT
    read_timeout: float = READ_TIMEOUT


class KubeClient:
    """A :class:`LiveClient` over the Kubernetes Python client."""

    def __init__(self, connection: Connection) -> None:
        from kubernetes import client, config
        from kubernetes.config.config_exception import ConfigException

        self._connection = connection
        env = connection.environment
        where = f"context {connection.context!r}" if connection.context else "current context"
        files = str(connection.kubeconfig) if connection.kubeconfig else None
        try:
            if connection.kubeconfig is not None and not connection.kubeconfig.is_file():
                raise ConfigException(f"kubeconfig {connection.kubeconfig} does not exist")
            configuration = client.Configuration()
            config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=files,
                context=connection.context,
                client_configuration=configuration,
                persist_config=False,
            )
        except (ConfigException, OSError, ValueError, TypeError) as e:
            detail = " ".join(str(e).split()) or type(e).__name__
            raise ReadError(
                "kubeconfig",
                f"{env}: cannot use {where} of the kubeconfig: {detail}; check "
                "[tool.fleet.contexts], --context and --kubeconfig (or $KUBECONFIG)",
                fatal=True,
            ) from None
        configuration.retries = False  # one attempt: the caller decides what to retry
        self._host = configuration.host
        self._api = client.CustomObjectsApi(client.ApiClient(configuration))
        self._context = (
            f"context {connection.context}" if connection.context else "the current context"
        )

    @property
    def context(self) -> str:
        """The kubeconfig context read."""
        return self._context

    def list(self, kind: LiveKind) -> list[dict[str, Any]]:
        """Every object of ``kind``, page by page (raises :class:`ReadError`)."""
        items: list[dict[str, Any]] = []
        token: str | None = None
        while True:
            try:
                page: Any = self._api.list_cluster_custom_object(
                    kind.group,
                    kind.version,
                    kind.plural,
                    limit=PAGE,
                    _continue=token,
                    _request_timeout=(
                        self._connection.connect_timeout,
                        self._connection.read_timeout,
                    ),
                )
            except Exception as e:  # the client raises urllib3's and its own errors
                raise self._error(kind, e) from None
            if not isinstance(page, dict):
                raise ReadError(
                    "error",
                    f"{self._connection.environment}: listing {_resource(kind)} at {self._host} "
                    "did not return a list",
                    fatal=False,
                )
            items.extend(i for i in page.get("items") or [] if isinstance(i, dict))
            token = (page.get("metadata") or {}).get("continue") or None
            if token is None:
                return items

    def _error(self, kind: LiveKind, e: Exception) -> ReadError:
        return classify(
            self._connection.environment, self._context, self._host, kind, e, self._connection
        )


def _resource(kind: LiveKind) -> str:
    return f"{kind.plural}.{kind.group}/{kind.version}"


def _reason(e: BaseException) -> str:
    """The end of an urllib3 error's text (``[Errno 111] Connection refused``)."""
    text = " ".join(str(e).split())
    return text.rsplit(": ", 1)[-1] if ": " in text else (text or type(e).__name__)


def _api_message(body: object) -> str:
    """The ``message`` of a Kubernetes ``Status`` body, else ""."""
    if not isinstance(body, str | bytes):
        return ""
    try:
        status = json.loads(body)
    except ValueError:
        return ""
    return str(status.get("message") or "") if isinstance(status, dict) else ""


def classify(
    env: str, context: str, host: str, kind: LiveKind, e: Exception, connection: Connection
) -> ReadError:
    """One line for a failed list of ``kind``: what happened and what to do."""
    import urllib3.exceptions as u3
    from kubernetes.client.exceptions import ApiException

    resource = _resource(kind)
    if isinstance(e, ApiException):
        status = e.status or 0
        said = _api_message(e.body)
        if status == 401:
            return ReadError(
                "unauthorized",
                f"{env}: {host} refused the credentials of {context} (401 Unauthorized: "
                "expired or revoked?); log in again or refresh the kubeconfig",
                fatal=True,
            )
        if status == 403:
            return ReadError(
                "forbidden",
                f"{env}: {context} may not list {resource} (403 Forbidden"
                f"{': ' + said if said else ''}); bind the ClusterRole fleet-status-reader "
                f"(dist/{env}/platform/) to this user",
                fatal=False,
            )
        if status == 404:
            return ReadError(
                "missing-crd",
                f"{env}: {host} does not serve {resource} (404: its CRD is not installed); "
                f"install {kind.component} on the management cluster (the bootstrap of "
                f"dist/{env}/ does)",
                fatal=False,
            )
        return ReadError(
            "error",
            f"{env}: listing {resource} at {host} failed: {status} {e.reason or ''}"
            f"{': ' + said if said else ''}".rstrip(),
            fatal=status >= 500,
        )
    cause: BaseException = e
    if isinstance(e, u3.MaxRetryError) and e.reason is not None:
        cause = e.reason
    if isinstance(cause, u3.ReadTimeoutError | TimeoutError):
        return ReadError(
            "timeout",
            f"{env}: {host} ({context}) did not answer within {connection.read_timeout:g} s; "
            "check that the management cluster's API server is up and reachable",
            fatal=True,
        )
    if isinstance(cause, u3.NewConnectionError):  # a subclass of ConnectTimeoutError
        return ReadError(
            "unreachable",
            f"{env}: cannot reach {host} ({context}): {_reason(cause)}; check that the "
            "management cluster is up and the kubeconfig's server address",
            fatal=True,
        )
    if isinstance(cause, u3.ConnectTimeoutError):
        return ReadError(
            "timeout",
            f"{env}: could not connect to {host} ({context}) within "
            f"{connection.connect_timeout:g} s; check the network path (VPN, firewall) to "
            "the management cluster",
            fatal=True,
        )
    if isinstance(cause, u3.SSLError):
        return ReadError(
            "unreachable",
            f"{env}: TLS with {host} ({context}) failed ({' '.join(str(cause).split())}); "
            "check the kubeconfig's certificate-authority data",
            fatal=True,
        )
    if isinstance(cause, u3.ProtocolError | u3.HTTPError | ConnectionError | OSError):
        return ReadError(
            "unreachable",
            f"{env}: cannot reach {host} ({context}): {_reason(cause)}; check that the "
            "management cluster is up and the kubeconfig's server address",
            fatal=True,
        )
    detail = " ".join(str(e).split()) or type(e).__name__
    return ReadError("error", f"{env}: listing {resource} at {host} failed: {detail}", fatal=False)

"""The management cluster of each environment, as the workload clusters see it:
``ManagementCluster``.

Two facts the render cannot find out by itself:

* ``api_server``: the URL of the management cluster's Kubernetes API as a workload cluster
  reaches it. A cluster autoscaler that runs in a workload cluster scales that cluster's
  node pools through it (OKE: :mod:`fleet.clouds.oci.autoscaler`).
* ``egress_cidrs``: where the management cluster's traffic comes from when it reaches a
  workload cluster's API server (Cluster API, ArgoCD, provider-argocd, External Secrets).
  A cloud whose API endpoints are reachable only from listed addresses (OKE's
  ``api_allowed_cidrs``) checks at synth time that one of these is among them (a public
  endpoint sees the NAT address, a private one the routed range): a cluster the management
  cluster cannot reach is created, and then never registered.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from fleet.core.declaration import FleetConstruct
from fleet.core.errors import DefinitionError
from fleet.core.fleet import Fleet
from fleet.core.manifest import Manifest
from fleet.core.tree import Scope
from fleet.core.validators import check_cidr
from fleet.core.values import PerEnv, resolve

StrPerEnv = str | PerEnv[str]
CidrsPerEnv = Sequence[str] | PerEnv[Sequence[str]]


class ManagementCluster(FleetConstruct):
    """The management cluster of the listed environments (default: all).

    Example::

        ManagementCluster(
            fleet, "management",
            api_server=per_env(prod="https://mgmt-prod.example.org:6443",
                               default="https://mgmt-test.example.org:6443"),
            egress_cidrs=["198.51.100.17/32"],
        )

    ``api_server`` is an ``https://`` URL (host and port); ``egress_cidrs`` (left out: not
    checked) the CIDR blocks its egress comes from. Renders nothing.
    """

    def __init__(
        self,
        scope: Scope,
        construct_id: str,
        *,
        api_server: StrPerEnv,
        egress_cidrs: CidrsPerEnv | None = None,
        environments: Sequence[str] | None = None,
    ) -> None:
        super().__init__(scope, construct_id, environments=environments)
        ctx = self.context
        for other in self.fleet.declarations():
            if other is not self and isinstance(other, ManagementCluster):
                shared = set(other.environments) & set(self.environments)
                if shared:
                    raise DefinitionError(
                        f"environment {sorted(shared)[0]!r} already has a ManagementCluster "
                        f"(at {other.where})",
                        where=ctx,
                        field="environments",
                    )
        self._api_server: dict[str, str] = {}
        self._egress: dict[str, tuple[str, ...] | None] = {}
        for env in self.environments:
            url = resolve(api_server, env, where=ctx, field="api_server")
            parts = urlsplit(url) if isinstance(url, str) else None
            if (
                parts is None
                or parts.scheme != "https"
                or not parts.hostname
                or parts.path not in ("", "/")
                or parts.query
                or parts.fragment
            ):
                raise DefinitionError(
                    f"must be the https:// URL of the management cluster's API server "
                    f"(host and port, no path), got {url!r} ({env})",
                    where=ctx,
                    field="api_server",
                )
            self._api_server[env] = url.rstrip("/")
            cidrs = (
                None
                if egress_cidrs is None
                else resolve(egress_cidrs, env, where=ctx, field="egress_cidrs")
            )
            if cidrs is not None:
                if isinstance(cidrs, str) or not cidrs:
                    raise DefinitionError(
                        f"must be a non-empty list of CIDR blocks, got {cidrs!r} ({env})",
                        where=ctx,
                        field="egress_cidrs",
                    )
                for cidr in cidrs:
                    check_cidr(cidr, where=ctx, field="egress_cidrs")
                cidrs = tuple(cidrs)
            self._egress[env] = cidrs

    @classmethod
    def of(cls, fleet: Fleet, environment: str) -> ManagementCluster | None:
        """The ManagementCluster of ``environment``, None where none is declared."""
        for construct in fleet.declarations_of(ManagementCluster):
            if environment in construct.environments:
                return construct
        return None

    def api_server(self, environment: str) -> str:
        """The API server's URL in ``environment``."""
        return self._api_server[environment]

    def egress_cidrs(self, environment: str) -> tuple[str, ...] | None:
        """The egress CIDR blocks in ``environment`` (None: not declared)."""
        return self._egress[environment]

    def render(self, environment: str) -> list[Manifest]:
        """Nothing: the clusters that need it read it."""
        return []

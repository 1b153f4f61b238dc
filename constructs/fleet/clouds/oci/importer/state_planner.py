"""One ``fleet import tfstate`` of OKE clusters, as the import hook asks it
(:class:`fleet.clouds.importer.StatePlanner`): the clusters the states hold, each as the
keywords of an ``OciManagedCluster`` with its ``OkeNodePool`` s, the verify of what renders
(every carried value, at the field CAPOCI compares with OKE), and the report's lines on
each cluster (how it is adopted, what CAPOCI cannot hold, the tagging commands).

The orchestration (:mod:`fleet.importers`) places the modules, merges the same cluster
across environments, renders in the fleet and writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fleet.clouds.importer import (
    ExistingFleet,
    ImportedCluster,
    Member,
    Mismatch,
    Notes,
    StateRequest,
    keyword_after,
    tainted_lines,
)
from fleet.clouds.oci.importer.identity import Identities, chosen_identity
from fleet.clouds.oci.importer.planner import PlannedCluster, plan_cluster
from fleet.clouds.oci.importer.reader import OkeState, group_states
from fleet.clouds.oci.importer.resources import CLOUD
from fleet.clouds.oci.importer.verify import mismatches
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.manifest import Manifest
from fleet.core.pysource import Name
from fleet.terraform.state import StateFile, StateResource

POOLS = "node_pools"


@dataclass(frozen=True, kw_only=True)
class OkePool:
    """A node pool of an imported cluster (:class:`fleet.clouds.importer.ImportedPool`)."""

    resource: StateResource
    name: str


@dataclass(frozen=True, kw_only=True, eq=False)
class OkeCluster:
    """One OKE cluster of one state (:class:`fleet.clouds.importer.ImportedCluster`)."""

    planned: PlannedCluster

    @property
    def oke(self) -> OkeState:
        """The cluster with its pools as the state holds them."""
        return self.planned.oke

    @property
    def resource(self) -> StateResource:
        """Its ``oci_containerengine_cluster``."""
        return self.oke.cluster

    @property
    def state(self) -> StateFile:
        """The state that holds it."""
        return self.oke.state

    @property
    def environment(self) -> str:
        """The environment it goes to."""
        return self.planned.environment

    @property
    def environment_rule(self) -> str:
        """Why."""
        return self.planned.environment_rule

    @property
    def name(self) -> str:
        """Its name in OKE."""
        return self.oke.name

    @property
    def pools(self) -> Sequence[OkePool]:
        """Its node pools."""
        return tuple(
            OkePool(resource=p, name=str(p.attributes.get("name") or "")) for p in self.oke.pools
        )

    @property
    def where(self) -> str:
        """``<state> <address>``."""
        return self.resource.where


class OkeStatePlanner:
    """What the states hold of OKE, and the decisions of one import; made by
    :meth:`fleet.clouds.oci.importer.importer.OkeImporter.plan_states` (raises the
    DefinitionErrors of every cluster at once)."""

    def __init__(self, request: StateRequest) -> None:
        self.request = request
        errors: list[DefinitionError] = []
        found: list[OkeCluster] = []
        for oke in group_states(request.files):
            try:
                planned = plan_cluster(oke, request.config, request.environment)
            except DefinitionError as e:
                errors.append(e)
                continue
            found.append(OkeCluster(planned=planned))
        if errors:
            raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
        self._clusters = tuple(found)
        self._identities: Identities | None = None

    @property
    def clusters(self) -> Sequence[OkeCluster]:
        """Every cluster of the states, in state order."""
        return self._clusters

    @property
    def ignored(self) -> Sequence[str]:
        """``<state>: N other resource(s) not read`` lines (Magnum's words: the report
        shows each line once)."""
        out: list[str] = []
        for state in {c.state.source: c.state for c in self._clusters}.values():
            if state.others:
                shown = ", ".join(state.others[:3]) + (", ..." if len(state.others) > 3 else "")
                out.append(
                    f"{state.source}: {len(state.others)} other resource(s) not read ({shown})"
                )
        return out

    def prepare(self, existing: ExistingFleet, notes: Notes) -> dict[Path, str]:
        """No file besides the modules; the credentials CAPOCI uses for each cluster are
        decided here (:class:`~fleet.clouds.oci.importer.identity.Identities`: the fleet's
        ``CapociCredentials``, else its ``OciClusterIdentity``, else one the modules
        declare)."""
        del notes
        self._identities = Identities(
            [(c.oke, c.environment) for c in self._clusters],
            self.request.configurations,
            existing,
            self.request.config.environments,
            given=chosen_identity(self.request.options),
        )
        return {}

    def members(
        self, existing: ExistingFleet, promoted: Mapping[str, frozenset[str]], notes: Notes
    ) -> list[Member]:
        """Every cluster as the keywords of its ``OciManagedCluster`` (every value
        declared: nothing is inherited, so nothing is promoted)."""
        del promoted, notes
        if self._identities is None:
            self.prepare(existing, {})
        assert self._identities is not None
        members: list[Member] = []
        for cluster in self._clusters:
            planned = cluster.planned
            origins = {k: k for k in planned.keywords}
            chosen = self._identities.chosen.get(id(cluster.oke))
            keywords = dict(planned.keywords)
            if chosen is not None:
                # who acts for the cluster, read before what it is
                variable = Name(chosen.shared.variable)
                keywords = keyword_after(keywords, "environments", "identity", variable)
            for address, pool_keywords in planned.pools.items():
                pool = next(p for p in cluster.oke.pools if p.address == address)
                name = str(pool.attributes.get("name") or "")
                origins.update({f"{POOLS}[{name}].{k}": k for k in pool_keywords})
            members.append(
                Member(
                    cluster=cluster,
                    keywords=keywords,
                    pools={a: dict(k) for a, k in planned.pools.items()},
                    origins=origins,
                    shared=chosen.shared if chosen is not None else None,
                )
            )
        return members

    def errors(self) -> list[DefinitionError]:
        """None: every problem is raised when the states are read."""
        return []

    def verify(self, cluster: ImportedCluster, manifests: Sequence[Manifest]) -> list[Mismatch]:
        """Every carried value of ``cluster`` against the render of its environment."""
        assert isinstance(cluster, OkeCluster)
        return mismatches(cluster.oke, manifests)

    def report(self, cluster: ImportedCluster) -> list[str]:
        """How it is adopted, what CAPOCI cannot hold, and the commands that tag the
        cluster and its pools for CAPOCI before the first sync."""
        assert isinstance(cluster, OkeCluster)
        p = cluster.planned
        head = f"{cluster.name} ({cluster.environment})"
        pools = len(cluster.oke.pools)
        lines = [
            f"{head}: adopts OKE cluster {cluster.resource.attributes.get('id')} by "
            f"OCIManagedControlPlane.spec.id and its {pools} node pool(s) by "
            "OCIManagedMachinePool.spec.id; network: OkeExistingVcn (skipNetworkManagement: "
            "CAPOCI creates and changes nothing of it)"
        ]
        lines.extend(tainted_lines(head, cluster.resource, CLOUD))
        for pool in cluster.oke.pools:
            lines.extend(
                tainted_lines(f"{head}: node pool {pool.attributes.get('name')!r}", pool, CLOUD)
            )
        lines.extend(p.lines)
        if self._identities is not None:
            lines.extend(f"{head}: {line}" for line in self._identities.lines(cluster.oke))
        lines.append(
            f"{head}: before the first sync, run these in order (CAPOCI refuses a pool found "
            "by spec.id without its two tags; each update replaces the object's freeform "
            "tags, so it holds the ones it has and CAPOCI's), then set "
            "adoption_tags_applied=True:"
        )
        lines.extend(f"{head}:   {command}" for command in p.commands)
        return lines

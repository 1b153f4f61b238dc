"""The rings of an upgrade rollout: ordered selections of clusters (by environment, by the
clusters' ``fleet_labels``, by an explicit list), each with a minimum soak time, and the one
ring each cluster is in (:func:`membership`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import ClassVar

from fleet.clouds.base import FleetCluster
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.core.options import option, value_type
from fleet.core.tree import did_you_mean
from fleet.core.validators import check_dns_label
from fleet.core.values import caller_location


@value_type
class Ring:
    """One ring of an upgrade rollout: the clusters that take a target together, then soak.

    A cluster (in one environment) is in the ring when it matches everything the ring gives:
    one of ``environments`` (none: any), every one of ``labels`` among its ``fleet_labels``,
    one of ``clusters`` (none: any), and none of ``exclude``. ``clusters`` and ``exclude``
    name clusters by construct id or path (every environment of the declaration) or by
    object name (``k8s-ais-batch-dev-v25``, one environment). A canary ring is a few clusters
    named explicitly; the ring after it excludes them::

        Ring(name="canary", environments=["dev"], clusters=["edh-dev"], soak=timedelta(days=1))
        Ring(name="dev", environments=["dev"], exclude=["edh-dev"], soak=timedelta(days=2))

    ``soak`` is the least time between the commit that promoted the ring's last step and the
    promotion of the next ring (``fleet upgrade promote``).
    """

    argument_noun: ClassVar[str] = "ring"

    name: str = option(doc="The ring's name (a DNS label): how the state file and plans name it.")
    soak: timedelta = option(doc="How long the ring runs the target before the next ring may.")
    environments: Sequence[str] = option(default=(), doc="Only clusters in these environments.")
    labels: Mapping[str, str] = option(
        factory=dict, doc="Only clusters whose fleet_labels hold all of these."
    )
    clusters: Sequence[str] = option(
        default=(), doc="Only these clusters (construct ids or paths, or object names)."
    )
    exclude: Sequence[str] = option(
        default=(), doc="Not these clusters (construct ids or paths, or object names)."
    )
    where: str = option(default="", init=False, compare=False, doc="Where it was declared.")

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", caller_location())
        ctx = self.context
        check_dns_label(self.name, where=ctx, field="name")
        if self.soak < timedelta(0):
            raise DefinitionError(f"must be 0 or more, got {self.soak}", where=ctx, field="soak")
        if not (self.environments or self.labels or self.clusters):
            raise DefinitionError(
                "a ring selects clusters: give environments, labels or clusters",
                where=ctx,
                field="environments",
            )
        for field_name in ("environments", "clusters", "exclude"):
            value = tuple(getattr(self, field_name))
            if len(set(value)) != len(value):
                raise DefinitionError(
                    f"lists a name twice: {list(value)}", where=ctx, field=field_name
                )
            object.__setattr__(self, field_name, value)

    @property
    def context(self) -> str:
        """``file:line (ring <name>)``."""
        return f"{self.where} (ring {self.name})"

    def matches(self, cluster: FleetCluster, environment: str) -> bool:
        """Whether ``cluster`` in ``environment`` is in this ring."""
        if self.environments and environment not in self.environments:
            return False
        if any(cluster.fleet_labels.get(k) != v for k, v in self.labels.items()):
            return False
        names = _names(cluster, environment)
        if self.clusters and not names & set(self.clusters):
            return False
        return not names & set(self.exclude)

    def contains(self, cluster: FleetCluster, environment: str) -> bool:
        """:meth:`matches`, as ``fleet status``'s selection filter takes it."""
        return self.matches(cluster, environment)


def _names(cluster: FleetCluster, environment: str) -> set[str]:
    return {cluster.construct_id, cluster.node.path, cluster.object_name(environment)}


@dataclass(frozen=True)
class Member:
    """One cluster in one environment, and its ring."""

    cluster: FleetCluster
    environment: str
    ring: Ring

    @property
    def label(self) -> str:
        """``<env>/<object name>``."""
        return f"{self.environment}/{self.cluster.object_name(self.environment)}"


def membership(
    rings: Sequence[Ring], clusters: Iterable[FleetCluster], *, where: str
) -> list[Member]:
    """Each cluster (in each environment where it is not retired) with its one ring, in ring
    order; a cluster in no ring or in two, and a name in ``clusters``/``exclude`` that is no
    cluster, are errors (all of them at once; ``where`` is the rollout's)."""
    errors: list[DefinitionError] = []
    found: list[Member] = []
    known: set[str] = set()
    for cluster in clusters:
        for env in cluster.environments:
            known |= _names(cluster, env)
            if cluster.is_retired(env):
                continue
            matched = [r for r in rings if r.matches(cluster, env)]
            label = f"{env}/{cluster.object_name(env)}"
            if len(matched) == 1:
                found.append(Member(cluster, env, matched[0]))
            elif not matched:
                errors.append(
                    DefinitionError(
                        f"{label} is in no ring of the rollout at {where} (rings: "
                        f"{', '.join(r.name for r in rings)}): add it to a ring, or widen one",
                        where=cluster.context,
                        field="rings",
                    )
                )
            else:
                errors.append(
                    DefinitionError(
                        f"{label} is in {len(matched)} rings of the rollout at {where} "
                        f"({', '.join(r.context for r in matched)}): a cluster takes the "
                        "target with one ring; exclude it from the others",
                        where=cluster.context,
                        field="rings",
                    )
                )
    for ring in rings:
        for field_name in ("clusters", "exclude"):
            for name in getattr(ring, field_name):
                if name not in known:
                    errors.append(
                        DefinitionError(
                            f"{name!r} is no cluster of the fleet"
                            + did_you_mean(name, sorted(known)),
                            where=ring.context,
                            field=field_name,
                        )
                    )
    if errors:
        raise errors[0] if len(errors) == 1 else DefinitionErrors(errors)
    order = {ring.name: i for i, ring in enumerate(rings)}
    return sorted(found, key=lambda m: order[m.ring.name])  # stable: declaration order

"""Which Magnum cluster each :class:`~fleet.MagnumCluster` reaches in each environment,
found once per fleet: two objects reaching one Magnum cluster are refused."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fleet.core.errors import DefinitionError

if TYPE_CHECKING:
    from fleet.clouds.magnum.cluster import MagnumCluster


class MagnumIdentities:
    """Which Magnum cluster each cluster reaches in each environment, found once per fleet
    (prepare phase): two objects reaching one Magnum cluster, in two environments (two
    management clusters) or in one, would both adopt and reconcile it. provider-openstack
    v0.9.0 finds a cluster by its external name (``config/external_name.go``), which Magnum
    resolves as a name within the project (``magnum/db/sqlalchemy/api.py``
    ``get_cluster_by_name``)."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[str, ...], list[tuple[MagnumCluster, str]]] | None = None

    def check(self, cluster: MagnumCluster, kind: type[MagnumCluster]) -> None:
        """The error for ``cluster`` where an earlier declaration (by file and line, then
        environment order), or the cluster itself in an earlier environment, reaches the
        same Magnum cluster; the declarations compared are the fleet's ``kind``
        (:class:`~fleet.MagnumCluster`) instances."""
        if self._by_key is None:
            found: dict[tuple[str, ...], list[tuple[MagnumCluster, str]]] = {}
            for c in cluster.fleet.declarations():
                if isinstance(c, kind):
                    for env in c.environments:
                        if env not in c.retired_environments:
                            found.setdefault(c.magnum_identity(env), []).append((c, env))
            order = {env: i for i, env in enumerate(cluster.fleet.environment_names)}
            self._by_key = {
                key: sorted(users, key=lambda u: (u[0].where, u[0].node.path, order[u[1]]))
                for key, users in found.items()
                if len(users) > 1
            }
        for env in cluster.environments:
            key = cluster.magnum_identity(env)
            for user in self._by_key.get(key, ()):
                if user == (cluster, env):
                    break  # the earlier ones reach another cloud: later ones name this one
                if same_cloud(user, (cluster, env)):
                    raise _shared(user, (cluster, env))


def same_cloud(first: tuple[MagnumCluster, str], second: tuple[MagnumCluster, str]) -> bool:
    """Whether two (cluster, environment) pairs of one :meth:`MagnumCluster.magnum_identity`
    reach one OpenStack project: in one environment (one management cluster) always; in two,
    unless a project says ``separate_clouds`` (each environment's Secret reaches another
    cloud or project). Two project declarations with one identity (the same project id or
    name, region and auth URL, as far as declared) count as one project: the credentials in
    their Secrets, which the render cannot read, are the only thing that could tell them
    apart, so the user says so explicitly."""
    (one, one_env), (other, env) = first, second
    if one_env == env:
        return True
    a, b = one.project_for(one_env), other.project_for(env)
    return not (a.separate_clouds or b.separate_clouds)


def _shared(first: tuple[MagnumCluster, str], second: tuple[MagnumCluster, str]) -> DefinitionError:
    """The error at ``second`` (a cluster, an environment) for reaching the Magnum cluster
    ``first`` reaches."""
    (one, one_env), (other, env) = first, second
    project = other.project_for(env)
    region = other.region(env)
    place = f"project {project.project_name!r}" + (f", region {region!r}" if region else "")
    if one is other:
        names = dict.fromkeys((one.cloud_name(one_env), other.cloud_name(env)))
        what = f"environments {one_env} and {env} both render Magnum cluster " + " and ".join(
            repr(n) for n in names
        )
        fix = "put {env} in the name"
    else:
        what = (
            f"Magnum cluster {other.cloud_name(env)!r} ({env}) is also reached by cluster "
            f"{one.node.path!r} ({one.cloud_name(one_env)!r}, {one_env}, {one.where})"
        )
        fix = "rename one"
    first_project = one.project_for(one_env)
    if one_env == env:
        who, separate = "both objects", ""
    elif first_project is project:
        who = "each management cluster"
        separate = (
            f", or set separate_clouds=True on project {project.node.path!r} if each "
            "environment's credentials reach another cloud or project"
        )
    else:
        who = "each management cluster"
        place += (
            f"; projects {first_project.node.path!r} and {project.node.path!r} declare the "
            "same project, region and auth_url"
        )
        separate = (
            ", or set separate_clouds=True on both projects if their credentials reach "
            "another cloud or project"
        )
    return DefinitionError(
        f"{what} in the same OpenStack project ({place}): {who} would adopt and reconcile "
        f"the same cluster; {fix}{separate}",
        where=other.context,
        field="name",
    )

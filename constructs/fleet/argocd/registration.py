"""A cluster registered in ArgoCD through provider-argocd (the seed's Figure 14).

Every :class:`~fleet.FleetCluster` with ``register_in_argocd=True`` is registered in the
environments where it is placed as soon as the fleet declares an :class:`~fleet.ArgoCd`;
``ArgoRegistration`` is only needed for custom options (ArgoCD project, namespaces, shard,
extra labels, kubeconfig export). A cluster opts out with ``register_in_argocd=False``.

The registration reads the cluster only through the ``FleetCluster`` API, so it works for
every cloud: Magnum's kubeconfig is the Crossplane connection secret (key
``attribute.kubeconfig.raw_config`` in ``crossplane-clusters``), OKE's is Cluster API's
``<cluster>-kubeconfig`` (key ``value``).

Files: a cluster's registration (and its kubeconfig ``PushSecret``) lands in the cluster's
own folder ``dist/<env>/clusters/<cluster>/`` with sync wave 1: the cluster's Application
applies it once the cluster's own objects (wave 0) are Healthy, since a registration needs
the kubeconfig that the cluster's creation writes (and argo-cd's ``server/cluster/cluster.go``
``Create`` asks the new cluster for its version). One cluster that fails to create thus
delays its own registration only.

OKE tokens: CAPOCI writes a presigned token into ``<cluster>-kubeconfig`` and refreshes it
about every 180 s; provider-argocd copies it into ArgoCD when the secret's resourceVersion
changes, found on its poll (1 minute by default). So ArgoCD always runs on a copy that is up to
one poll older than CAPOCI's, and any provider-argocd outage longer than the token's remaining
life cuts ArgoCD off the cluster. What we do, and why (see README, "OKE tokens"):

* Implemented: the bootstrap runs provider-argocd with ``--poll=30s`` (``ArgoCd(
  provider_argocd_poll_seconds=...)``) through a ``DeploymentRuntimeConfig``, which halves the
  window. Cost: one ArgoCD API call per registered cluster per poll; the bootstrap raises
  ``--max-reconcile-rate`` to twice that demand (1,000 clusters: 67 a second instead of the
  default 10, which would take 100 s per round; docs/performance.md).
* The robust fix, documented for when OKE clusters land: a long-lived ``argocd-manager``
  ServiceAccount token in the workload cluster (what ``argocd cluster add`` does), applied by a
  Cluster API ``ClusterResourceSet`` and read back by External Secrets' Kubernetes provider
  (``authRef`` to ``<cluster>-kubeconfig``, re-read on every refresh) into a Secret that the
  registration's ``bearerTokenSecretRef`` names. It survives provider outages, but adds a
  cluster-admin token that must be rotated, and three objects per cluster. Rejected: an
  exec-based config (``oci ce cluster generate-token``) needs the OCI CLI and OCI credentials
  inside ArgoCD's own pods, and the cluster OCID, which is only known after creation.

Exporting an OKE kubeconfig (``PushSecret``) is refused: the store would hold a token that is
dead minutes after each hourly push. OKE clusters are left out of ``ArgoCd(export_kubeconfigs=
True)``, and ``ArgoRegistration(export_kubeconfig=True)`` for one is an error. People and
pipelines use an exec-based kubeconfig instead (``oci ce cluster generate-token``; see
docs/oke-clusters.md, "Kubeconfig").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from fleet.clouds.base import FleetCluster
from fleet.core.declaration import FleetConstruct
from fleet.core.errors import DefinitionError
from fleet.core.layout import AFTER_CLUSTER_WAVE, SYNC_WAVE
from fleet.core.manifest import Manifest
from fleet.core.names import label_value_from
from fleet.core.refs import Ref, article
from fleet.core.tree import Scope
from fleet.core.validators import check_dns_label, check_dns_subdomain
from fleet.core.values import PerEnv, caller_location, resolve

CLUSTER_API_VERSION = "cluster.argocd.crossplane.io/v1alpha1"
PUSH_SECRET_API_VERSION = "external-secrets.io/v1alpha1"
REGISTRATION_WAVE = AFTER_CLUSTER_WAVE
"""The registration's wave inside its cluster's Application (the cluster's objects: 0);
none where the cluster is paused (its Application then has a single wave)."""

LABEL_PREFIX = "fleet/"
LABEL_CLUSTER = LABEL_PREFIX + "cluster"
LABEL_ENVIRONMENT = LABEL_PREFIX + "environment"
LABEL_CLOUD = LABEL_PREFIX + "cloud"
LABEL_REGION = LABEL_PREFIX + "region"
LABEL_KUBERNETES_VERSION = LABEL_PREFIX + "kubernetes-version"
LABEL_TEMPLATE = LABEL_PREFIX + "template"

_LABEL_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
_LABEL_PREFIX_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def check_labels(labels: Mapping[str, str], *, where: str, field: str) -> dict[str, str]:
    """``labels`` if every key and value is a valid Kubernetes label, else an error.

    ArgoCD stores cluster labels as labels of the cluster's Secret, so the API server's
    rules apply: ApplicationSets select clusters by them.
    """
    for key, value in labels.items():
        prefix, _, name = key.rpartition("/")
        if (
            not isinstance(key, str)
            or not name
            or len(name) > 63
            or not _LABEL_NAME.match(name)
            or (prefix and (len(prefix) > 253 or not _LABEL_PREFIX_RE.match(prefix)))
        ):
            raise DefinitionError(f"invalid label key {key!r}", where=where, field=field)
        if not isinstance(value, str) or len(value) > 63 or not _LABEL_NAME.match(value):
            derived = (
                f" (the fleet's {key} label holds {label_value_from(value)!r} for it)"
                if key in (LABEL_TEMPLATE, LABEL_REGION) and isinstance(value, str)
                else ""
            )
            raise DefinitionError(
                f"label {key!r}: value must be at most 63 letters, digits, '-', '_' or '.', "
                f"starting and ending with a letter or digit, got {value!r}{derived}",
                where=where,
                field=field,
            )
    return dict(labels)


def cluster_labels(cluster: FleetCluster, environment: str) -> dict[str, str]:
    """The ArgoCD labels of ``cluster``: what ApplicationSets select on.

    ``fleet/cluster`` (the object name), ``fleet/environment``, ``fleet/cloud``,
    ``fleet/region``, ``fleet/kubernetes-version`` and, where the cloud has templates,
    ``fleet/template``; then the cluster's own ``fleet_labels``. The region and the
    template are the cloud's free text (Magnum: ``Kubernetes v1.26.8``): their labels hold
    :func:`~fleet.core.names.label_value_from` of it (``Kubernetes-v1.26.8``; no
    ``fleet/template`` when nothing is left), and :func:`cluster_annotations` the text
    itself where it differs.
    """
    labels = {
        LABEL_CLUSTER: cluster.object_name(environment),
        LABEL_ENVIRONMENT: environment,
        LABEL_CLOUD: cluster.cloud,
        LABEL_REGION: label_value_from(cluster.region(environment)),
        LABEL_KUBERNETES_VERSION: cluster.kubernetes_version(environment),
    }
    template = label_value_from(cluster.template_name(environment) or "")
    if template:
        labels[LABEL_TEMPLATE] = template
    labels.update(cluster.fleet_labels)
    return labels


def cluster_annotations(cluster: FleetCluster, environment: str) -> dict[str, str]:
    """The region's and the template's names as the cloud spells them, under the keys of
    their labels, where the label value had to differ (:func:`cluster_labels`)."""
    out: dict[str, str] = {}
    for key, text in (
        (LABEL_REGION, cluster.region(environment)),
        (LABEL_TEMPLATE, cluster.template_name(environment) or ""),
    ):
        if label_value_from(text) != text:
            out[key] = text
    return out


class ArgoRegistration(FleetConstruct):
    """Registers ``cluster`` in ArgoCD, with options the default registration lacks.

    Example::

        ArgoRegistration(fleet, "ais-batch-argocd", cluster=ais_batch,
                         project="ais", labels={"tier": "gold"})

    ``cluster`` may be a reference (``fleet.declaration("web", MagnumCluster)``) or the
    cluster's id (or path): it is looked up once every module's ``define()`` ran, so the
    cluster may be declared in any module.

    Left out: ``argocd`` is the environment's :class:`~fleet.ArgoCd` (which renders the
    registration); ``labels`` adds none;
    ``project``, ``namespaces`` and ``shard`` are not rendered (ArgoCD's defaults: every
    project, every namespace, automatic sharding); ``export_kubeconfig`` follows the
    ArgoCd's ``export_kubeconfigs`` for the environment. The registration is placed in every
    environment of the cluster.
    """

    cluster: FleetCluster

    def __init__(
        self,
        scope: Scope,
        construct_id: str,
        *,
        cluster: FleetCluster | Ref[FleetCluster] | str,
        argocd: Registrar | None = None,
        labels: Mapping[str, str] | None = None,
        project: str | None = None,
        namespaces: Sequence[str] | None = None,
        shard: int | None = None,
        export_kubeconfig: bool | PerEnv[bool] | None = None,
    ) -> None:
        if not isinstance(cluster, (FleetCluster, Ref, str)):
            raise DefinitionError(
                f"must be a FleetCluster, a reference to one or its id, got "
                f"{type(cluster).__name__}",
                where=caller_location(),
                field="cluster",
            )
        # A cluster given by reference or id may be declared in a module loaded later: the
        # registration takes its environments in prepare().
        envs = cluster.environments if isinstance(cluster, FleetCluster) else ()
        super().__init__(scope, construct_id, environments=envs)
        ctx = self.context
        self._cluster_ref: Ref[FleetConstruct] | None = None
        if isinstance(cluster, str):
            self._cluster_ref = self.fleet.reference(
                cluster,
                FleetConstruct,  # type: ignore[type-abstract]  # any kind; checked in prepare()
                where=ctx,
                field="cluster",
            )
        elif isinstance(cluster, Ref):
            self._cluster_ref = cluster
        else:
            self._check_cluster(cluster)
            self.cluster = cluster
        self.argocd = argocd
        self.labels = check_labels(labels or {}, where=ctx, field="labels")
        for key in self.labels:
            if key.startswith(LABEL_PREFIX):
                raise DefinitionError(
                    f"{key!r}: labels under {LABEL_PREFIX} are the fleet's own, set from "
                    "the cluster's declaration",
                    where=ctx,
                    field="labels",
                )
        # an AppProject's name, and namespaces of the cluster: Kubernetes object names
        self.project = (
            None if project is None else check_dns_subdomain(project, where=ctx, field="project")
        )
        self.namespaces = (
            None
            if namespaces is None
            else [
                n if n == "*" else check_dns_label(n, where=ctx, field="namespaces")
                for n in namespaces
            ]
        )
        if shard is not None and (isinstance(shard, bool) or not isinstance(shard, int)):
            raise DefinitionError(f"must be an integer, got {shard!r}", where=ctx, field="shard")
        if shard is not None and shard < 0:
            raise DefinitionError(f"must be 0 or more, got {shard}", where=ctx, field="shard")
        self.shard = shard
        self.export_kubeconfig = export_kubeconfig
        if isinstance(cluster, FleetCluster):
            self._check_export(cluster)

    def _check_export(self, cluster: FleetCluster) -> None:
        if self.export_kubeconfig is not None and cluster.kubeconfig_export_refused:
            for env in cluster.environments:
                exports_kubeconfig(self, env, False)

    def _check_cluster(self, cluster: FleetCluster) -> None:
        if not cluster.register_in_argocd:
            raise DefinitionError(
                f"cluster {cluster.construct_id!r} opted out (register_in_argocd=False); "
                "remove the opt-out or this registration",
                where=self.context,
                field="cluster",
            )
        for other in self.fleet.declarations():
            if (
                other is not self
                and isinstance(other, ArgoRegistration)
                and getattr(other, "cluster", None) is cluster
            ):
                raise DefinitionError(
                    f"cluster {cluster.construct_id!r} is already registered (at {other.where})",
                    where=self.context,
                    field="cluster",
                )

    def prepare(self) -> None:
        """A cluster given by reference or id (resolved whatever the module order): take
        its environments."""
        if self._cluster_ref is None:
            return
        cluster = self._cluster_ref.get()
        if not isinstance(cluster, FleetCluster):
            raise DefinitionError(
                f"{self._cluster_ref.target_path!r} is {article(type(cluster).__name__)}, "
                "not a FleetCluster",
                where=self.context,
                field="cluster",
            )
        self._check_cluster(cluster)
        object.__setattr__(self, "cluster", cluster)
        object.__setattr__(self, "environments", cluster.environments)
        self._check_export(cluster)

    def render(self, environment: str) -> list[Manifest]:
        """Nothing of its own: the environment's ArgoCd renders the registration (into the
        cluster's folder). Fails, naming this registration, when no ArgoCd is declared."""
        if self.argocd is None and not any(
            isinstance(c, Registrar) and environment in c.environments
            for c in self.fleet.declarations()
        ):
            raise DefinitionError(
                f"no ArgoCd is declared for environment {environment!r}; declare one "
                "(see clusters/platform.py) or pass argocd=",
                where=self.context,
                field="argocd",
            )
        return []


@runtime_checkable
class Registrar(Protocol):
    """What renders registrations: the ArgoCd of an environment (a protocol, so that this
    module needs nothing from :mod:`fleet.argocd.argo_cd`)."""

    environments: tuple[str, ...]

    def registration_manifests(
        self,
        cluster: FleetCluster,
        environment: str,
        registration: ArgoRegistration | None,
    ) -> list[Manifest]:
        """The registration of ``cluster`` in ``environment``."""
        ...

    def registered(self, environment: str) -> list[tuple[FleetCluster, ArgoRegistration | None]]:
        """Every cluster registered in ``environment``, with its explicit registration."""
        ...


@dataclass(frozen=True, kw_only=True)
class KubeconfigExport:
    """Where registrations push kubeconfigs: a ClusterSecretStore and the remote key
    pattern (``{env}``, ``{cluster}``)."""

    store: str
    remote_key: str


def render_registration(
    cluster: FleetCluster,
    environment: str,
    registration: ArgoRegistration | None,
    *,
    provider_config: str,
    export: KubeconfigExport | None,
) -> list[Manifest]:
    """The registration of ``cluster`` (and its kubeconfig PushSecret when ``export``), in
    the cluster's folder, in the wave after the cluster's own objects (in the same wave
    where the cluster is paused: a Suspended cluster would hold a later wave for ever)."""
    if environment not in cluster.environments or cluster.is_retired(environment):
        return []
    source = registration.context if registration else cluster.context
    folder = cluster.folder(environment)
    bodies = [
        registration_body(
            cluster, environment, provider_config=provider_config, registration=registration
        )
    ]
    if export is not None:
        bodies.append(push_secret(cluster, environment, export))
    if not cluster.is_paused(environment):
        for body in bodies:
            body["metadata"]["annotations"] = {SYNC_WAVE: str(REGISTRATION_WAVE)}
    return [Manifest(environment, body, folder, source) for body in bodies]


def push_secret(
    cluster: FleetCluster, environment: str, export: KubeconfigExport
) -> dict[str, Any]:
    """The External Secrets ``PushSecret`` that copies the cluster's kubeconfig to the store."""
    ref = cluster.kubeconfig_secret(environment)
    name = cluster.object_name(environment)
    remote_key = export.remote_key.replace("{env}", environment).replace("{cluster}", name)
    return {
        "apiVersion": PUSH_SECRET_API_VERSION,
        "kind": "PushSecret",
        "metadata": {"name": f"{name}-kubeconfig-export", "namespace": ref.namespace},
        "spec": {
            "data": [{"match": {"remoteRef": {"remoteKey": remote_key}, "secretKey": ref.key}}],
            # The store keeps the kubeconfig when the PushSecret goes (a cluster retired
            # from the fleet may still run).
            "deletionPolicy": "None",
            "refreshInterval": "1h",
            "secretStoreRefs": [{"kind": "ClusterSecretStore", "name": export.store}],
            "selector": {"secret": {"name": ref.name}},
            "updatePolicy": "Replace",
        },
    }


def registration_body(
    cluster: FleetCluster,
    environment: str,
    *,
    provider_config: str,
    registration: ArgoRegistration | None = None,
) -> dict[str, Any]:
    """The provider-argocd ``Cluster`` for ``cluster`` in ``environment``."""
    name = cluster.object_name(environment)
    labels = cluster_labels(cluster, environment)
    where = registration.context if registration else cluster.context
    for_provider: dict[str, Any] = {
        "config": {"kubeconfigSecretRef": cluster.kubeconfig_secret(environment).to_dict()},
        "name": name,
    }
    if registration is not None:
        labels.update(registration.labels)
        if registration.project is not None:
            for_provider["project"] = registration.project
        if registration.namespaces is not None:
            for_provider["namespaces"] = registration.namespaces
        if registration.shard is not None:
            for_provider["shard"] = registration.shard
    for_provider["labels"] = check_labels(labels, where=where, field="fleet_labels")
    annotations = cluster_annotations(cluster, environment)
    if annotations:
        for_provider["annotations"] = annotations
    return {
        "apiVersion": CLUSTER_API_VERSION,
        "kind": "Cluster",
        "metadata": {"name": name},
        "spec": {
            "forProvider": for_provider,
            "providerConfigRef": {"name": provider_config},
        },
    }


def exports_kubeconfig(
    registration: ArgoRegistration | None,
    environment: str,
    default: bool,
    *,
    cluster: FleetCluster | None = None,
) -> bool:
    """Whether the registration's kubeconfig is pushed to the secret store in ``environment``.

    A cluster whose class refuses export (``kubeconfig_export_refused``, OKE: a token that
    expires within minutes) is left out of the ArgoCd-wide ``export_kubeconfigs`` default, and
    an explicit ``export_kubeconfig=True`` for it is an error.
    """
    subject = cluster or (registration.cluster if registration else None)
    refused = subject.kubeconfig_export_refused if subject is not None else ""
    if registration is None or registration.export_kubeconfig is None:
        return default and not refused
    value = resolve(
        registration.export_kubeconfig,
        environment,
        where=registration.context,
        field="export_kubeconfig",
    )
    if value and refused:
        raise DefinitionError(
            f"{refused}; set export_kubeconfig=False for {environment}",
            where=registration.context,
            field="export_kubeconfig",
        )
    return bool(value)

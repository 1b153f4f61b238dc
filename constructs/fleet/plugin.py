"""The extension API: everything a plug-in (a cloud, a fleet-wide component, a subcommand)
is written against, typed, in one module.

A plug-in imports from ``fleet`` (the constructs a fleet declares), ``fleet.plugin`` (this
module) and ``fleet.testing`` (its tests), and nothing deeper: what is here is the contract,
the rest of the package may move. ``docs/architecture.md`` ("Writing a plug-in") walks one
from zero; ``tests/fixtures/clouds/capo`` is a whole cloud written against it.

* **A cloud**: a :class:`FleetCluster` subclass (an abstract base: the methods marked
  abstract are what the fleet calls) whose ``plugin`` is a :class:`CloudPlugin` listing its
  :class:`PlatformComponent` values, :class:`ReferenceRules`, :class:`ChangeRule` values
  and what ``fleet diff`` guards; fields are :func:`option` entries, value types
  :func:`value_type`.
* **Slots** (what a plug-in fills instead of editing the tool): ``PlatformComponent.crds``
  (its own pinned CRDs), ``Platform.of(fleet).add(...)`` (a fleet-wide component), the
  shared Cluster API pieces (:data:`CLUSTER_API`, :data:`KUBEADM_BOOTSTRAP`,
  :data:`KUBEADM_CONTROL_PLANE`, :func:`infrastructure_provider`,
  :data:`KUBEADM_CHANGE_RULES`), :data:`AGE_FUNCTION` (for a health check that bounds a
  transient state), and subcommands (a :data:`Registrar` published under the
  entry-point group :data:`COMMANDS_GROUP`).
* **Its importer** (``fleet import tfstate``): ``CloudPlugin(importer=ImporterEntry(...))``,
  whose ``load`` gives a :class:`CloudImporter`: the :class:`ResourceSpec` of each Terraform
  resource type it reads (the options' ``terraform=`` columns decide each attribute's fate,
  :class:`AttributeValue`), the :class:`GeneratedCode` its modules call (``module=`` its
  own), and a :class:`StatePlanner` per import (:class:`StateRequest` in; a :class:`Member`
  per cluster, :class:`Mismatch` es from its verify out). An installed distribution names
  its cluster class under the entry-point group :data:`CLOUDS_GROUP` (``fleet.clouds``) so
  that ``fleet import`` finds it.
"""

from fleet.clouds.base import (
    CLOUDS_GROUP,
    CloudPlugin,
    CreateOnlyField,
    FleetCluster,
    IgnoreDifference,
    ImporterEntry,
    ImportHelp,
    ImportOption,
    Lifecycle,
    NeedsSecrets,
    NodeCounts,
    NodePoolSummary,
    resolve_counts,
    unique_pools,
)
from fleet.clouds.importer import (
    CloudImporter,
    ExistingFleet,
    GeneratedCode,
    ImportedCluster,
    ImportedPool,
    Member,
    Mismatch,
    Notes,
    SharedDecl,
    StatePlanner,
    StateRequest,
    TfvarsImporter,
    environment_of,
    fate_lines,
    tainted_lines,
)
from fleet.codegen.shared import Repetition
from fleet.core.commands import COMMANDS_GROUP, Handler, Registrar, Subparsers
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError, DefinitionErrors, FleetError
from fleet.core.manifest import Manifest, dig
from fleet.core.options import option, options_of, value_type
from fleet.core.pysource import Call, Name
from fleet.core.pysource import Value as SourceValue
from fleet.core.tree import Scope
from fleet.core.validators import check_dns_label, check_kubernetes_version
from fleet.core.values import PerEnv, SecretKeyRef, per_env, resolve
from fleet.platform.cert_manager import CERT_MANAGER
from fleet.platform.changes import Body, Change, ChangeRule, Objects, Verdict
from fleet.platform.cluster_api import (
    BOOTSTRAP_GROUP,
    CAPI_GROUP,
    CLUSTER_API,
    CLUSTER_API_OPERATOR,
    CONTROLPLANE_GROUP,
    INFRASTRUCTURE_GROUP,
    ProviderOptions,
    infrastructure_provider,
    operator_health,
    ready_health,
    ready_health_checks,
)
from fleet.platform.component import (
    ChartInstall,
    DirectoryInstall,
    HealthCheck,
    InstallContext,
    Kind,
    ObjectsInstall,
    PlatformComponent,
    Preinstalled,
)
from fleet.platform.crossplane import CROSSPLANE, CrossplaneProvider
from fleet.platform.health_lua import AGE_FUNCTION
from fleet.platform.kubeadm import KUBEADM_BOOTSTRAP, KUBEADM_CHANGE_RULES, KUBEADM_CONTROL_PLANE
from fleet.platform.plugins import Platform, Plugin, PluginSet
from fleet.platform.references import FieldRef, ReferenceRules, SecretProducer
from fleet.platform.upjet import ForceNewRules
from fleet.terraform.attributes import (
    CARRIED,
    COMPUTED,
    DECLARED,
    DEFAULT,
    INHERITED,
    UNSET,
    Parent,
    ResourceSpec,
    empty,
)
from fleet.terraform.attributes import Value as AttributeValue
from fleet.terraform.state import StateFile, StateResource

__all__ = [
    "AGE_FUNCTION",
    "BOOTSTRAP_GROUP",
    "CAPI_GROUP",
    "CARRIED",
    "CERT_MANAGER",
    "CLOUDS_GROUP",
    "CLUSTER_API",
    "CLUSTER_API_OPERATOR",
    "COMMANDS_GROUP",
    "COMPUTED",
    "CONTROLPLANE_GROUP",
    "CROSSPLANE",
    "DECLARED",
    "DEFAULT",
    "INFRASTRUCTURE_GROUP",
    "INHERITED",
    "KUBEADM_BOOTSTRAP",
    "KUBEADM_CHANGE_RULES",
    "KUBEADM_CONTROL_PLANE",
    "UNSET",
    "AttributeValue",
    "Body",
    "Call",
    "Change",
    "ChangeRule",
    "ChartInstall",
    "CloudImporter",
    "CloudPlugin",
    "CreateOnlyField",
    "CrossplaneProvider",
    "DefinitionError",
    "DefinitionErrors",
    "DirectoryInstall",
    "ExistingFleet",
    "FieldRef",
    "FleetCluster",
    "FleetConfig",
    "FleetError",
    "ForceNewRules",
    "GeneratedCode",
    "Handler",
    "HealthCheck",
    "IgnoreDifference",
    "ImportHelp",
    "ImportOption",
    "ImportedCluster",
    "ImportedPool",
    "ImporterEntry",
    "InstallContext",
    "Kind",
    "Lifecycle",
    "Manifest",
    "Member",
    "Mismatch",
    "Name",
    "NeedsSecrets",
    "NodeCounts",
    "NodePoolSummary",
    "Notes",
    "Objects",
    "ObjectsInstall",
    "Parent",
    "PerEnv",
    "Platform",
    "PlatformComponent",
    "Plugin",
    "PluginSet",
    "Preinstalled",
    "ProviderOptions",
    "ReferenceRules",
    "Registrar",
    "Repetition",
    "ResourceSpec",
    "Scope",
    "SecretKeyRef",
    "SecretProducer",
    "SharedDecl",
    "SourceValue",
    "StateFile",
    "StatePlanner",
    "StateRequest",
    "StateResource",
    "Subparsers",
    "TfvarsImporter",
    "Verdict",
    "check_dns_label",
    "check_kubernetes_version",
    "dig",
    "empty",
    "environment_of",
    "fate_lines",
    "infrastructure_provider",
    "operator_health",
    "option",
    "options_of",
    "per_env",
    "ready_health",
    "ready_health_checks",
    "resolve",
    "resolve_counts",
    "tainted_lines",
    "unique_pools",
    "value_type",
]

"""An OpenStack project: the credentials Crossplane uses for its clusters."""

from __future__ import annotations

from collections.abc import Sequence

from fleet.clouds.base import FleetCluster
from fleet.core.declaration import FleetConstruct
from fleet.core.layout import PLATFORM, PROTECT, sync_options
from fleet.core.manifest import Manifest
from fleet.core.options import option
from fleet.core.tree import name_from_id
from fleet.core.validators import check_dns_subdomain
from fleet.core.values import SecretKeyRef

PROVIDER_CONFIG_API = "openstack.crossplane.io/v1beta1"
ANNOTATION_PREFIX = "fleet.openstack/"
CREDENTIALS_KEY = "credentials"
"""The Secret key the ProviderConfig reads by default (upstream's example uses it too)."""
CREDENTIAL_KEYS = (
    "auth_url",
    "region",
    "user_name",
    "user_id",
    "application_credential_id",
    "application_credential_name",
    "application_credential_secret",
    "tenant_id",
    "tenant_name",
    "password",
    "token",
    "user_domain_name",
    "user_domain_id",
    "project_domain_name",
    "project_domain_id",
    "domain_id",
    "domain_name",
    "default_domain",
    "system_scope",
    "insecure",
    "cacert_file",
    "cert",
    "key",
    "endpoint_type",
    "endpoint_overrides",
    "swauth",
    "use_octavia",
    "disable_no_cache_header",
    "delayed_auth",
    "allow_reauth",
    "max_retries",
    "enable_logging",
)
"""The keys provider-openstack v0.9.0 copies from the credentials JSON (any other key is
dropped; every value must be a JSON string): ``internal/clients/openstack.go``."""


class OpenStackProject(FleetConstruct):
    """An OpenStack project, rendered as a provider-openstack ``ProviderConfig``.

    It appears in every environment where one of its clusters uses it (a cluster may use
    one project per environment: ``project=per_env(dev=a, prod=b)``). Credentials
    stay in a Secret that the management cluster already holds; only the reference
    is rendered. provider-openstack reads that key as a flat JSON object of string
    values with Terraform's provider argument names (``auth_url``, ``region``,
    ``application_credential_id``, ``application_credential_secret``, or ``user_name``,
    ``password``, ``tenant_name``, ``user_domain_name``, ...; see
    :data:`CREDENTIAL_KEYS`), never a ``clouds.yaml``. The connection parameters that
    are not secret (``auth_url``, ``region``, ...) are recorded as annotations so that
    nothing from a tfvars file is lost; left out, they are not rendered.

    The ProviderConfig has the same name in every environment, and reads the Secret each
    management cluster holds: by default the fleet takes them for one project, and refuses
    two environments that reach one Magnum cluster (the same name, or UUID, in the same
    project and region). ``separate_clouds=True`` states that each environment's Secret
    reaches another cloud or project.

    Example::

        jeedy = OpenStackProject(fleet, "jeedy-ais", project_name="JEEDY AIS")
    """

    project_name: str = option(doc="The OpenStack project's name.")
    _name: str | None = option(
        default=None,
        alias="name",
        doc="The ProviderConfig's name (default: the construct id, after the prefixes of "
        "the Components it is declared in, :func:`~fleet.core.tree.name_from_id`).",
    )
    _credentials: SecretKeyRef | None = option(
        default=None,
        alias="credentials",
        doc="The credentials JSON (default: key ``credentials`` of Secret "
        "``<name>-openstack-credentials`` in ``crossplane-system``).",
    )
    project_id: str | None = option(default=None, doc="The project's id (an annotation).")
    auth_url: str | None = option(default=None, doc="Keystone's URL (an annotation).")
    region: str | None = option(
        default=None, doc="The credentials' region: the clusters' unless they say."
    )
    interface: str | None = option(default=None, doc="The endpoint interface (an annotation).")
    identity_api_version: str | None = option(
        default=None, doc="Keystone's API version (an annotation)."
    )
    separate_clouds: bool = option(
        default=False,
        doc="Each environment's credentials reach another OpenStack cloud or project: its "
        "clusters may use one Magnum name in several environments.",
    )
    _environments: Sequence[str] | None = option(default=None, init=False)
    """A project renders where its clusters are (:meth:`prepare`): not an argument."""

    def __post_init__(self) -> None:
        """The ProviderConfig's name and credentials."""
        super().__post_init__()
        self.name: str = check_dns_subdomain(
            self._name or name_from_id(self), where=self.context, field="name"
        )
        self.credentials: SecretKeyRef = self._credentials or SecretKeyRef(
            name=f"{self.name}-openstack-credentials",
            namespace="crossplane-system",
            key=CREDENTIALS_KEY,
        )
        self._details = {
            "project-name": self.project_name,
            "project-id": self.project_id,
            "auth-url": self.auth_url,
            "region": self.region,
            "interface": self.interface,
            "identity-api-version": self.identity_api_version,
        }
        self._used_in: frozenset[str] = frozenset()

    @property
    def details(self) -> dict[str, str | None]:
        """The connection parameters as declared (``project-name``, ``project-id``, ...)."""
        return dict(self._details)

    def prepare(self) -> None:
        """Render in the environments of the clusters that name the project (looked up
        once every ``define()`` has run, so in any module order)."""
        self._used_in = self.fleet.catalog(_ProjectUse).environments(self)

    def render(self, environment: str) -> list[Manifest]:
        """The ProviderConfig, in the environments where a cluster uses the project."""
        if environment not in self._used_in:
            return []
        annotations = {
            ANNOTATION_PREFIX + key: value for key, value in self._details.items() if value
        }
        annotations.update(sync_options(PROTECT))
        body = {
            "apiVersion": PROVIDER_CONFIG_API,
            "kind": "ProviderConfig",
            "metadata": {"name": self.name, "annotations": annotations},
            "spec": {
                "credentials": {"source": "Secret", "secretRef": self.credentials.to_dict()},
            },
        }
        return [self._manifest(environment, PLATFORM, body)]

    def required_secrets(self, environment: str) -> list[tuple[SecretKeyRef, str]]:
        """The credentials Secret a person creates (for the bootstrap's disaster-recovery
        list): provider-openstack reads it as a JSON object of strings
        (crossplane-contrib/provider-openstack ``internal/clients/openstack.go``)."""
        if environment not in self._used_in:
            return []
        return [
            (
                self.credentials,
                'a JSON object of strings: {"auth_url", "region", '
                '"application_credential_id", "application_credential_secret"}',
            )
        ]


class _ProjectUse:
    """Which environments each project is used in, found once per fleet (prepare phase):
    a cluster's ``project_for(environment)`` (a cluster may use one project per
    environment)."""

    def __init__(self) -> None:
        self._by_project: dict[int, frozenset[str]] | None = None

    def environments(self, project: OpenStackProject) -> frozenset[str]:
        if self._by_project is None:
            found: dict[int, set[str]] = {}
            for declaration in project.fleet.declarations():
                project_for = getattr(declaration, "project_for", None)
                if not isinstance(declaration, FleetCluster) or not callable(project_for):
                    continue
                for env in declaration.environments:
                    used = project_for(env)
                    if isinstance(used, OpenStackProject):
                        found.setdefault(id(used), set()).add(env)
            self._by_project = {key: frozenset(envs) for key, envs in found.items()}
        return self._by_project.get(id(project), frozenset())

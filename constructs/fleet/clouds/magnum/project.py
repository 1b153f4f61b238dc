"""An OpenStack project: the credentials Crossplane uses for its clusters."""

from __future__ import annotations

from fleet.clouds.base import FleetCluster
from fleet.core.declaration import FleetConstruct
from fleet.core.layout import PLATFORM, PROTECT, sync_options
from fleet.core.manifest import Manifest
from fleet.core.tree import Scope, name_from_id
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

    It appears in every environment where one of its clusters is placed. Credentials
    stay in a Secret that the management cluster already holds; only the reference
    is rendered. provider-openstack reads that key as a flat JSON object of string
    values with Terraform's provider argument names (``auth_url``, ``region``,
    ``application_credential_id``, ``application_credential_secret``, or ``user_name``,
    ``password``, ``tenant_name``, ``user_domain_name``, ...; see
    :data:`CREDENTIAL_KEYS`), never a ``clouds.yaml``. The connection parameters that
    are not secret (``auth_url``, ``region``, ...) are recorded as annotations so that
    nothing from a tfvars file is lost; left out, they are not rendered.

    Example::

        jeedy = OpenStackProject(fleet, "jeedy-ais", project_name="JEEDY AIS")
    """

    def __init__(
        self,
        scope: Scope,
        construct_id: str,
        *,
        project_name: str,
        name: str | None = None,
        credentials: SecretKeyRef | None = None,
        project_id: str | None = None,
        auth_url: str | None = None,
        region: str | None = None,
        interface: str | None = None,
        identity_api_version: str | None = None,
    ) -> None:
        """``name`` (the ProviderConfig's name) defaults to the construct id, after the
        prefixes of the Components it is declared in (:func:`~fleet.core.tree.name_from_id`);
        ``credentials`` default to key ``credentials`` (the JSON object) of Secret
        ``<name>-openstack-credentials`` in ``crossplane-system``."""
        super().__init__(scope, construct_id, environments=None)
        self.name = check_dns_subdomain(
            name or name_from_id(self), where=self.context, field="name"
        )
        self.project_name = project_name
        self.credentials = credentials or SecretKeyRef(
            name=f"{self.name}-openstack-credentials",
            namespace="crossplane-system",
            key=CREDENTIALS_KEY,
        )
        self.region = region
        self._details = {
            "project-name": project_name,
            "project-id": project_id,
            "auth-url": auth_url,
            "region": region,
            "interface": interface,
            "identity-api-version": identity_api_version,
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

    @property
    def used_in(self) -> frozenset[str]:
        """The environments where a cluster uses the project (known in the prepare phase)."""
        return self._used_in

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
    """Which environments each project is used in, found once per fleet (prepare phase)."""

    def __init__(self) -> None:
        self._by_project: dict[int, frozenset[str]] | None = None

    def environments(self, project: OpenStackProject) -> frozenset[str]:
        if self._by_project is None:
            found: dict[int, set[str]] = {}
            for declaration in project.fleet.declarations():
                used = getattr(declaration, "project", None)
                if isinstance(declaration, FleetCluster) and isinstance(used, OpenStackProject):
                    found.setdefault(id(used), set()).update(declaration.environments)
            self._by_project = {key: frozenset(envs) for key, envs in found.items()}
        return self._by_project.get(id(project), frozenset())

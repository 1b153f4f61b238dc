"""CAPOCI's own, controller-wide OCI credentials: ``CapociCredentials``."""

from __future__ import annotations

from collections.abc import Sequence

from fleet.core.declaration import FleetConstruct
from fleet.core.manifest import Manifest
from fleet.core.tree import Scope
from fleet.core.validators import check_dns_subdomain
from fleet.core.values import SecretKeyRef

CAPOCI_NAMESPACE = "capoci-system"
"""Where CAPOCI runs (its InfrastructureProvider's namespace), and where its Secret is."""


class CapociCredentials(FleetConstruct):
    """CAPOCI's default credentials in the listed environments (default: all): a Secret
    named ``secret`` in ``capoci-system`` that a person creates, holding clusterctl
    variables with their real names (``OCI_TENANCY_ID_B64``, ``OCI_USER_ID_B64``,
    ``OCI_CREDENTIALS_FINGERPRINT_B64``, ``OCI_REGION_B64``, ``OCI_CREDENTIALS_KEY_B64``,
    ``USE_INSTANCE_PRINCIPAL_B64``: each the base64 of the value).

    The InfrastructureProvider then names it as its ``configSecret``. Without one, CAPOCI
    starts without credentials (``--init-oci-clients-on-startup=false``) and every OKE
    cluster must name an :class:`~fleet.OciClusterIdentity`. Renders nothing itself.

    Example::

        CapociCredentials(fleet, "capoci", secret="capoci-variables", environments=["prod"])
    """

    def __init__(
        self,
        scope: Scope,
        construct_id: str,
        *,
        secret: str,
        environments: Sequence[str] | None = None,
    ) -> None:
        super().__init__(scope, construct_id, environments=environments)
        self.secret = check_dns_subdomain(secret, where=self.context, field="secret")

    def render(self, environment: str) -> list[Manifest]:
        """Nothing: the InfrastructureProvider names the Secret (fleet.clouds.oci.plugin)."""
        return []

    def required_secrets(self, environment: str) -> list[tuple[SecretKeyRef, str]]:
        """The Secret a person creates (for the bootstrap's disaster-recovery list)."""
        # The whole Secret is needed; a reference names one key: the first variable.
        ref = SecretKeyRef(name=self.secret, namespace=CAPOCI_NAMESPACE, key="OCI_TENANCY_ID_B64")
        return [(ref, "clusterctl variables OCI_TENANCY_ID_B64, OCI_USER_ID_B64, ...")]

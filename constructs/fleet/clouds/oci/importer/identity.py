"""The credentials CAPOCI uses for imported OKE clusters.

An environment whose fleet declares :class:`~fleet.CapociCredentials` needs nothing: CAPOCI
acts with its own. Otherwise every imported cluster gets an :class:`~fleet.OciClusterIdentity`:

- the fleet's own, when it declares exactly one (or, of several, the one this import would
  declare, by construct id or Secret name): looked up by construct id, as Magnum's import
  reuses a project;
- else one per tenancy, declared by the generated module (the first one that uses it; the
  others look it up), named ``oci-tenancy-<the tenancy OCID's last 10 characters>``. The
  tenancy is the root of the cluster's compartment (the state's ``oci_identity_compartment``
  parents, up to an ``ocid1.tenancy.`` OCID), else the ``tenancy_ocid`` of ``--source``'s
  ``provider "oci"`` block (a literal, or a variable's literal default or tfvars value).
  Unknown: one per state, ``oci-<state>``. The same cluster address in several
  environments' states shares one identity (each environment's management cluster holds
  its own Secret of that name).

The identity names a Secret (``<identity>-principal``) that a person creates before the first
sync; the report says where, with the keys CAPOCI v0.24.0 reads (``cloud/util/util.go``
``GetOrBuildClientFromIdentity``: ``tenancy``, ``user``, ``fingerprint``, ``key``,
``passphrase``, ``region``; ``cloud/config/config.go`` names them). The tenancy and user OCIDs
and the key's fingerprint are shown when known; the private key never is: neither
``private_key`` nor ``private_key_path`` is read, nor any key file.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fleet.clouds.importer import ExistingFleet, SharedDecl
from fleet.clouds.oci.credentials import CapociCredentials
from fleet.clouds.oci.identity import OciClusterIdentity
from fleet.clouds.oci.importer.help import OCI_IDENTITY
from fleet.clouds.oci.importer.reader import OkeState
from fleet.codegen.layout import FLEET
from fleet.core.errors import DefinitionError
from fleet.core.names import is_dns_label, object_name_from
from fleet.core.options import options_of
from fleet.core.pysource import Call
from fleet.terraform.hcl import Block, Configuration
from fleet.terraform.tfvars import read_tfvars

IDENTITY_CLASS = OciClusterIdentity.__name__
TENANCY_PREFIX = "ocid1.tenancy."
SECRET_KEYS = (
    "tenancy, user, fingerprint, key (the PEM API signing key); passphrase, region optional"
)
"""The keys of the principal Secret, as CAPOCI v0.24.0 ``cloud/util/util.go`` reads them."""
_TENANCY_ID = "oci-tenancy-"
"""The construct id of an identity this import declares for a known tenancy starts so."""
_GENERIC = ("terraform", "state", "default", "show", "tfstate")
_VARIABLE = re.compile(r"^\$\{var\.([A-Za-z_][A-Za-z0-9_-]*)\}$")


@dataclass(frozen=True, kw_only=True)
class Principal:
    """What the state and ``--source`` say of the OCI principal of one state (no secret)."""

    tenancy: str | None = None
    tenancy_from: str = ""
    user: str | None = None
    fingerprint: str | None = None


def tenancy_of(oke: OkeState) -> str | None:
    """The tenancy of the cluster's compartment: its ancestry in the state's compartments,
    up to an ``ocid1.tenancy.`` OCID (the root compartment is the tenancy)."""
    current = str(oke.cluster.attributes.get("compartment_id") or "")
    seen: set[str] = set()
    while current and current not in seen:
        if current.startswith(TENANCY_PREFIX):
            return current
        seen.add(current)
        current = oke.compartments.get(current, "")
    return None


def _root_values(configuration: Configuration) -> dict[str, object]:
    """The root module's tfvars values (``terraform.tfvars``, ``*.auto.tfvars``); a file
    that does not read is left out (it holds no value the import needs)."""
    values: dict[str, object] = {}
    root = configuration.root
    for path in [root / "terraform.tfvars", *sorted(root.glob("*.auto.tfvars"))]:
        if not path.is_file():
            continue
        try:
            found, _ = read_tfvars(path)
        except DefinitionError:
            continue
        values.update(found)
    return values


def _literal(
    block: Block, argument: str, configuration: Configuration, tfvars: Mapping[str, object]
) -> str | None:
    """An argument of the provider block as a string: a literal, or ``var.x`` with a
    literal tfvars value or default; None otherwise."""
    value = block.arguments.get(argument)
    if not isinstance(value, str):
        return None
    if value.startswith('"') and value.endswith('"') and "${" not in value:
        return value[1:-1] or None
    match = _VARIABLE.match(value)
    if match is None:
        return None
    name = match.group(1)
    given = tfvars.get(name)
    if isinstance(given, str):
        return given or None
    root = configuration.modules.get(())
    variable = root.find("variable", name) if root is not None else None
    default = variable.arguments.get("default") if variable is not None else None
    if isinstance(default, str) and default.startswith('"') and "${" not in default:
        return default[1:-1] or None
    return None


def principal_of(oke: OkeState, configuration: Configuration | None) -> Principal:
    """The tenancy (from the state, else the provider block), the user OCID and the key's
    fingerprint (from the provider block): never its private key."""
    tenancy = tenancy_of(oke)
    tenancy_from = "the root of the cluster's compartment in the state" if tenancy else ""
    user = fingerprint = None
    root = configuration.modules.get(()) if configuration is not None else None
    if configuration is not None and root is not None:
        providers = [b for b in root.of_kind("provider") if b.labels == ("oci",)]
        block = next((b for b in providers if "alias" not in b.arguments), None)
        if block is not None:
            tfvars = _root_values(configuration)
            given = _literal(block, "tenancy_ocid", configuration, tfvars)
            if tenancy is None and given and given.startswith(TENANCY_PREFIX):
                tenancy, tenancy_from = given, f"tenancy_ocid at {block.at('tenancy_ocid')}"
            user = _literal(block, "user_ocid", configuration, tfvars)
            fingerprint = _literal(block, "fingerprint", configuration, tfvars)
    return Principal(tenancy=tenancy, tenancy_from=tenancy_from, user=user, fingerprint=fingerprint)


def state_stem(path: Path, environments: Sequence[str]) -> str:
    """A state's name for an identity: the file's, or its folder's when the file's says
    nothing (``terraform.tfstate``, ``prod.tfstate``, a ``state/`` folder)."""
    name = path.name
    for suffix in (".show.json", ".tfstate.json", ".tfstate", ".json"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    folder = path.resolve().parent
    if name.lower() in _GENERIC or name in environments:
        name = folder.name
        if name.lower() == "state":
            name = folder.parent.name
    return object_name_from(name) or "state"


@dataclass(kw_only=True)
class Chosen:
    """The identity of one group of clusters, and what the report says of it."""

    shared: SharedDecl
    lines: list[str] = field(default_factory=list)


class Identities:
    """The identity (or none) of every cluster of one import (see the module docstring)."""

    def __init__(
        self,
        clusters: Sequence[tuple[OkeState, str]],
        configurations: Mapping[str, Configuration],
        existing: ExistingFleet,
        environments: Sequence[str],
        given: str | None = None,
    ) -> None:
        self.environments = environments
        self.given = given
        """``--oci-identity``: the construct id every cluster's identity has."""
        credentials = [d for d, _ in existing.declarations if isinstance(d, CapociCredentials)]
        covered = {env for c in credentials for env in c.environments}
        self.declared = [
            (d, f) for d, f in existing.declarations if isinstance(d, OciClusterIdentity)
        ]
        self.taken = existing.ids
        by_address: dict[str, list[tuple[OkeState, str]]] = {}
        for oke, env in clusters:
            by_address.setdefault(oke.cluster.address, []).append((oke, env))
        self.principals = {
            id(oke): principal_of(oke, configurations.get(oke.state.source)) for oke, _ in clusters
        }
        self.chosen: dict[int, Chosen] = {}
        """id(OkeState) -> its identity."""
        self.credentials_lines: dict[int, str] = {}
        groups: dict[tuple[str, str], list[tuple[OkeState, str]]] = {}
        if given is not None:
            self._check_given(given)
        for found in by_address.values():
            if given is None and all(env in covered for _, env in found):
                for oke, env in found:
                    self.credentials_lines[id(oke)] = (
                        f"credentials: CAPOCI's own (CapociCredentials for {env}): no identity"
                    )
                continue
            keys = [("given", given) if given else self._key(oke) for oke, _ in found]
            tenancies = {k for k in keys if k[0] == "tenancy"}
            if len(found) > 1 and len(tenancies) <= 1:
                # The same cluster in several environments: one identity.
                keys = [min(tenancies) if tenancies else keys[0]] * len(found)
            for (oke, env), key in zip(found, keys, strict=True):
                groups.setdefault(key, []).append((oke, env))
        for key, members in groups.items():
            chosen = self._choose(key, members)
            for oke, _ in members:
                self.chosen[id(oke)] = chosen

    def _key(self, oke: OkeState) -> tuple[str, str]:
        tenancy = self.principals[id(oke)].tenancy
        return ("tenancy", tenancy) if tenancy else ("state", oke.state.source)

    def _choose(self, key: tuple[str, str], members: Sequence[tuple[OkeState, str]]) -> Chosen:
        first = members[0][0]
        principal = self.principals[id(first)]
        if key[0] == "given":
            construct_id = key[1]
        elif key[0] == "tenancy":
            construct_id = object_name_from(f"{_TENANCY_ID}{key[1][-10:]}")
        else:
            construct_id = f"oci-{state_stem(first.state.path, self.environments)}"
        secret = f"{construct_id}-principal"
        envs = sorted({env for _, env in members}, key=self._env_order)
        match = self._match(construct_id, secret)
        if match is not None:
            identity, how = match
            variable = _variable(identity.construct_id)
            shared = SharedDecl(
                variable=variable,
                cls=IDENTITY_CLASS,
                reused=identity.construct_id,
                reused_from=f"{identity.where}, {how}",
            )
            lines = [
                f"credentials: OciClusterIdentity {identity.construct_id!r} of {identity.where} "
                f"({how}; no CapociCredentials for {', '.join(envs)})",
                _secret_line(identity.principal_secret_namespace, identity.principal_secret, envs),
            ]
            if principal.tenancy:
                lines.append(
                    f"credentials: that Secret must hold a principal of tenancy "
                    f"{principal.tenancy} ({principal.tenancy_from})"
                )
            return Chosen(shared=shared, lines=lines)
        if construct_id in self.taken and self.given is None:
            construct_id = f"{construct_id}-identity"
            secret = f"{construct_id}-principal"
        call = Call(
            callee=IDENTITY_CLASS,
            positional=(FLEET, construct_id),
            keywords=(("principal_secret", secret),),
        )
        namespace = str(options_of(OciClusterIdentity)["namespace"].default)
        why = (
            "--oci-identity"
            if key[0] == "given"
            else f"tenancy {principal.tenancy} ({principal.tenancy_from})"
            if principal.tenancy
            else "its state (the tenancy is unknown: no compartment of the state reaches an "
            "ocid1.tenancy., and no --source provider block gives tenancy_ocid)"
        )
        others = (
            f"; the fleet's {len(self.declared)} other(s) are not this one's"
            if self.declared
            else ""
        )
        lines = [
            f"credentials: declares OciClusterIdentity {construct_id!r} for {why} (no "
            f"CapociCredentials for {', '.join(envs)}{others})",
            _secret_line(namespace, secret, envs),
            "credentials:   " + _command(namespace, secret, principal),
        ]
        return Chosen(
            shared=SharedDecl(variable=_variable(construct_id), cls=IDENTITY_CLASS, call=call),
            lines=lines,
        )

    def _check_given(self, construct_id: str) -> None:
        """``--oci-identity`` names an identity of the fleet, or an id nothing else has."""
        if not is_dns_label(construct_id):
            raise DefinitionError(
                f"{construct_id!r} is not a DNS-1123 label (an identity's name: lower-case "
                "letters, digits and '-', at most 63)",
                where=OCI_IDENTITY.flag,
            )
        if any(i.construct_id == construct_id for i, _ in self.declared):
            return
        if construct_id in self.taken:
            raise DefinitionError(
                f"{construct_id!r} is declared in {self.taken[construct_id]}, and not as an "
                "OciClusterIdentity",
                where=OCI_IDENTITY.flag,
            )

    def _env_order(self, env: str) -> int:
        order = list(self.environments)
        return order.index(env) if env in order else len(order)

    def _match(self, construct_id: str, secret: str) -> tuple[OciClusterIdentity, str] | None:
        """The fleet's identity to reuse: the one of that construct id or Secret, else its
        only one, unless that one is an import's of another tenancy (``oci-tenancy-...``)."""
        other = [
            i
            for i, _ in self.declared
            if construct_id.startswith(_TENANCY_ID)
            and i.construct_id.startswith(_TENANCY_ID)
            and i.construct_id != construct_id
        ]
        for identity, _ in self.declared:
            if identity.construct_id == construct_id:
                how = "--oci-identity" if self.given else "the same construct id"
                return identity, how
        if self.given is not None:
            return None
        for identity, _ in self.declared:
            if identity.principal_secret == secret:
                return identity, "the same principal Secret"
        if len(self.declared) == 1 and not other:
            return self.declared[0][0], "the fleet's only OciClusterIdentity"
        return None

    def lines(self, oke: OkeState) -> list[str]:
        """The report's lines on the cluster's credentials."""
        found = self.chosen.get(id(oke))
        if found is None:
            line = self.credentials_lines.get(id(oke))
            return [line] if line else []
        return list(found.lines)


def _variable(construct_id: str) -> str:
    """The local name of an identity in ``define``: ``oci-devops`` -> ``oci_devops``."""
    name = re.sub(r"[^a-z0-9]+", "_", construct_id.lower()).strip("_")
    return name if name[:1].isalpha() else f"identity_{name}"


def _secret_line(namespace: str, secret: str, envs: Sequence[str]) -> str:
    where = ", ".join(envs)
    return (
        f"credentials: before the first sync, create Secret {namespace}/{secret} in the "
        f"management cluster of {where} (keys {SECRET_KEYS}; CAPOCI v0.24.0 "
        "cloud/util/util.go GetOrBuildClientFromIdentity)"
    )


def _command(namespace: str, secret: str, principal: Principal) -> str:
    """``kubectl create secret generic ...``: the known OCIDs and fingerprint, placeholders
    for the rest; the key from a file the person names (never read here)."""
    parts = [
        "kubectl",
        "create",
        "secret",
        "generic",
        secret,
        "--namespace",
        namespace,
        f"--from-literal=tenancy={principal.tenancy or 'TENANCY_OCID'}",
        f"--from-literal=user={principal.user or 'USER_OCID'}",
        f"--from-literal=fingerprint={principal.fingerprint or 'KEY_FINGERPRINT'}",
        "--from-file=key=API_SIGNING_KEY.pem",
    ]
    return shlex.join(parts)


def chosen_identity(options: Mapping[str, Sequence[str]]) -> str | None:
    """The construct id ``--oci-identity`` gives, None when it is not given (refused when
    given twice with different values)."""
    given = list(dict.fromkeys(options.get(OCI_IDENTITY.flag, ())))
    if len(given) > 1:
        raise DefinitionError(
            f"given twice ({given[0]!r} and {given[1]!r}): every imported cluster uses one",
            where=OCI_IDENTITY.flag,
        )
    return given[0] if given else None

"""What Terraform can write in the names and addresses of a state or configuration.

A state is input from outside (a shared backend, a colleague's laptop): a name or address
that Terraform itself could never write was not written by Terraform, and is refused when
it is read, before it reaches a report, a message or generated code. What Terraform
writes (hashicorp/terraform v1.15.9, hashicorp/hcl v2.24.0):

- a resource's type and name, a module call's name: ``hclsyntax.ValidIdentifier``
  (``internal/configs/resource.go``, ``module_call.go``; hcl ``hclsyntax/public.go``, the
  scanner's ``Ident = (ID_Start | '_') (ID_Continue | '-')*``): "A name must start with a
  letter or underscore and may contain only letters, digits, underscores, and dashes";
- an instance key in an address: ``addrs.StringKey.String`` quotes it with
  ``toHCLQuotedString`` (``internal/addrs/instance_key.go``), which escapes ``\\n``,
  ``\\r``, ``\\t`` and every rune ``unicode.IsPrint`` refuses: an address is printable;
- an attribute's name: provider schemas are refused unless every attribute name matches
  ``^[a-z0-9_]+$`` (``internal/configs/configschema/internal_validate.go`` ``validName``,
  checked for every resource and data source in
  ``internal/schemarepo/loadschemas/plugins.go``).

Map keys and string values (labels, names of a cloud's objects) are data: Terraform writes
any string there; they reach generated code only as literals.
"""

from __future__ import annotations

import re
from pathlib import Path

from fleet.core.errors import DefinitionError
from fleet.core.pysource import py_str

_ATTRIBUTE = re.compile(r"[a-z0-9_]+")


def is_terraform_name(text: str) -> bool:
    """Whether Terraform accepts ``text`` as a resource type or name or a module call's
    name (an HCL identifier: a letter or ``_``, then letters, digits, ``_`` and ``-``)."""
    return bool(text) and text[0] != "-" and text.replace("-", "_").isidentifier()


def is_attribute_name(text: str) -> bool:
    """Whether a provider schema may name an attribute ``text``."""
    return _ATTRIBUTE.fullmatch(text) is not None


def one_line(text: str) -> str:
    """``text`` for a message, on one line: itself when printable, else a literal with
    every other character escaped (``"a\\nb"``)."""
    return text if text.isprintable() else py_str(text)


def shown_path(path: Path) -> str:
    """A file's path for messages, on one line (see :func:`one_line`)."""
    return one_line(str(path))


def check_name(text: str, *, what: str, where: str, field: str) -> None:
    """Refuse a ``what`` (``resource name``) that Terraform never writes."""
    if not is_terraform_name(text):
        raise DefinitionError(
            f"{what} {py_str(text)} is not a name Terraform accepts (a letter or underscore, "
            "then letters, digits, underscores and dashes): not written by Terraform; "
            "nothing is written",
            where=where,
            field=field,
        )


def check_address(text: str, *, where: str, field: str) -> None:
    """Refuse an address (or module path) with a character Terraform escapes in one (a
    control character, a line break, anything not printable)."""
    if not text.isprintable():
        raise DefinitionError(
            f"address {py_str(text)} holds a character Terraform never writes in one (a "
            "control character or line break): not written by Terraform; nothing is written",
            where=where,
            field=field,
        )


def check_attributes(attributes: dict[str, object], *, where: str) -> None:
    """Refuse an attribute name no provider schema can have."""
    for key in attributes:
        if not isinstance(key, str) or not is_attribute_name(key):
            raise DefinitionError(
                f"attribute name {py_str(str(key))} is not one a provider schema can have "
                "(lowercase letters, digits, underscores): not written by Terraform; "
                "nothing is written",
                where=where,
                field="attributes",
            )

"""Reads a Terraform configuration's blocks (``--source DIR``): which arguments a resource
sets, on which line, and what its ``lifecycle { ignore_changes }`` lists.

Values are not evaluated (the state holds them): an argument is kept in its source form
(python-hcl2 8.1.4's serialisation: ``"${var.x}"`` for an expression, ``'"text"'`` for a
string literal), for telling shapes apart (a cloud's importer: Magnum's
:mod:`fleet.clouds.magnum.importer.shapes`) and never printed.
Local module calls (``source = "./..."`` or ``"../..."``) are followed, so that a resource
of the state at ``module.a.module.b.<type>.<name>`` finds its block.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import hcl2
import lark
from hcl2.rules.abstract import LarkElement
from hcl2.rules.base import AttributeRule, BlockRule, StartRule
from hcl2.utils import SerializationOptions

from fleet.core.errors import DefinitionError
from fleet.core.redact import parser_error, unquoted
from fleet.terraform.names import check_name

if TYPE_CHECKING:
    from fleet.terraform.state import StateResource

_OPTIONS = SerializationOptions(with_comments=False, explicit_blocks=False, preserve_heredocs=False)
ALL = "all"
"""``ignore_changes = all``."""
_REFERENCE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*)\}$")


@dataclass(frozen=True, kw_only=True)
class Block:
    """One block of a ``.tf`` file: ``resource "type" "name" { ... }`` and the like."""

    file: Path
    line: int
    kind: str
    """``resource``, ``data``, ``module``, ``variable``, ``provider``, ``locals``, ..."""
    labels: tuple[str, ...]
    arguments: Mapping[str, Any]
    """Argument -> its expression in source form (see the module docstring)."""
    lines: Mapping[str, int]
    """Argument -> its line."""
    ignore_changes: tuple[str, ...] = ()
    """The attributes ``lifecycle { ignore_changes }`` names (``("all",)`` for ``all``)."""

    @property
    def where(self) -> str:
        """``file:line`` of the block."""
        return f"{self.file}:{self.line}"

    def at(self, argument: str) -> str:
        """``file:line`` of an argument (the block's line when it is absent)."""
        return f"{self.file}:{self.lines.get(argument, self.line)}"

    @property
    def name(self) -> str:
        """The last label: the resource's, module's or variable's name."""
        return self.labels[-1] if self.labels else ""

    def reference(self, argument: str) -> str | None:
        """The argument when it is one plain reference (``var.clusters``), else None."""
        match = _REFERENCE.match(str(self.arguments.get(argument, "")))
        return match.group(1) if match else None


@dataclass(frozen=True, kw_only=True)
class Folder:
    """The blocks of one folder's ``.tf`` files (a Terraform module)."""

    path: Path
    blocks: tuple[Block, ...]

    def find(self, kind: str, *labels: str) -> Block | None:
        """The block of that kind and labels."""
        return next((b for b in self.blocks if b.kind == kind and b.labels == labels), None)

    def of_kind(self, kind: str) -> Iterator[Block]:
        """Every block of that kind."""
        return (b for b in self.blocks if b.kind == kind)


@dataclass(frozen=True, kw_only=True)
class Configuration:
    """A root module and the local modules it calls, by module path (``("k8s_cluster",)``)."""

    root: Path
    modules: Mapping[tuple[str, ...], Folder] = field(default_factory=dict)
    unread: Mapping[tuple[str, ...], str] = field(default_factory=dict)
    """Module paths whose source is not a local folder: path -> the source."""

    def block(self, module_path: tuple[str, ...], kind: str, *labels: str) -> Block | None:
        """The block of a resource or data source in a module of this configuration."""
        folder = self.modules.get(module_path)
        return folder.find(kind, *labels) if folder is not None else None

    def why_missing(self, module_path: tuple[str, ...], block: str) -> str:
        """Why the block of a state resource is not in this configuration, for the report."""
        for depth in range(len(module_path), 0, -1):
            source = self.unread.get(module_path[:depth])
            if source is not None:
                return f"module {'.'.join(module_path[:depth])} comes from {source}, not a folder"
        shown = "".join(f"module.{m}." for m in module_path)
        return f"no block {shown}{block} in {self.root}"


def parse(path: Path, prepare: Callable[[str], str] | None = None) -> StartRule:
    """The syntax tree of one HCL file (``prepare`` first rewrites its text); a
    DefinitionError naming file:line for a file that cannot be read or parsed: the position
    and what the grammar expected (:func:`fleet.core.redact.parser_error`), never the text."""
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise DefinitionError(f"cannot read: {e}", where=source) from None
    try:
        return hcl2.parses(prepare(text) if prepare else text)
    except lark.exceptions.UnexpectedInput as e:
        line, message = parser_error(e)  # the position and what was expected, no text
        raise DefinitionError(message, where=f"{source}:{line}" if line else source) from None
    except (lark.exceptions.LarkError, RuntimeError, ValueError) as e:
        raise DefinitionError(f"malformed HCL: {unquoted(str(e))}", where=source) from None


def line_of(element: LarkElement) -> int:
    """The line an element of the syntax tree starts on (0: unknown)."""
    meta = getattr(element, "_meta", None)
    return int(getattr(meta, "line", 0) or 0)


def read_file(path: Path) -> tuple[Block, ...]:
    """Every top-level block of one ``.tf`` file; a DefinitionError naming file:line for
    HCL that does not parse."""
    tree = parse(path)
    return tuple(
        _block(path, child) for child in tree.body.children if isinstance(child, BlockRule)
    )


def _unquote(label: Any) -> str:
    text = str(label)
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text


_NAMED = {
    "resource": ("resource type", "resource name"),
    "data": ("data source type", "data source name"),
    "module": ("module name",),
}
"""The labels Terraform reads as names (refused unless they are: nothing else reads them)."""


def _block(path: Path, block: BlockRule) -> Block:
    labels = [_unquote(label.serialize(_OPTIONS)) for label in block.labels]
    for what, label in zip(_NAMED.get(labels[0], ()), labels[1:], strict=False):
        check_name(label, what=what, where=f"{path}:{line_of(block)}", field=labels[0])
    arguments: dict[str, Any] = {}
    lines: dict[str, int] = {}
    ignored: tuple[str, ...] = ()
    for child in block.body.children:
        if isinstance(child, AttributeRule):
            name = str(child.identifier.serialize(_OPTIONS))
            try:
                arguments[name] = child.expression.serialize(_OPTIONS)
            except (RuntimeError, ValueError, TypeError):
                arguments[name] = None
            lines[name] = line_of(child)
        elif isinstance(child, BlockRule):
            inner = [_unquote(label.serialize(_OPTIONS)) for label in child.labels]
            lines.setdefault(inner[0], line_of(child))
            arguments.setdefault(inner[0], {})
            if inner == ["lifecycle"]:
                ignored = _ignore_changes(child)
    return Block(
        file=path,
        line=line_of(block),
        kind=labels[0],
        labels=tuple(labels[1:]),
        arguments=arguments,
        lines=lines,
        ignore_changes=ignored,
    )


def _ignore_changes(lifecycle: BlockRule) -> tuple[str, ...]:
    try:
        body = lifecycle.body.serialize(_OPTIONS)
    except (RuntimeError, ValueError, TypeError):
        return ()
    value = body.get("ignore_changes")
    if value in (ALL, "${all}"):
        return (ALL,)
    if not isinstance(value, list):
        return ()
    found: list[str] = []
    for item in value:
        text = str(item)
        text = text[2:-1] if text.startswith("${") and text.endswith("}") else text
        # labels["x"] or labels.x: the attribute is the first step.
        found.append(re.split(r"[.\[]", text, maxsplit=1)[0])
    return tuple(dict.fromkeys(found))


def read_folder(path: Path) -> Folder:
    """The blocks of every ``*.tf`` file of a folder, in file order."""
    blocks: list[Block] = []
    for file in sorted(path.glob("*.tf")):
        blocks.extend(read_file(file))
    return Folder(path=path, blocks=tuple(blocks))


def read_configuration(root: Path) -> Configuration:
    """The root module at ``root`` and every local module it calls, to any depth."""
    if not root.is_dir():
        what = "a file, not the configuration's folder" if root.exists() else "no such folder"
        raise DefinitionError(what, where=str(root), field="--source")
    if not any(root.glob("*.tf")):
        raise DefinitionError("holds no .tf file", where=str(root), field="--source")
    modules: dict[tuple[str, ...], Folder] = {}
    unread: dict[tuple[str, ...], str] = {}

    def walk(path: tuple[str, ...], folder: Path, seen: tuple[Path, ...]) -> None:
        read = read_folder(folder)
        modules[path] = read
        for call in read.of_kind("module"):
            source = _unquote(call.arguments.get("source", ""))
            child = (*path, call.name)
            target = (folder / source).resolve()
            if not source.startswith(("./", "../")) or not target.is_dir() or target in seen:
                unread[child] = source or "(no source)"
                continue
            walk(child, target, (*seen, target))

    walk((), root, (root.resolve(),))
    return Configuration(root=root, modules=modules, unread=unread)


def resource_block(configuration: Configuration, resource: StateResource) -> Block | None:
    """The ``resource`` (or ``data``) block of a state resource in ``configuration``."""
    kind = "data" if resource.mode == "data" else "resource"
    return configuration.block(resource.module_path, kind, resource.type, resource.name)

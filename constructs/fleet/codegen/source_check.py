"""The check of a generated module's syntax tree, before anything writes or runs it.

A generator writes declarations and nothing else (:mod:`fleet.core.pysource` quotes
every piece of input), and this module proves it on the result: the text is printable
ASCII, parses, and holds only the nodes a generator emits, as :class:`Shape` lists them:

- the docstring, then ``from fleet import ...`` and imports of names from the fleet's own
  declaration modules (``from <package>.<module> import NAME``);
- module-level constants: a name bound to a literal, or to a call the shape allows there;
- at most one ``def define(fleet: Fleet) -> None:`` (exactly one but in the catalog
  module), its body its docstring, then calls of declaration classes as statements, or
  bound to new names, and ``fleet.declaration("id", Class)`` look-ups bound to names;
- arguments: literals (str, int, bool, None; dict, list, tuple of them), names defined
  above (or ``fleet``), nested allowed calls, a starred generator over a tuple of literal
  rows (``*(NodeGroup(...) for zone, group_id in (("a", "1"), ...))``) whose f-strings
  hold nothing but ``{variable}`` of that generator.

Anything else (an attribute other than ``fleet.declaration``, a subscript, a lambda,
another call or statement, an import of another module, a dunder, a name that shadows a
builtin) is a bug of the generator: :class:`GeneratedCodeError`, one line.
"""

from __future__ import annotations

import ast
import builtins
import io
import tokenize
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from fleet.core.errors import DefinitionError
from fleet.core.pysource import is_identifier

_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True, kw_only=True)
class Shape:
    """What a generated module may hold (one allow-list for every generator)."""

    docstring_prefix: str
    """What the module's docstring starts with."""
    calls: frozenset[str]
    """The declaration classes and functions imported from ``fleet`` it may call."""
    module_calls: frozenset[str]
    """Those of :attr:`calls` a module-level constant may be bound to."""
    lookups: frozenset[str]
    """The classes ``fleet.declaration("id", Class)`` may look up."""
    fleet_type: str = "Fleet"
    """``define``'s annotation, imported from ``fleet``."""
    plugin_names: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """An installed cloud's module -> the names of :attr:`calls` imported from it (not
    from ``fleet``)."""

    @property
    def fleet_names(self) -> frozenset[str]:
        """Every name ``from fleet import`` may bring."""
        theirs = frozenset().union(*self.plugin_names.values())
        return (self.calls | self.lookups | {self.fleet_type}) - theirs


class GeneratedCodeError(DefinitionError):
    """A generated module holds what no generator writes: a bug, refused."""


class _Refused(Exception):
    def __init__(self, at: ast.AST | int | None, what: str) -> None:
        super().__init__(what)
        self.line = at if isinstance(at, int) else getattr(at, "lineno", 0)
        self.what = what


DEFINE, ARGUMENT, LOOKUP = "define", "fleet", "declaration"


def check_source(text: str, shape: Shape, *, package: str, catalog: bool, where: str) -> None:
    """Refuse ``text`` (the module a generator wrote for the file ``where``) unless it has
    the shape (see the module docstring); ``package`` is the fleet's declarations package,
    ``catalog`` whether the module is the template catalog (no ``define``)."""
    try:
        try:
            _Checker(shape, package).module(text, catalog=catalog)
        except RecursionError:
            raise _Refused(None, "expressions nested deeper than any generator nests") from None
    except _Refused as e:
        line = f"line {e.line}: " if e.line else ""
        raise GeneratedCodeError(
            f"{line}{e.what}: the generated module holds what no import writes (a bug of "
            "the importer); refused, nothing written or run",
            where=where,
        ) from None


class _Checker:
    def __init__(self, shape: Shape, package: str) -> None:
        self.shape = shape
        self.package = package

    # -- the module
    def module(self, text: str, *, catalog: bool) -> None:
        for number, line in enumerate(text.split("\n"), start=1):
            if not all(" " <= c <= "~" for c in line):
                raise _Refused(number, "a character outside printable ASCII")
        encoding, _ = tokenize.detect_encoding(io.BytesIO(text.encode("ascii")).readline)
        if encoding != "utf-8":
            raise _Refused(None, f"an encoding declaration ({encoding})")
        try:
            tree = ast.parse(text)
        except SyntaxError as e:
            raise _Refused(e.lineno or 0, "not Python") from None
        body = list(tree.body)
        about = _docstring(body[0]) if body else None
        if about is None or body[0].lineno != 1:
            raise _Refused(body[0] if body else None, "no docstring first")
        if not about.startswith(self.shape.docstring_prefix):
            raise _Refused(body[0], "a docstring that does not say the module is generated")
        scope: set[str] = set()
        defines = 0
        imports_done = False
        for node in body[1:]:
            if isinstance(node, ast.ImportFrom) and not imports_done:
                self.import_from(node, scope)
                continue
            imports_done = True
            if isinstance(node, ast.Assign):
                target = self.binding(node, scope)
                if not _is_literal(node.value):
                    self.call(node.value, scope, module_level=True)
                scope.add(target)
            elif isinstance(node, ast.FunctionDef) and node.name == DEFINE and not catalog:
                defines += 1
                if defines > 1:
                    raise _Refused(node, f"a second {DEFINE}()")
                self.define(node, scope)
            else:
                raise _Refused(node, f"a statement of kind {type(node).__name__}")
        if defines != (0 if catalog else 1):
            raise _Refused(None, f"no {DEFINE}(fleet) function")

    def import_from(self, node: ast.ImportFrom, scope: set[str]) -> None:
        module = node.module or ""
        if node.level != 0:
            raise _Refused(node, "a relative import")
        if module == "fleet":
            allowed = self.shape.fleet_names
        elif module in self.shape.plugin_names:
            allowed = self.shape.plugin_names[module]
        else:
            head, dot, tail = module.partition(".")
            if head != self.package or not dot or not is_identifier(tail):
                raise _Refused(node, f"an import from {module!r}")
            allowed = None
        for alias in node.names:
            name = alias.name
            if alias.asname is not None or not is_identifier(name):
                raise _Refused(node, f"an import of {name!r}")
            if allowed is not None and name not in allowed:
                raise _Refused(node, f"an import of {name!r} from {module}")
            if allowed is None and (name in self.shape.fleet_names or name == ARGUMENT):
                raise _Refused(node, f"{name!r} imported from {module!r}")
            self.new_name(node, name, scope)
            scope.add(name)

    def new_name(self, node: ast.AST, name: str, scope: set[str]) -> None:
        """Check that ``name`` may be bound (a name, not a builtin, not taken)."""
        if not is_identifier(name) or name in _BUILTINS or name == ARGUMENT or name in scope:
            raise _Refused(node, f"the name {name!r} (a builtin, taken, or not a name)")

    def binding(self, node: ast.Assign, scope: set[str]) -> str:
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            raise _Refused(node, "an assignment to something other than one name")
        name = node.targets[0].id
        self.new_name(node, name, scope)
        return name

    # -- define
    def define(self, node: ast.FunctionDef, scope: set[str]) -> None:
        arguments = node.args
        argument = arguments.args[0] if len(arguments.args) == 1 else None
        if (
            argument is None
            or arguments.posonlyargs
            or arguments.vararg
            or arguments.kwonlyargs
            or arguments.kwarg
            or arguments.defaults
            or arguments.kw_defaults
            or node.decorator_list
            or getattr(node, "type_params", None)
            or argument.arg != ARGUMENT
            or not _is_name(argument.annotation, self.shape.fleet_type)
            or self.shape.fleet_type not in scope
            or not (isinstance(node.returns, ast.Constant) and node.returns.value is None)
        ):
            raise _Refused(node, f"a {DEFINE}() other than def {DEFINE}(fleet: Fleet) -> None")
        if not node.body or not _is_docstring(node.body[0]):
            raise _Refused(node, f"{DEFINE}() without its docstring first")
        local = {*scope, ARGUMENT}
        for statement in node.body[1:]:
            if isinstance(statement, ast.Assign):
                target = self.binding(statement, local)
                self.call(statement.value, local, lookup=True)
                local.add(target)
            elif isinstance(statement, ast.Expr):
                self.call(statement.value, local)
            else:
                raise _Refused(statement, f"a statement of kind {type(statement).__name__}")

    # -- expressions
    def call(
        self,
        node: ast.expr,
        scope: set[str],
        targets: Sequence[str] = (),
        *,
        module_level: bool = False,
        lookup: bool = False,
    ) -> None:
        """A call of an allowed class (or, bound to a name in define, a look-up); in a
        generator's element, f-strings of its variables (``targets``)."""
        if not isinstance(node, ast.Call):
            raise _Refused(node, f"a {type(node).__name__} where a declaration call goes")
        if lookup and isinstance(node.func, ast.Attribute):
            self.lookup(node, scope)
            return
        allowed = self.shape.module_calls if module_level else self.shape.calls
        if not isinstance(node.func, ast.Name) or node.func.id not in allowed:
            raise _Refused(node, f"a call of {_shown(node.func)}")
        if node.func.id not in scope:
            raise _Refused(node, f"a call of {node.func.id!r}, which is not imported")
        for argument in node.args:
            self.expr(argument, scope, targets)
        for keyword in node.keywords:
            if keyword.arg is None or not is_identifier(keyword.arg):
                raise _Refused(keyword, "a keyword that is not a name (**)")
            self.expr(keyword.value, scope, targets)

    def lookup(self, node: ast.Call, scope: set[str]) -> None:
        func = node.func
        ok = (
            isinstance(func, ast.Attribute)
            and _is_name(func.value, ARGUMENT)
            and ARGUMENT in scope
            and func.attr == LOOKUP
            and not node.keywords
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Constant)
            and type(node.args[0].value) is str
            and isinstance(node.args[1], ast.Name)
            and node.args[1].id in self.shape.lookups
            and node.args[1].id in scope
        )
        if not ok:
            raise _Refused(node, f"a call of {_shown(func)} other than a look-up")

    def expr(self, node: ast.expr, scope: set[str], targets: Sequence[str]) -> None:
        """An argument: a literal, a name in scope, an allowed call, a list (with a
        generator), a dict, a tuple, an f-string of ``targets``."""
        if _is_literal(node):
            return
        if isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load) or node.id not in scope:
                raise _Refused(node, f"the name {node.id!r}, defined nowhere above")
        elif isinstance(node, ast.Call):
            self.call(node, scope, targets)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if not (isinstance(key, ast.Constant) and type(key.value) is str):
                    raise _Refused(node, "a dict key that is not a string")
                self.expr(value, scope, targets)
        elif isinstance(node, ast.List | ast.Tuple):
            for item in node.elts:
                if isinstance(item, ast.Starred) and isinstance(node, ast.List):
                    self.generator(item, scope)
                else:
                    self.expr(item, scope, targets)
        elif isinstance(node, ast.JoinedStr) and targets:
            for part in node.values:
                if isinstance(part, ast.Constant) and type(part.value) is str:
                    continue
                if not (
                    isinstance(part, ast.FormattedValue)
                    and isinstance(part.value, ast.Name)
                    and part.value.id in targets
                    and part.conversion == -1
                    and part.format_spec is None
                ):
                    raise _Refused(node, "an f-string holding more than a {variable}")
        else:
            raise _Refused(node, f"an expression of kind {type(node).__name__}")

    def generator(self, node: ast.Starred, scope: set[str]) -> None:
        """``*(element for a, b in ((literal, literal), ...))``."""
        value = node.value
        if not isinstance(value, ast.GeneratorExp) or len(value.generators) != 1:
            raise _Refused(node, "a starred item other than one generator")
        (loop,) = value.generators
        if loop.ifs or loop.is_async:
            raise _Refused(node, "a generator with a condition")
        names = loop.target.elts if isinstance(loop.target, ast.Tuple) else [loop.target]
        targets: list[str] = []
        for name in names:
            if not isinstance(name, ast.Name):
                raise _Refused(node, "a generator variable that is not a name")
            self.new_name(node, name.id, scope | set(targets))
            targets.append(name.id)
        if not isinstance(loop.iter, ast.Tuple):
            raise _Refused(node, "a generator over something other than a tuple of rows")
        for row in loop.iter.elts:
            if not _is_literal(row):
                raise _Refused(row, "a generator row that is not a literal")
            if isinstance(loop.target, ast.Tuple) and not (
                isinstance(row, ast.Tuple) and len(row.elts) == len(targets)
            ):
                raise _Refused(row, "a generator row that does not match its variables")
        self.expr(value.elt, scope | set(targets), targets)


def _shown(node: ast.expr) -> str:
    """An expression in a message: its source, cut short."""
    text = ast.unparse(node)
    return repr(text if len(text) <= 40 else text[:40] + "...")


def _is_name(node: ast.expr | None, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _docstring(node: ast.stmt) -> str | None:
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        value = node.value.value
        return value if type(value) is str else None
    return None


def _is_docstring(node: ast.stmt) -> bool:
    return _docstring(node) is not None


def _is_literal(node: ast.expr) -> bool:
    """A constant (str, int, bool, None), a negative int, or a dict, list or tuple of
    literals (dict keys strings)."""
    if isinstance(node, ast.Constant):
        return type(node.value) in (str, int, bool, type(None))
    if isinstance(node, ast.UnaryOp):
        return (
            isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) is int
        )
    if isinstance(node, ast.Dict):
        return all(
            isinstance(k, ast.Constant) and type(k.value) is str and _is_literal(v)
            for k, v in zip(node.keys, node.values, strict=True)
        )
    if isinstance(node, ast.List | ast.Tuple):
        return isinstance(node.ctx, ast.Load) and all(_is_literal(e) for e in node.elts)
    return False

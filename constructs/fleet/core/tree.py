"""The construct tree of a fleet, in pure Python: nodes, components, Aspects, the lock.

The API mirrors the ``constructs`` library that cdk8s is built on (``node.id``,
``node.path``, ``node.scope``, ``node.children``, ``find_all``, ``try_find_child``,
``add_metadata``, ``add_validation``, ``Aspects.of(scope).add(...)``) but a node is a
plain Python object: creating one costs about a microsecond, where a jsii construct costs
0.16-0.56 ms plus the start of Node.js (docs/construct-tree.md, benchmarks/tree_bench.py).

The root is the :class:`~fleet.core.fleet.Fleet`; any declaration or :class:`Component` can
be a scope. A declaration whose scope is a cdk8s construct is attached to the fleet through
the cdk8s bridge (:func:`attach`): cdk8s is only touched when the user already imported it.
"""

from __future__ import annotations

import bisect
import difflib
import functools
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

from fleet.core.errors import DefinitionError
from fleet.core.usercode import call, check_signature, wrong_result
from fleet.core.values import caller_location

if TYPE_CHECKING:
    from fleet.core.fleet import Fleet

ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
NAME_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
"""A Component's name prefix: a DNS label, so that ``<prefix>-<id>`` can be a name."""
PATH_SEP = "/"


@runtime_checkable
class IValidation(Protocol):
    """What ``node.add_validation`` takes: ``validate()`` returns the problems found."""

    def validate(self) -> list[str]:
        """One message per problem; empty when valid."""
        ...


@runtime_checkable
class IAspect(Protocol):
    """What ``Aspects.of(scope).add`` takes: ``visit`` is called for every construct below."""

    def visit(self, node: TreeConstruct) -> None:
        """Inspect (or patch, or add a validation to) one construct."""
        ...


@dataclass(frozen=True)
class MetadataEntry:
    """One ``add_metadata`` entry: a type, its data, and where it was added."""

    type: str
    data: Any
    where: str


class Node:
    """The tree part of a construct: its id, its scope, its children, its path.

    ``construct.node`` of every fleet construct (the :class:`Fleet` is the root, with
    id ``""`` and path ``""``). Ids are unique among the children of one scope; the
    path joins the ids from the root with ``/`` (a declaration in a cdk8s chart has the
    cdk8s path, ``dev/team-a/web``).
    """

    __slots__ = (
        "_aspect_files",
        "_aspects",
        "_children",
        "_locked",
        "_metadata",
        "_parent",
        "_validations",
        "host",
        "id",
        "path",
    )

    def __init__(self, host: TreeConstruct, parent: Node | None, node_id: str, path: str) -> None:
        self.host = host
        self.id = node_id
        self.path = path
        """The ids from the root to this node, joined with ``/`` (never an object name)."""
        self._parent = parent
        self._children: dict[str, TreeConstruct] = {}
        self._metadata: list[MetadataEntry] | None = None
        self._validations: list[IValidation] | None = None
        self._aspects: list[IAspect] | None = None
        self._aspect_files: list[str] = []
        self._locked = False

    # --- navigation ---------------------------------------------------------------------------

    @property
    def scope(self) -> TreeConstruct | None:
        """The construct this one was created in (None for the root)."""
        return self._parent.host if self._parent is not None else None

    @property
    def root(self) -> TreeConstruct:
        """The root of the tree: the Fleet."""
        node = self
        while node._parent is not None:
            node = node._parent
        return node.host

    @property
    def scopes(self) -> list[TreeConstruct]:
        """Every construct from the root down to this one."""
        out: list[TreeConstruct] = []
        node: Node | None = self
        while node is not None:
            out.append(node.host)
            node = node._parent
        return out[::-1]

    @property
    def children(self) -> list[TreeConstruct]:
        """The direct children, in the order they were created."""
        return list(self._children.values())

    def try_find_child(self, child_id: str) -> TreeConstruct | None:
        """The direct child with id ``child_id``, or None."""
        return self._children.get(child_id)

    def find_child(self, child_id: str) -> TreeConstruct:
        """The direct child with id ``child_id``; an error naming the caller and the
        nearest ids ("did you mean") when there is none."""
        child = self._children.get(child_id)
        if child is None:
            raise DefinitionError(
                f"{self._describe()} has no child {child_id!r}"
                + did_you_mean(child_id, self._children),
                where=caller_location(),
                field="id",
            )
        return child

    def find_all(self) -> list[TreeConstruct]:
        """This construct and every construct below it, depth first, parents first."""
        out: list[TreeConstruct] = []
        stack: list[Node] = [self]
        while stack:
            node = stack.pop()
            out.append(node.host)
            stack.extend(reversed([c.node for c in node._children.values()]))
        return out

    def _describe(self) -> str:
        return f"construct {self.path!r}" if self.path else "the fleet"

    # --- building -----------------------------------------------------------------------------

    def add_child(self, child: TreeConstruct, child_id: str, where: str, key: str = "") -> Node:
        """Create the node of ``child`` under this one (called by :class:`TreeConstruct`)."""
        if not ID_PATTERN.match(child_id):
            raise DefinitionError(
                "construct id must start with a letter or digit and hold only "
                f"letters, digits, '-', '_' and '.', got {child_id!r}",
                where=where,
                field="id",
            )
        if self.locked:
            raise DefinitionError(
                f"cannot add {child_id!r} to {self._describe()}: the tree is locked once "
                "every define() has run (the prepare phase); declare it in define()",
                where=where,
                field="id",
            )
        key = key or child_id
        existing = self._children.get(key)
        if existing is not None:
            first = getattr(existing, "where", "")
            scope = f" in {self._describe()}" if self._parent is not None else ""
            if first and first == where:  # never "first at" the line this error names
                outer = caller_location(outer=1)
                detail = " (this line ran twice for one scope" + (
                    f"; again when called from {outer})" if outer else ")"
                )
            else:
                detail = f" (first at {first})" if first else ""
            raise DefinitionError(
                f"duplicate declaration {child_id!r}{scope}{detail}", where=where, field="id"
            )
        path = key if not self.path else self.path + PATH_SEP + child_id
        node = Node(child, self, child_id, path)
        self._children[key] = child
        return node

    def add_metadata(self, type: str, data: Any) -> None:
        """Attach ``data`` under ``type`` (kept with the caller's file:line)."""
        if self._metadata is None:
            self._metadata = []
        self._metadata.append(MetadataEntry(type, data, caller_location()))

    @property
    def metadata(self) -> list[MetadataEntry]:
        """What ``add_metadata`` attached, in order."""
        return list(self._metadata or ())

    def add_validation(self, validation: IValidation | Callable[[], list[str]]) -> None:
        """Run ``validation`` in the validate phase; its messages fail the synth, located
        at this construct. A plain function returning messages works too."""
        if not isinstance(validation, IValidation):
            if not callable(validation):
                raise DefinitionError(
                    "must have validate() or be a function returning a list of messages, "
                    f"got {type(validation).__name__}",
                    where=caller_location(),
                    field="add_validation",
                )
            check_signature(
                validation,
                field="add_validation",
                expected="a validation: def check() -> list[str]",
            )
            validation = _FunctionValidation(validation)
        else:
            check_signature(
                validation.validate,
                field="add_validation",
                expected="a validation's validate() -> list[str]",
            )
        if self._validations is None:
            self._validations = []
        self._validations.append(validation)

    def validate(self) -> list[str]:
        """The messages of this node's validations (not its children's).

        A validation that raises, or returns anything but a list of strings, is a
        DefinitionError at its own file:line (:mod:`fleet.core.usercode`)."""
        out: list[str] = []
        for v in self._validations or ():
            function = v.function if isinstance(v, _FunctionValidation) else v.validate
            found = call(
                function, field="validation", doing=lambda: f"validating {self.path or 'the fleet'}"
            )
            if isinstance(found, str) or not isinstance(found, (list, tuple)):
                raise wrong_result(
                    function,
                    found,
                    field="validation",
                    expected="a validation returns a list of messages (str), [] when valid",
                )
            for message in found:
                if not isinstance(message, str):
                    raise wrong_result(
                        function, message, field="validation", expected="each message is a str"
                    )
            out.extend(found)
        return out

    # --- the lock -----------------------------------------------------------------------------

    def lock(self) -> None:
        """Lock this node and everything below it: no new children, no mutators."""
        self._locked = True

    @property
    def locked(self) -> bool:
        """Whether this node or one of its scopes is locked."""
        node: Node | None = self
        while node is not None:
            if node._locked:
                return True
            node = node._parent
        return False


class _FunctionValidation:
    def __init__(self, function: Callable[[], list[str]]) -> None:
        self.function = function

    def validate(self) -> list[str]:
        return list(self.function())


class Aspects:
    """The aspects of one scope: ``Aspects.of(scope).add(aspect)``.

    In the prepare phase (after every ``define()``), each aspect's ``visit`` is called
    with its scope and every construct below it, parents first. Aspects see the whole
    fleet, whatever the module order; they may add validations, metadata and json patches,
    not new constructs (the tree is locked).
    """

    __slots__ = ("_node",)

    def __init__(self, node: Node) -> None:
        self._node = node

    @classmethod
    def of(cls, scope: TreeConstruct) -> Aspects:
        """The aspects applied to ``scope`` and below."""
        node = getattr(scope, "node", None)
        if not isinstance(node, Node):
            raise DefinitionError(
                f"Aspects apply to fleet constructs, got {type(scope).__name__}",
                where=caller_location(),
                field="scope",
            )
        return cls(node)

    def add(self, aspect: IAspect) -> None:
        """Apply ``aspect`` to the scope and everything below it."""
        if not isinstance(aspect, IAspect) or not callable(aspect.visit):
            raise DefinitionError(
                f"an aspect needs a visit(node) method, got {type(aspect).__name__}",
                where=caller_location(),
                field="aspect",
            )
        check_signature(
            aspect.visit, self._node.host, field="aspect", expected="an Aspect's visit(node)"
        )
        node = self._node
        if node._aspects is None:
            node._aspects = []
        # In the order of the files that added them, then in the order added: the same
        # whatever order the modules were loaded in.
        file = caller_location().rpartition(":")[0]
        at = bisect.bisect_right(node._aspect_files, file)
        node._aspect_files.insert(at, file)
        node._aspects.insert(at, aspect)

    @property
    def all(self) -> list[IAspect]:
        """The aspects added to this scope (not those inherited from above)."""
        return list(self._node._aspects or ())


def _visiting(node: Node) -> str:
    return f"visiting {node.path or 'the fleet'}"


def apply_aspects(root: Node) -> None:
    """Visit every construct with the aspects of it and its scopes, parents first."""
    stack: list[tuple[Node, tuple[IAspect, ...]]] = [(root, ())]
    while stack:
        node, inherited = stack.pop()
        aspects = inherited + tuple(node._aspects or ())
        for aspect in aspects:
            returned = call(
                aspect.visit,
                node.host,
                field="aspect",
                doing=functools.partial(_visiting, node),
            )
            if returned is not None:
                raise wrong_result(
                    aspect.visit,
                    returned,
                    field="aspect",
                    expected="visit(node) changes the construct in place and returns None",
                )
        children = [(c.node, aspects) for c in node._children.values()]
        stack.extend(reversed(children))


class TreeConstruct:
    """Anything with a ``node`` in the fleet's tree: the Fleet, a Component, a declaration."""

    node: Node
    fleet: Fleet
    """The fleet at the root of the tree."""

    def scope_environments(self) -> tuple[str, ...] | None:
        """The environments a construct created in this scope is placed in by default
        (None: every environment, nothing narrower was said)."""
        return None


class Component(TreeConstruct):
    """A plain scope that groups declarations: a team's project, clusters and packages.

    Example::

        class TeamA(Component):
            def __init__(self, scope, id, *, env):
                super().__init__(scope, id, environments=[env])
                project = OpenStackProject(self, "project", project_name="TEAM A")
                MagnumCluster(self, "batch", project=project, ...)

        TeamA(fleet, "team-a-dev", env="dev")
        TeamA(fleet, "team-a-prod", env="prod")   # no id collides: ids are per scope

    ``environments`` (default: the scope's) is the default placement of what is declared
    inside; a declaration inside may narrow it, never widen it. The scope may be the
    Fleet, another component, a declaration, or a cdk8s construct (the cdk8s bridge).

    ``prefix`` (default: the component's id; ``""`` for none) goes before the names that
    declarations inside take from their ids (an ``OpenStackProject(self, "project")`` in
    ``TeamA(fleet, "team-a")`` is named ``team-a-project``), so that the component can be
    used twice; ``name=`` on the declaration pins a name (see :func:`name_from_id`).
    """

    def __init__(
        self,
        scope: Scope,
        construct_id: str,
        *,
        environments: Sequence[str] | None = None,
        prefix: str | None = None,
    ) -> None:
        where = caller_location()
        self.where = where
        self.node, inherited = attach(self, scope, construct_id, where)
        self.fleet = self.node.root  # type: ignore[assignment]
        self._environments = narrow_environments(
            self.fleet, environments, inherited, where=self.context
        )
        if prefix is not None and (
            not isinstance(prefix, str) or (prefix and not NAME_PREFIX.match(prefix))
        ):
            raise DefinitionError(
                "must be lower-case letters, digits and '-', starting and ending with a letter "
                f"or digit, or '' for none, got {prefix!r}",
                where=self.context,
                field="prefix",
            )
        self.name_prefix: str = construct_id if prefix is None else prefix
        """What goes before the names derived from ids inside ("": nothing)."""

    @property
    def context(self) -> str:
        """``file:line (path)``: where the component is, for messages."""
        return f"{self.where} ({self.node.path})"

    def scope_environments(self) -> tuple[str, ...] | None:
        """The component's environments (None: its scope's, which say nothing narrower)."""
        return self._environments


def name_from_id(construct: TreeConstruct) -> str:
    """The object name of a declaration that is named by its id (``name=`` left out).

    The id, after the prefixes of the Components it is declared in, outermost first,
    joined with ``-``: ``OpenStackProject(team, "project")`` in ``Component(fleet,
    "team-a")`` is ``team-a-project``. A declaration outside any Component keeps its
    id, and only Components give prefixes (not declarations or cdk8s constructs used as
    scopes). The name changes only when a component's id or ``prefix`` does.
    """
    parts = [construct.node.id]
    scope = construct.node.scope
    while scope is not None:
        if isinstance(scope, Component) and scope.name_prefix:
            if not NAME_PREFIX.match(scope.name_prefix):
                where = getattr(construct, "context", "")
                raise DefinitionError(
                    f"the name taken from the id is prefixed by component {scope.node.path!r}, "
                    f"whose id {scope.name_prefix!r} is no valid name prefix: pass name=, or "
                    "give the component a prefix= of lower-case letters, digits and '-'",
                    where=where,
                    field="name",
                )
            parts.append(scope.name_prefix)
        scope = scope.node.scope
    return "-".join(reversed(parts))


def narrow_environments(
    fleet: Fleet,
    environments: Sequence[str] | None,
    inherited: tuple[str, ...] | None,
    *,
    where: str,
) -> tuple[str, ...] | None:
    """``environments`` checked (known, once each, inside ``inherited``), or ``inherited``."""
    if environments is None:
        return inherited
    if isinstance(environments, str):
        environments = [environments]
    envs = tuple(environments)
    for env in envs:
        fleet.config.check_environment(env, where=where, field="environments")
    if len(set(envs)) != len(envs):
        raise DefinitionError("an environment is listed twice", where=where, field="environments")
    if inherited is not None:
        for env in envs:
            if env not in inherited:
                raise DefinitionError(
                    f"{env!r} is not one of the scope's environments ({', '.join(inherited)})",
                    where=where,
                    field="environments",
                )
    return envs


def attach(
    host: TreeConstruct, scope: Scope, construct_id: str, where: str
) -> tuple[Node, tuple[str, ...] | None]:
    """The node of ``host`` under ``scope``, and the environments the scope implies.

    ``scope`` is a fleet construct (the Fleet, a Component, a declaration), or a cdk8s
    construct inside one of the fleet's environment charts (the bridge).
    """
    parent = getattr(scope, "node", None)
    if isinstance(parent, Node):
        if parent._parent is None and construct_id in getattr(scope, "environment_names", ()):
            raise DefinitionError(
                f"id {construct_id!r} is the name of an environment", where=where, field="id"
            )
        node = parent.add_child(host, construct_id, where)
        return node, scope.scope_environments()  # type: ignore[union-attr]
    if _is_cdk8s_construct(scope):
        return _attach_to_cdk8s(host, scope, construct_id, where)
    raise DefinitionError(
        "the scope must be the Fleet, a Component, another declaration or a cdk8s "
        f"construct, got {type(scope).__name__}",
        where=where,
        field="scope",
    )


def _is_cdk8s_construct(scope: object) -> bool:
    """Whether ``scope`` is a ``constructs.Construct``, without importing ``constructs``:
    a cdk8s construct exists only if the user imported cdk8s already."""
    constructs = sys.modules.get("constructs")
    return constructs is not None and isinstance(scope, constructs.Construct)


def _attach_to_cdk8s(
    host: TreeConstruct, scope: Any, construct_id: str, where: str
) -> tuple[Node, tuple[str, ...] | None]:
    """The bridge: reserve ``construct_id`` in the cdk8s tree, find the Fleet and the
    environment from the enclosing :class:`~fleet.core.environment.Environment` chart."""
    import constructs

    from fleet.core.environment import Environment

    chart = next((s for s in scope.node.scopes if isinstance(s, Environment)), None)
    if chart is None or chart.fleet is None:
        raise DefinitionError(
            "a cdk8s scope must be inside one of the fleet's environment charts "
            "(fleet.environment(name)), got one outside",
            where=where,
            field="scope",
        )
    fleet = chart.fleet
    # Validate the id first: cdk8s accepts ids (with "/" replaced) that the fleet does not.
    if not ID_PATTERN.match(construct_id):
        fleet.node.add_child(host, construct_id, where)  # raises the fleet's message
    try:
        placeholder = constructs.Construct(scope, construct_id)
    except Exception as e:  # jsii raises a plain RuntimeError for a duplicate id
        raise DefinitionError(
            f"duplicate declaration {construct_id!r} in cdk8s construct "
            f"{scope.node.path!r} ({str(e).splitlines()[0]})",
            where=where,
            field="id",
        ) from None
    path = placeholder.node.path
    node = fleet.node.add_child(host, construct_id, where, key=path)
    node.path = path
    return node, (chart.env_name,)


def did_you_mean(
    wanted: str, known: Iterator[str] | Sequence[str] | dict[str, Any], n: int = 3
) -> str:
    """`` (did you mean 'x'?)`` for the ``n`` closest of ``known``, or ``""``."""
    close = difflib.get_close_matches(wanted, list(known), n=n)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"


if TYPE_CHECKING:
    from constructs import Construct as _Cdk8sConstruct

    Scope: TypeAlias = TreeConstruct | _Cdk8sConstruct
    """What a declaration may be created in: the Fleet, a Component, another declaration,
    or a cdk8s construct inside an environment chart."""
else:
    Scope = object

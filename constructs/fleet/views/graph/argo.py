"""Reading the rendered ArgoCD objects: sync waves, which Application applies which file,
which cluster a registration is for, which registrations a package selects."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from fleet.core import layout
from fleet.core.manifest import Manifest

ARGO_GROUP = "argoproj.io"
REGISTRATION_GROUP = "cluster.argocd.crossplane.io"
SYNC_WAVE = layout.SYNC_WAVE
CLUSTERS_FOLDER = layout.CLUSTERS + "/"
CLUSTER_LABEL = "fleet/cluster"


def _annotations(m: Manifest) -> Mapping[str, Any]:
    annotations = m.body.get("metadata", {}).get("annotations") or {}
    return annotations if isinstance(annotations, Mapping) else {}


def sync_wave(m: Manifest) -> int:
    """The object's ArgoCD sync wave (0 when not annotated or not a number)."""
    try:
        return int(str(_annotations(m).get(SYNC_WAVE, "0")).strip())
    except ValueError:
        return 0


def is_application(m: Manifest) -> bool:
    """Whether ``m`` is an ArgoCD ``Application``."""
    return m.group == ARGO_GROUP and m.kind == "Application"


def sources(app: Manifest) -> list[Mapping[str, Any]]:
    """The Application's ``source`` and ``sources``."""
    spec = app.body.get("spec") or {}
    sources = [spec["source"]] if isinstance(spec.get("source"), Mapping) else []
    sources += [s for s in spec.get("sources") or [] if isinstance(s, Mapping)]
    return sources


def source_paths(app: Manifest) -> list[tuple[str, bool]]:
    """(path, recurse) of each directory source of an Application, normalised."""
    out = []
    for source in sources(app):
        path = source.get("path")
        if not isinstance(path, str):
            continue
        path = path.strip().strip("/")
        while path.startswith("./"):
            path = path[2:]
        directory = source.get("directory") or {}
        out.append((path, bool(directory.get("recurse", False))))
    return out


def repo_path(m: Manifest, *, dist: str) -> str:
    """Where ``m``'s file sits in the repository (``dist/dev/clusters/x/...yaml``)."""
    return f"{dist.strip('/')}/{m.environment}/{m.relpath}"


def syncs(app: Manifest, m: Manifest, *, dist: str) -> bool:
    """Whether ``app`` (a directory Application) applies ``m``'s file."""
    file = repo_path(m, dist=dist)
    for path, recurse in source_paths(app):
        prefix = f"{path}/" if path not in ("", ".") else ""
        if file.startswith(prefix):
            rest = file[len(prefix) :]
            if recurse or "/" not in rest:
                return True
    return False


def _directory(file: str) -> str | None:
    """The folder part of a repository path (None for a file at the top)."""
    return file.rsplit("/", 1)[0] if "/" in file else None


class Appliers:
    """Which Applications apply which objects, found through the objects' folders.

    :func:`syncs` only looks at the folder of an object's file (a file name holds no
    slash), so each Application is matched against the folders once, a recursive one
    against every folder, instead of against every object: at 1,000 clusters (one
    Application each, 10,000 objects) that is ten million tests per environment fewer.
    """

    def __init__(self, manifests: Sequence[Manifest], *, dist: str) -> None:
        self.dist = dist
        self.apps = [m for m in manifests if is_application(m)]
        """The Applications, in the order of the manifests."""
        self._objects: dict[str | None, int] = defaultdict(int)
        for m in manifests:
            self._objects[_directory(repo_path(m, dist=dist))] += 1
        self._folders: dict[int, list[str | None]] = {}
        self._by_folder: dict[str | None, list[Manifest]] = defaultdict(list)
        for app in self.apps:
            folders = self._applied(app)
            self._folders[id(app)] = folders
            for folder in folders:
                self._by_folder[folder].append(app)

    def _applied(self, app: Manifest) -> list[str | None]:
        """The folders (holding objects) whose files ``app`` applies, as :func:`syncs` says."""
        out: list[str | None] = []
        for path, recurse in source_paths(app):
            if path in ("", "."):
                # every repository path holds a slash: only a recursive source applies it
                out.extend(self._objects if recurse else [f for f in self._objects if f is None])
            elif recurse:
                below = f"{path}/"
                out.extend(
                    f for f in self._objects if f is not None and (f == path or f.startswith(below))
                )
            elif path in self._objects:
                out.append(path)
        return list(dict.fromkeys(out))

    def appliers(self, m: Manifest) -> list[Manifest]:
        """The Applications that apply ``m``, in the order of the manifests."""
        folder = _directory(repo_path(m, dist=self.dist))
        if folder in self._objects:
            return self._by_folder.get(folder, [])
        return [a for a in self.apps if syncs(a, m, dist=self.dist)]

    def count(self, app: Manifest) -> int:
        """How many of the manifests ``app`` (one of :attr:`apps`) applies."""
        return sum(self._objects[f] for f in self._folders[id(app)])


def cluster_folder(m: Manifest) -> str | None:
    """``x`` for an object in ``clusters/x/...``."""
    if not m.folder.startswith(CLUSTERS_FOLDER):
        return None
    return m.folder[len(CLUSTERS_FOLDER) :].split("/", 1)[0] or None


def registered_cluster(registration: Manifest, clusters: Collection[str]) -> str | None:
    """Which of ``clusters`` a provider-argocd ``Cluster`` registers.

    By its folder (``clusters/<name>/``), else its ``fleet/cluster`` label, else the
    ArgoCD cluster name, else its own name; None when none is a known cluster.
    """
    for_provider = (registration.body.get("spec") or {}).get("forProvider") or {}
    labels = for_provider.get("labels") or {}
    for candidate in (
        cluster_folder(registration),
        labels.get(CLUSTER_LABEL),
        for_provider.get("name"),
        registration.name,
    ):
        if candidate in clusters:
            return str(candidate)
    return None


def _selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        present = key in labels
        if (
            (op == "In" and labels.get(key) not in values)
            or (op == "NotIn" and present and labels.get(key) in values)
            or (op == "Exists" and not present)
            or (op == "DoesNotExist" and present)
        ):
            return False
    return True


def _cluster_selectors(generators: Iterable[Any]) -> list[Mapping[str, Any]]:
    """The selectors of every ``clusters`` generator, nested matrix/merge ones included."""
    out: list[Mapping[str, Any]] = []
    for gen in generators:
        if not isinstance(gen, Mapping):
            continue
        clusters = gen.get("clusters")
        if isinstance(clusters, Mapping):
            out.append(clusters.get("selector") or {})
        for nested in ("matrix", "merge"):
            inner = gen.get(nested)
            if isinstance(inner, Mapping):
                out.extend(_cluster_selectors(inner.get("generators") or []))
    return out


def package_targets(appset: Manifest, registrations: Sequence[Manifest]) -> list[Manifest]:
    """The registrations an ApplicationSet's ``clusters`` generators select."""
    selectors = _cluster_selectors((appset.body.get("spec") or {}).get("generators") or [])
    out = []
    for reg in registrations:
        labels = ((reg.body.get("spec") or {}).get("forProvider") or {}).get("labels") or {}
        if any(_selector_matches(s, labels) for s in selectors):
            out.append(reg)
    return out

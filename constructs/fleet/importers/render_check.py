"""Render an import's result inside the fleet before anything is written.

The generated modules go into a temporary copy of the project, which
:func:`fleet.pipeline.synth.synthesize` renders with every check of ``fleet synth`` and
``fleet validate`` (``Checks.of(fleet).all``: schemas and CEL rules, references, waves, the
secret guard, the fleet's own checks). A problem there is raised, and nothing is written:
no import leaves a module that ``fleet synth`` refuses.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from fleet.checks.problem import InvalidObjects, Problem
from fleet.clouds.importer import CloudImporter, Translate
from fleet.codegen.source_check import GeneratedCodeError
from fleet.core.config import FleetConfig
from fleet.core.errors import DefinitionError, DefinitionErrors
from fleet.importers.fleet_view import project_modules
from fleet.importers.generated import check_generated
from fleet.pipeline.synth import Synth, synthesize

_WHERE = re.compile(r"^(?P<file>.+?\.py):(?P<line>\d+)")


def render_with(
    config: FleetConfig,
    files: Mapping[Path, str],
    environments: Sequence[str],
    importers: Sequence[CloudImporter] | None = None,
) -> Synth:
    """Render ``environments`` of the project with ``files`` (absolute paths, most inside
    the declarations folder) written in; raises as ``fleet synth`` does. Each module is
    checked first (:func:`check_generated`): one that holds what no import writes is
    refused before it is written anywhere or run."""
    check_generated(files, config.clusters_dir.name, importers)
    with tempfile.TemporaryDirectory(prefix="fleet-import-") as tmp:
        copy = dataclasses.replace(config, root=Path(tmp))
        if config.clusters_dir.is_dir():
            shutil.copytree(
                config.clusters_dir,
                copy.clusters_dir,
                ignore=shutil.ignore_patterns("__pycache__"),
            )
        copy.clusters_dir.mkdir(parents=True, exist_ok=True)
        clusters_dir = config.clusters_dir.resolve()
        for path, text in files.items():
            inside = path.is_relative_to(clusters_dir)
            target = copy.clusters_dir / (path.relative_to(clusters_dir) if inside else path.name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        with project_modules(copy.root, copy.clusters_dir.name):
            return synthesize(copy, list(environments), use_cache=False)


def check_render(
    config: FleetConfig,
    files: Mapping[Path, str],
    environments: Sequence[str],
    translate: Translate,
    importers: Sequence[CloudImporter] | None = None,
) -> Synth:
    """:func:`render_with`, its problems translated to the input (``translate``); raises
    DefinitionErrors (each naming the input value, or the generated line)."""
    try:
        return render_with(config, files, environments, importers)
    except GeneratedCodeError:
        raise
    except DefinitionErrors as e:
        raise DefinitionErrors([_definition(x, translate) for x in e.errors]) from None
    except DefinitionError as e:
        raise DefinitionErrors([_definition(e, translate)]) from None
    except InvalidObjects as e:
        raise DefinitionErrors([_problem(p, translate) for p in e.problems]) from None


def _located(where: str) -> tuple[str, int, str] | None:
    match = _WHERE.match(where)
    if match is None:
        return None
    return Path(match.group("file")).name, int(match.group("line")), where[match.end() :]


def _definition(error: DefinitionError, translate: Translate) -> DefinitionError:
    return _translated(
        error.where,
        error.field,
        error.message,
        translate,
        otherwise=f"the imported declarations fail: {error.message}",
    )


def _problem(problem: Problem, translate: Translate) -> DefinitionError:
    message = f"{problem.object}: {problem.message}"
    return _translated(
        problem.source,
        problem.field_path,
        message,
        translate,
        otherwise=f"the imported declarations render an invalid {message}",
        what=f" {problem.object}",
    )


def _translated(
    where: str,
    field: str,
    message: str,
    translate: Translate,
    *,
    otherwise: str,
    what: str = "",
) -> DefinitionError:
    """The error ``translate`` gives for a problem at ``where`` (``what`` added to the rest
    of its location), or, when the line is not the import's, ``otherwise`` at the line the
    import would write."""
    found = _located(where)
    translated = translate(found[0], found[1], found[2] + what, field, message) if found else None
    if translated is not None:
        return translated
    return DefinitionError(otherwise, where=_generated(where), field=field)


def _generated(where: str) -> str:
    """A location in the temporary copy, as the file name the import would write."""
    found = _located(where)
    return f"{found[0]}:{found[1]} (generated)" if found else where

"""``fleet import tfvars`` and ``fleet import tfstate``: clusters described by Terraform as
Python declarations (the clouds' importers, found through their plug-ins; the help text
is theirs)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fleet.clouds.base import ImportHelp
from fleet.core.config import FleetConfig
from fleet.core.errors import FleetError
from fleet.core.redact import redact
from fleet.core.words import plural
from fleet.importers.registry import import_help, import_options, importer_entries, stderr

EXIT_OK, EXIT_CHECK = 0, 1


def _tfstate(args: argparse.Namespace, config: FleetConfig) -> int:
    """``fleet import tfstate`` without ``--tfvars``: the state is the input."""
    from fleet.importers.files import write_files
    from fleet.importers.state_import import StateOptions, plan_state_import

    if args.derive_templates or args.template_uuid:
        flag = "--derive-templates" if args.derive_templates else "--template-uuid"
        raise FleetError(
            f"{flag} is for tfvars (--tfvars): a state gives every template, with its UUID"
        )
    given = [(Path(p), None) for p in args.states] + [(Path(p), env) for env, p in args.state]
    if not given:
        raise FleetError("no state: give STATE files, or --state ENV=PATH")
    plan = plan_state_import(
        config,
        StateOptions(
            states=given,
            sources=[Path(s) for s in args.source_dir],
            out=_out(args, config),
            environment=args.environment,
            observe=args.observe,
            options={
                o.flag: tuple(values)
                for o in import_options(importer_entries())
                if (values := getattr(args, _dest(o.flag), None))
            },
        ),
    )
    for line in plan.report:
        print(f"report: {redact(line)}")
    for path in write_files(plan.files, config):
        print(f"wrote {_shown(path)}")
    clusters = sum(len(d.members) for d in plan.declarations)
    print(
        f"imported {plural(clusters, 'cluster')} as {plural(len(plan.declarations), 'declaration')}"
        " (rendered and checked before writing)"
    )
    return EXIT_OK


def _tfvars(args: argparse.Namespace, config: FleetConfig) -> int:
    from fleet.clouds.importer import TfvarsOptions
    from fleet.importers.files import write_files
    from fleet.importers.tfvars_import import plan_tfvars_import

    if args.source == "tfstate" and not args.tfvars:
        return _tfstate(args, config)
    given = [
        o.flag for o in import_options(importer_entries()) if getattr(args, _dest(o.flag), None)
    ]
    if args.source == "tfstate" and given:
        raise FleetError(f"{given[0]} is for the state import: leave out --tfvars")
    if args.source == "tfstate" and (args.state or args.source_dir):
        raise FleetError(
            "--state ENV=PATH and --source are for the state import: leave out --tfvars, or "
            "give the states as STATE"
        )
    if args.source == "tfstate":
        paths, states = args.tfvars, args.states
    else:
        paths, states = args.paths, args.state or []
    options = TfvarsOptions(
        paths=[Path(p) for p in paths],
        states=[Path(s) for s in states],
        out=_out(args, config),
        environment=args.environment,
        derive_templates=args.derive_templates,
        observe=args.observe,
        template_uuids=dict(args.template_uuid),
    )
    done = plan_tfvars_import(config, options)
    result = done.plan
    if args.verify:
        problems = result.verify(done.synth.manifests)
        for problem in problems:
            print(f"error: {problem.line()}", file=sys.stderr)
        if problems:
            print(
                f"verify failed: {plural(len(problems), 'difference')}; nothing written",
                file=sys.stderr,
            )
            return EXIT_CHECK
    for line in result.report:
        print(f"report: {redact(line)}")
    for path in write_files(result.files, config):
        print(f"wrote {_shown(path)}")
    checked = " and verified" if args.verify else ""
    clusters, declared = result.counts
    print(f"imported{checked} {plural(clusters, 'cluster')} as {plural(declared, 'declaration')}")
    return EXIT_OK


def _out(args: argparse.Namespace, config: FleetConfig) -> Path | None:
    """``--out``, if given: a declaration module (``<clusters>/<name>.py``, no ``_`` first),
    the only files ``fleet synth`` reads; anything else would import clusters no render
    sees."""
    if not args.out:
        return None
    from fleet.pipeline.discovery import HELPER_PREFIX

    path = Path(args.out).resolve()
    folder = config.clusters_dir.resolve()
    stem = path.name.removesuffix(".py")
    if (
        path.parent != folder
        or stem == path.name
        or not stem.isidentifier()
        or (stem.startswith(HELPER_PREFIX))
    ):
        raise FleetError(
            f"--out: {args.out}: must be a module directly in {_shown(folder)}/ (NAME.py, "
            f"NAME a Python name not starting with '{HELPER_PREFIX}'): fleet synth reads only "
            "those"
        )
    return path


def _env_path(value: str) -> tuple[str, str]:
    env, sep, path = value.partition("=")
    if not sep or not env or not path:
        raise argparse.ArgumentTypeError(f"expected ENV=PATH, got {value!r}")
    return env, path


def _name_uuid(value: str) -> tuple[str, str]:
    name, sep, uuid = value.partition("=")
    if not sep or not name or not uuid:
        raise argparse.ArgumentTypeError(f"expected NAME=UUID, got {value!r}")
    return name, uuid


def _dest(flag: str) -> str:
    """Where argparse keeps an importer's option (apart from the command's own)."""
    return "importer_" + flag.lstrip("-").replace("-", "_")


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``fleet import tfvars PATH... [--state FILE]...`` and ``fleet import tfstate STATE...
    --tfvars PATH...``, each with ``[--out FILE] [--environment ENV] [--derive-templates]
    [--template-uuid NAME=UUID]... [--verify] [--observe]``."""
    entries = importer_entries(stderr)  # once per command line: warns of a broken plug-in
    texts = import_help(entries)
    importer = sub.add_parser("import", help="import clusters described elsewhere")
    kinds = importer.add_subparsers(dest="source", required=True)
    p = kinds.add_parser(
        "tfvars",
        help=texts.tfvars,
        description=texts.tfvars_description,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="a tfvars file or a folder")
    p.add_argument(
        "--state",
        action="append",
        metavar="FILE",
        help=texts.tfvars_state,
    )
    _common(p, texts)
    s = kinds.add_parser(
        "tfstate",
        help=texts.tfstate,
        description=texts.tfstate_description,
    )
    s.add_argument(
        "states",
        nargs="*",
        metavar="STATE",
        help="a Terraform state file or `terraform show -json` output",
    )
    s.add_argument(
        "--state",
        action="append",
        default=[],
        type=_env_path,
        metavar="ENV=PATH",
        help="a state file and the environment of its clusters (repeatable)",
    )
    s.add_argument(
        "--source",
        dest="source_dir",
        action="append",
        default=[],
        metavar="DIR",
        help="the Terraform configuration folder that wrote a state (repeatable; each state is "
        "matched to the folder that declares its resources)",
    )
    s.add_argument(
        "--tfvars",
        action="append",
        metavar="PATH",
        help="the tfvars files of the same clusters (the tfvars layout; repeatable)",
    )
    for option in import_options(entries):  # declared by the clouds' importers
        s.add_argument(
            option.flag,
            dest=_dest(option.flag),
            action="append",
            default=[],
            metavar=option.metavar,
            help=option.help,
        )
    _common(s, texts)


def _common(p: argparse.ArgumentParser, texts: ImportHelp) -> None:
    p.add_argument(
        "--out", metavar="FILE", help="write every cluster into this one module of clusters/"
    )
    p.add_argument(
        "--environment",
        metavar="ENV",
        help="the environment of every cluster (default: the one named in the cluster name)",
    )
    p.add_argument(
        "--derive-templates",
        action="store_true",
        help="derive the cluster templates from the input into clusters/_imported_templates.py",
    )
    p.add_argument(
        "--template-uuid",
        action="append",
        default=[],
        type=_name_uuid,
        metavar="NAME=UUID",
        help=texts.template_uuid,
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="render the result and check that every tfvars value appears unchanged (an "
        "import of state alone always checks every state value)",
    )
    p.add_argument(
        "--observe",
        action="store_true",
        help='start the clusters with managementPolicies ["Observe"] (the first sync only '
        "observes)",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.set_defaults(handler=_tfvars)

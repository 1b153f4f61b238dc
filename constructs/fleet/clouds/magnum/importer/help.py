"""What ``fleet import`` says about the Magnum importer (read when the command line is
built: nothing heavy is imported here)."""

from __future__ import annotations

from fleet.clouds.base import ImportHelp

MAGNUM_IMPORT_HELP = ImportHelp(
    tfvars="Magnum clusters from Terraform tfvars files",
    tfvars_description=(
        "Writes one module per community into the declarations folder "
        "(PATH: a tfvars file, or a folder of <community>/<cluster>/terraform.tfvars). "
        "Projects the fleet declares are reused; a cluster shared by several environments "
        "becomes one declaration. Nothing is written unless the whole input is valid."
    ),
    tfvars_state=(
        "Terraform state (or `terraform show -json` output) of the same clusters: "
        "their Magnum UUIDs (repeatable)"
    ),
    tfstate="Magnum clusters from Terraform state, whatever HCL made it",
    tfstate_description=(
        "Reads every Magnum cluster, node group and template of STATE (terraform state pull, "
        "format version 4, or `terraform show -json` output; modules at any depth) and "
        "declares them to adopt the real objects by their ids. The environment of a cluster "
        "comes from its name, else from --state ENV=PATH, else from --environment. With "
        "--source, what the configuration leaves to the template stays unset and lifecycle "
        "ignore_changes is kept. The result is rendered and checked in the fleet first: "
        "nothing is written unless it passes. With --tfvars, the tfvars layout's clusters are "
        "read instead and the state gives their UUIDs (as `fleet import tfvars --state`)."
    ),
    template_uuid=(
        "the Magnum UUID of a derived template (repeat per template; "
        "`openstack coe cluster template show NAME -f value -c uuid`); not needed for "
        "templates whose UUID the Terraform state gives"
    ),
)
"""The help of ``fleet import`` for Magnum."""

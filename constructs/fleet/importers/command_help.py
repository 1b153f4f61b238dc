"""What ``fleet import`` says about its importers (the command line lives in
:mod:`fleet.cli.imports`, which names no cloud)."""

TFVARS_HELP = "Magnum clusters from Terraform tfvars files"
TFVARS_DESCRIPTION = (
    "Writes one module per community into the declarations folder "
    "(PATH: a tfvars file, or a folder of <community>/<cluster>/terraform.tfvars). "
    "Projects the fleet declares are reused; a cluster shared by several environments "
    "becomes one declaration. Nothing is written unless the whole input is valid."
)
STATE_HELP = (
    "Terraform state (or `terraform show -json` output) of the same clusters: "
    "their Magnum UUIDs (repeatable)"
)
TFSTATE_HELP = "Magnum clusters from Terraform tfvars files, adopted by the UUIDs of their state"
TFSTATE_DESCRIPTION = (
    "Like `fleet import tfvars --state`: reads the template and cluster UUIDs "
    "from STATE (a terraform.tfstate, or `terraform show -json` output), checks that state "
    "and tfvars agree, and declares the clusters to adopt them by UUID."
)
TEMPLATE_UUID_HELP = (
    "the Magnum UUID of a derived template (repeat per template; "
    "`openstack coe cluster template show NAME -f value -c uuid`); not needed for "
    "templates whose UUID the Terraform state gives"
)

"""Magnum clusters from Terraform: what ``openstack_containerinfra_{cluster,nodegroup,
clustertemplate}_v1`` become (``fleet import tfstate``), and the tfvars layout of the seed's
Magnum module (``fleet import tfvars``). Loaded by the plug-in's hook
(:data:`fleet.clouds.magnum.plugin.MAGNUM_IMPORTER`) only when ``fleet import`` runs."""

"""OKE's importer: clusters and node pools Terraform built (``oci_containerengine_cluster``,
``oci_containerengine_node_pool``, the network they use) become :class:`~fleet.OciManagedCluster`
declarations that CAPOCI adopts by OCID.

:mod:`.fates` says what becomes of every attribute of the provider's schema, :mod:`.reader`
reads the states, :mod:`.planner` decides the declarations, the report and the tagging
commands, :mod:`.verify` renders them and compares every carried value.
"""

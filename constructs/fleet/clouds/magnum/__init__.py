"""OpenStack Magnum through Crossplane provider-openstack."""

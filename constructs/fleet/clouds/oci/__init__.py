"""Oracle OKE through Cluster API and CAPOCI."""

"""Terraform read as data, with no cloud in it: state files and `terraform show -json`
output, configurations (`--source`), tfvars values, and the names Terraform can write.
Each cloud's importer (`clouds/<cloud>/importer/`) says what its resource types become."""

"""Every write to the catalog tables goes through the services of this package."""

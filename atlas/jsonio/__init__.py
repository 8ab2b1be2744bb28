"""JSON the catalog stores and checks: the strict reader and the JSON Schema validation."""

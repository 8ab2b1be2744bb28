"""The catalog's REST API: views, the CSV twin, errors, schema, authentication, rendering."""

"""The catalog's REST API: the sources, refresh and changes endpoints, the row, the CSV twin,
errors, schema, authentication, rendering."""

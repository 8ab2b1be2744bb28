"""The catalog artifact and what feeds it: source definitions, input counts, the
canonical form, the artifact's reading and writing."""

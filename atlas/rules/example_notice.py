"""The words that label an example collection (``make demo``) wherever it shows — a constant of
its own, free of Django, so the curators' tools (which run without the Atlas) label what they
derive from an example the same way the catalog does."""

EXAMPLE_NOTICE = "Example review — not a real judgment"

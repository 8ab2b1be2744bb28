"""Pure rule modules of the catalog: ids, vocabularies, labels, display state, timestamps.

They import neither the ORM nor each other's upper rooms, so every layer can use them."""

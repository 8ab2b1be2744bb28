"""The run-directory contract: what a review run directory holds and how it is checked.

Both sides check the same rules here: the Atlas when it publishes a run, and the producers
(``make_review``, ``make_difficulty``, the curators' tools) before they write one. Django-free, like
the whole wing, so a producer on a machine without the Atlas checks exactly what publication will.
"""

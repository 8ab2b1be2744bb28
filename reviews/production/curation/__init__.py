"""The curators' tools: carry a verdict to its end with native evidence.

``reproduce_defect`` re-runs saved native inputs through the same worker at the recorded verifier
revision and writes the supplemental collection that confirms a defect; ``validate_fix`` re-runs
the saved failing inputs and incorrect-answer controls at the repaired checkout and writes the
resolution collection; ``fetch_review`` brings a published review's artifacts from an Atlas.

Like the rest of the wing, whose runtime, workers, make_review records and run-directory checks
it reuses, this room needs no database and no web code: it runs on the machine that holds the native
checkouts. What the Atlas then accepts is decided by its own services (``publish_review``,
``confirm_verifier_issue``, ``resolve_verifier_issue``), unchanged.
"""

"""The producers' wing: everything that makes a review run directory, Django-free by rule.

Rooms, from the ground up (a room imports only from rooms below it):

- ``format/`` — the run-directory contract the Atlas and the producers both check;
- ``examples/`` — the demo's scripted chat server, review model and MarinSkyRL-shaped checkout;
- ``runtime/`` — what make_review, make_difficulty and the curators' tools share;
- ``make_review/`` — the pipeline: sample, attempt, judge, synthesise, validate;
- ``curation/`` — the curators' tools (``reproduce_defect``, ``validate_fix``,
  ``synthesise_source``, ``fetch_review``);
- ``workers/`` — the native workers, standalone scripts run by the native interpreter, which
  import neither Django nor the project.

Nothing here imports ``django``, ``rest_framework`` or ``celery`` (``tests/test_architecture.py``
checks the source), so a producer runs on a machine that has no Atlas database; the management
commands that expose these tools are thin shells.
"""

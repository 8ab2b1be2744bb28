"""What make_review, make_difficulty and the curators' tools share: reading and sampling tasks,
the attempt hosts and the worker launcher, checkout identities and the grading check, config and
credentials, the model client with its bounded HTTP and prompt room, the Atlas client, run
directories, progress lines and the one error type every production command prints."""

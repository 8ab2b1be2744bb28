"""make_review: local tasks → a review run directory.

The pipeline runs its stages in order — sample, attempt, judge, synthesise, validate — over the
shared runtime; the judges and their opinions, the coalescer's syntheses, the evidence a judge
sees, reuse of earlier panels, the collection's records and the attestations written into a
finished run live beside it.
"""

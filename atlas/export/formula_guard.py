"""Kept for migration ``0007_export_tags``, which imports ``export_tags`` from here: the formula
guard is a rule, ``atlas.rules.formula_guard``."""

from atlas.rules.formula_guard import export_tags as export_tags

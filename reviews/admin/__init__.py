"""The reviews app's admin: review collections, their artifacts, grading bindings and publications
(``publications``), and the verifier issues with their confirm and resolve forms (``defects``).
Importing the package registers both with the admin site (Django's autodiscovery imports it)."""

from reviews.admin import defects, publications  # noqa: F401

"""The scripted review model of the tests: the product's
(``reviews.production.examples.review_model``), which ``make demo`` runs too."""

from reviews.production.examples.review_model import SUM, ReviewModel, opinion, request_kind

__all__ = ["SUM", "ReviewModel", "opinion", "request_kind"]

"""The CSV export of a catalog view and the formula guard every CSV the Atlas writes uses."""

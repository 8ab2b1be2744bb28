"""The CSV export of a catalog view, its download name, and the one CSV dialect and writer."""

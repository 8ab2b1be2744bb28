"""make_difficulty's production tooling: it needs no Atlas database and
shares make_review's runtime (``reviews.production``) for tasks, sampling, native workers and
run directories."""

"""The stages of a ``make_review`` run, in the order the pipeline runs them: ``sample`` (the tasks
and the run identity, before anything is written), ``attempt`` (each task's native run), ``judge``
(three independent judges per attempt, validated as they finish), ``synthesise`` (the
coalescer's task and source syntheses) and ``validate`` (the checks publication runs)."""

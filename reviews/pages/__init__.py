"""What the reviews app shows: the review and artifact pages (view models, views, routes, the
heading and the trace viewers), the sections it contributes to a source's page (verifier issues,
sampled tasks, review pool), the review page's section registry, and the curators' work queue.
Presenters build view models from what ``reviews.selectors`` loaded, without queries of their
own."""

"""What ``make demo`` runs the shipped review tools with, so its example reviews are what the tools
really make: a scripted OpenAI-compatible chat server (``chat_server``), a scripted review model
that answers it (``review_model``) and a MarinSkyRL-shaped checkout built from the installed
``skyrl_gym`` with prepared gsm8k rows (``marinskyrl``). All of it is free of Django: the
curators' tools replay saved answers through the same chat server. The tests use the same parts.
"""

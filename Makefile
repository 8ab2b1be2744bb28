# RL Data Atlas — the two everyday commands are `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
HOST ?= 127.0.0.1
PORT ?= 8000
CURATOR ?= curator
# Links written by publications (and printed by `make demo`) follow the chosen host and port.
export ATLAS_PUBLIC_URL ?= http://$(HOST):$(PORT)
SERVED = @printf '\nRL Data Atlas: %s/   admin: %s/admin/   API: %s/api/\n\n' "$(ATLAS_PUBLIC_URL)" "$(ATLAS_PUBLIC_URL)" "$(ATLAS_PUBLIC_URL)"

# uv from PATH, else bootstrapped with pip into .tools/ (a fresh machine needs only Python and make).
UV := $(shell command -v uv 2>/dev/null)
ifeq ($(UV),)
UV := $(CURDIR)/.tools/bin/uv
endif
MANAGE := $(UV) run --frozen python manage.py
# Benchmarks talk to an in-process client over plain HTTP, like the tests.
BENCH := DJANGO_SETTINGS_MODULE=config.settings_test $(UV) run --frozen python

.PHONY: help install run demo catalog curator test test-real-server worker beat lint check format bench clean serve

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(CURDIR)/.tools/bin/uv:
	$(PYTHON) -m venv $(CURDIR)/.tools
	$(CURDIR)/.tools/bin/pip install --quiet uv

# Bytecode is compiled at install, the packages' by uv and the project's by compileall: a process
# that may not write a bytecode cache (PYTHONDONTWRITEBYTECODE, a read-only checkout) would
# otherwise compile every module it imports at every start, most of a cold `make run`. The native
# attempt hosts read theirs from the native bytecode cache (never beside the sources): what a Gym
# host imports with this interpreter is compiled there too.
PROJECT_CODE := atlas reviews difficulty config
.venv/.installed: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --compile-bytecode
	$(UV) run --frozen python -m compileall -q -j 0 $(PROJECT_CODE) > /dev/null
	$(UV) run --frozen python -c \
		"from reviews.production.runtime.launcher import prime_native_bytecode as p; p()"
	@touch $@

install: .venv/.installed ## create the environment from uv.lock (bytecode compiled)

catalog: install ## migrate, export the packaged definitions and sync them
	$(MANAGE) run_catalog --no-serve

run: install ## install, build and sync the packaged catalog, serve on http://$(HOST):$(PORT)
	$(SERVED)
	$(MANAGE) run_catalog $(HOST):$(PORT)

demo: catalog ## like run, plus example reviews made by make_review (labelled), a resolved defect and difficulty
	@mkdir -p var
	$(MANAGE) publish_examples > var/examples.json
	@echo "Example publications: var/examples.json"
	$(SERVED)
	$(MANAGE) runserver --noreload $(HOST):$(PORT)

curator: install ## create (or update) a curator account: make curator CURATOR=alice
	$(MANAGE) migrate --noinput
	$(MANAGE) create_curator --username $(CURATOR)

# The whole suite on every core: pytest-xdist workers, each with its own test database, ports,
# Chromium and temporary folders (a worker takes the next test as it finishes one). Many tests
# wait on another process, so there are twice as many workers as cores (at most 8, each holds a
# Chromium); TEST_WORKERS=0 runs one process.
TEST_WORKERS ?= $(shell n=$$(( $$(nproc) * 2 )); echo $$(( n > 8 ? 8 : n )))
# pytest rewrites every test module's asserts when it imports it and keeps the result in
# __pycache__ (ignored by git) — unless PYTHONDONTWRITEBYTECODE is set, as some machines do: then
# each worker re-parses the whole suite at every run (7 s of collection against 3 s).
test: install ## the whole test suite (browser tests run when Chromium is installed)
	PYTHONDONTWRITEBYTECODE= $(UV) run --frozen pytest -n $(TEST_WORKERS) --dist worksteal

# The opt-in real-server check: llama-cpp-python's server in its own environment (built once).
REAL_SERVER_ENV ?= $(HOME)/.cache/atlas-real-server/venv
REAL_SERVER_CONTEXT ?= 8192
# The server's port (0: a free one).
REAL_SERVER_PORT ?= 0
# More options of scripts/real_server_check.py (--judge-tokens, --resumes), e.g. for a busy machine.
REAL_SERVER_ARGS ?=
test-real-server: install ## make_review --n 1 against a real llama-cpp-python server (SmolLM2; slow; not part of make test)
	DJANGO_SETTINGS_MODULE=config.settings_test $(UV) run --frozen python scripts/real_server_check.py \
		--env "$(REAL_SERVER_ENV)" --context $(REAL_SERVER_CONTEXT) --port $(REAL_SERVER_PORT) \
		$(REAL_SERVER_ARGS)

worker: install ## a Celery worker against CELERY_BROKER_URL
	@test -n "$$CELERY_BROKER_URL" || { echo "CELERY_BROKER_URL is not set"; exit 2; }
	$(UV) run --frozen celery -A config worker --loglevel=INFO

beat: install ## the Celery scheduler for ATLAS_SYNC_SCHEDULE (run exactly one)
	@test -n "$$CELERY_BROKER_URL" || { echo "CELERY_BROKER_URL is not set"; exit 2; }
	$(UV) run --frozen celery -A config beat --loglevel=INFO

lint: install ## ruff check and format check
	$(UV) run --frozen ruff check .
	$(UV) run --frozen ruff format --check .

check: install ## lint, migrations up to date, types
	$(UV) run --frozen ruff check .
	$(UV) run --frozen ruff format --check .
	$(UV) run --frozen python manage.py makemigrations --check --dry-run
	$(UV) run --frozen mypy config atlas reviews difficulty

format: install ## apply ruff fixes and formatting
	$(UV) run --frozen ruff check --fix .
	$(UV) run --frozen ruff format .

# Datasette, the benchmarks' reference server, in an environment of its own (built once), never
# the project's: its own libraries would change the project's locked ones.
BENCH_DATASETTE_ENV ?= $(HOME)/.cache/atlas-bench/datasette-venv
DATASETTE_VERSION ?= 0.65.5
bench: install ## every benchmark to the end, one table against the floors (PostgreSQL via DATABASE_URL)
	@test -n "$$DATABASE_URL" || { echo "DATABASE_URL is not set (a PostgreSQL server)"; exit 2; }
	test -x "$(BENCH_DATASETTE_ENV)/bin/datasette" || { $(UV) venv --quiet "$(BENCH_DATASETTE_ENV)" \
		&& $(UV) pip install --quiet --python "$(BENCH_DATASETTE_ENV)/bin/python" \
			"datasette==$(DATASETTE_VERSION)"; }
	ATLAS_BENCH_DATASETTE="$(BENCH_DATASETTE_ENV)/bin/datasette" $(BENCH) benchmarks/run.py --output var/bench-table.md

clean: ## remove generated files (the environment, the SQLite database, dist/)
	rm -rf .venv .tools dist var staticfiles test-artifacts

WORKERS ?= $(shell echo $$(( $$(nproc) * 2 + 1 )))
serve: install ## the production shape: gunicorn (WORKERS from the CPU count, --preload, access log); needs DATABASE_URL and SECRET_KEY
	@test -n "$$DATABASE_URL" || { echo "DATABASE_URL is not set (a PostgreSQL server)"; exit 2; }
	$(MANAGE) migrate --noinput
	$(MANAGE) collectstatic --noinput --verbosity 0
	$(MANAGE) run_catalog --no-serve
	$(UV) run --frozen gunicorn config.wsgi --preload --workers $(WORKERS) \
		--bind $(HOST):$(PORT) --access-logfile - --error-logfile - --timeout 60 \
		--limit-request-line 8190

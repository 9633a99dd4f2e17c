# The README's commands. `make serve` and `make test` work on a fresh machine with python3.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: serve test bench lock demo browser haproxy redis

PIP := $(PY) -m pip install --disable-pip-version-check --progress-bar off

# What serving needs (requirements.txt) and the project itself, editable: `from env.client import ...` works from
# any folder, and the code is still run from the checkout.
$(VENV)/.serve: requirements.txt pyproject.toml
	@echo "make: creating $(VENV) and installing the serving requirements (requirements.txt); the first time takes a few minutes"
	$(PYTHON) -m venv $(VENV)
	$(PIP) -r requirements.txt
	$(PIP) --no-deps -e .
	touch $@

# What the test suite adds: the [test] and [browser] extras' pins (requirements-dev.txt) and the [ray] extra's
# (requirements-ray.txt, for `python -m env.eval run --ray` and its tests).
$(VENV)/.deps: $(VENV)/.serve requirements-dev.txt requirements-ray.txt
	$(PIP) -r requirements-dev.txt -r requirements-ray.txt
	touch $@

serve: $(VENV)/.serve  ## start the server with the built-in tasks on :8000
	$(PY) -m env.server

# Test files run in parallel, each file on one worker (its module fixtures built once): -n auto starts two workers per
# core (the tests mostly wait), heaviest files first (tests/conftest.py); the 25 slowest tests are listed at the end.
# Bytecode is written even where the shell sets PYTHONDONTWRITEBYTECODE: else every worker and every Python process the
# tests start compiles the checkout again and rewrites the pytest plugins' assertions again (docs/performance.md).
test: $(VENV)/.deps browser haproxy redis  ## run the whole test suite
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -n auto --dist loadfile --durations=25

demo: $(VENV)/.serve  ## start the Gradio demo on :7860 (the environment runs in-process)
	$(PY) app.py

# The demo's browser test drives Debian's chromium through Playwright, which never downloads a browser.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null; }

# The balancer test (tests/test_deploy.py) runs Debian's haproxy (2.6) in front of two replicas on loopback.
haproxy:
	@command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || { \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends haproxy >/dev/null; }

# The failover tests (tests/test_journal.py) start Debian's redis-server on loopback, as ENV_STORE's episode store.
redis:
	@command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || { \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends redis-server >/dev/null; }

bench: $(VENV)/.deps  ## measure latency and throughput (prints figures)
	$(PY) bench/bench_server.py

lock:  ## after editing pyproject.toml: refresh uv.lock and the requirements files
	$(PY) -m pip install --quiet uv
	$(VENV)/bin/uv lock
	$(VENV)/bin/uv export --no-hashes --no-dev --format requirements-txt -o requirements.txt
	$(VENV)/bin/uv export --no-hashes --no-dev --extra test --extra browser --format requirements-txt -o requirements-dev.txt
	$(VENV)/bin/uv export --no-hashes --no-dev --extra ray --format requirements-txt -o requirements-ray.txt

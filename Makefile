# Two commands for a fresh Debian machine with Python 3.11+: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# What is installed, per pyproject.toml: `make run` installs the portal (its runtime dependencies);
# `make test` and the developer commands add the `test` extra (pytest, Playwright, ruff, ...).
VERSION := $(shell cat pyproject.toml | sha1sum | cut -c1-12)
RUN_STAMP := $(VENV)/.installed-run-$(VERSION)
TEST_STAMP := $(VENV)/.installed-test-$(VERSION)

# What the second pass of `make test` runs against sqld (conftest.py; devtools/sqld.py).
SQLD_PASS ?= tests/outbox e2e/test_sign_in.py e2e/test_invitations.py e2e/test_applications.py \
	e2e/test_reports.py e2e/test_outbox_console.py tests/console/test_reconciliation.py

.PHONY: run run-cluster test install bench clean lint translations schema

$(BIN)/python:
	# Debian's own python3 ships venv separately (python3-venv).
	$(PYTHON) -m venv $(VENV) || (bash devtools/ensure-system-packages.sh python3-venv && $(PYTHON) -m venv $(VENV))
	$(BIN)/pip install --quiet --upgrade pip

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	rm -f $(VENV)/.installed-run-*
	touch $@

# The test tools come with everything the portal needs, so this stamp is the run stamp too.
$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	rm -f $(VENV)/.installed-*
	touch $@ $(RUN_STAMP)

install: $(TEST_STAMP)

run: $(RUN_STAMP)
	# Redis is installed by run_portal.py, and only if none answers on REDIS_URL.
	bash devtools/ensure-system-packages.sh fonts-liberation
	$(BIN)/python devtools/run_portal.py

run-cluster: $(RUN_STAMP)
	# The shape of a deployment on several machines, on this one (README, "Several machines").
	bash devtools/ensure-system-packages.sh fonts-liberation
	$(BIN)/python devtools/run_portal.py --cluster

test: $(TEST_STAMP)
	# Chromium only recommends its fonts; without them screenshots have no readable text.
	bash devtools/ensure-system-packages.sh redis-server chromium fonts-liberation
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python devtools/sqld.py install >/dev/null
	$(BIN)/python -m pytest $(PYTEST_ARGS)
	# The second pass: the engine and the main journeys against a real libSQL server (sqld), one per test.
	PORTAL_TEST_DATABASE=sqld $(BIN)/python -m pytest -rs $(SQLD_PASS)

# After changing a message in code or a template: the catalogue template, each language's catalogue
# (new messages come in empty, for a translator), and the compiled catalogues the portal reads.
# tests/test_i18n.py fails until every message is translated and compiled.
translations: $(RUN_STAMP)
	$(BIN)/pybabel extract -F babel.cfg -k _l -k lazy_gettext -k translate:2 -k translate_plural:2,3 \
		--no-location --sort-output --project "TEEI Partner Portal" -o translations/messages.pot .
	$(BIN)/pybabel update --no-fuzzy-matching --ignore-obsolete -i translations/messages.pot -d translations
	$(BIN)/pybabel compile --statistics -d translations

# After adding a migration: migrations/schema.sql, the schema as the migrations leave it, for reading.
# tests/test_schema_file.py fails until it is regenerated.
schema: $(RUN_STAMP)
	$(BIN)/python devtools/schema_file.py

bench: $(TEST_STAMP)
	bash devtools/ensure-system-packages.sh redis-server
	for b in bench/*.py; do PYTHONPATH=. $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) instance/ .pytest_cache test-artifacts

lint: $(TEST_STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

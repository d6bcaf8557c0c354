# The two commands of the README: `make run` and `make test`. Each creates .venv and installs
# what it needs the first time (again only when pyproject.toml changes).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test check bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# setup.py and the C source: the install compiles the top-k kernel (optional: skipped without
# a C compiler), so an edit to either rebuilds it.
$(VENV)/.runtime: pyproject.toml setup.py $(wildcard bot/search/ranking/csrc/*) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.dev: pyproject.toml setup.py $(wildcard bot/search/ranking/csrc/*) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test,bench]"
	touch $@ $(VENV)/.runtime

run: $(VENV)/.runtime
	$(BIN)/python -m bot

test: $(VENV)/.dev
	$(BIN)/ruff check bot tests benchmarks scripts
	$(BIN)/ruff format --check bot tests benchmarks scripts
	$(BIN)/mypy
	@# pytest exits 5 when it collected nothing: a run that tested nothing is a failure.
	$(BIN)/python -m pytest || { code=$$?; [ $$code -ne 5 ] || echo "pytest collected no tests" >&2; exit $$code; }

# Loads settings, corpus, index and cogs without connecting; exit 1 says what is wrong.
check: $(VENV)/.runtime
	$(BIN)/python -m bot --check

bench: $(VENV)/.dev
	$(BIN)/python -m benchmarks.run

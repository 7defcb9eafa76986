# Every target sets up .venv first (scripts/setup.sh is idempotent).
PY := .venv/bin/python

.PHONY: setup demo test test-all lint format bench docs clean

setup:
	@scripts/setup.sh

demo: setup
	$(PY) -m gymforge.demo

test: setup
	$(PY) -m pytest

test-all: setup  ## includes tests marked slow
	$(PY) -m pytest -m "not gpu"

lint: setup
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

format: setup
	.venv/bin/ruff format .
	.venv/bin/ruff check --fix .

bench:
	@EXTRAS=dev,anchors scripts/setup.sh
	$(PY) -m benchmarks.lineflow.scalar

docs: setup  ## regenerates the generated pages, then builds the site into build/docs
	$(PY) -m gymforge.docs
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict

clean:
	rm -rf .venv build dist *.egg-info demo_output .pytest_cache .ruff_cache

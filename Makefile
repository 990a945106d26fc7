# The two commands that matter: `make run` and `make test`. Both create .venv if needed.
# While you work, `make test-fast`: the unit tests alone, in under a minute (tests/README.md).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXAMPLE := examples/iris/plan.json
GOAL := examples/goal
SCIENCE := examples/science/plan.json
SWEEP := examples/sweep/plan.json
STUDY := examples/study
STUDY_GOAL := examples/study-goal
EVAL := examples/eval/suite.json
EVAL_PLANS := examples/eval/plans-suite.json

.PHONY: run test test-fast test-scale lint bench eval eval-plans up down check clean histories system \
	example-recording docs docs-build

# Bubblewrap isolates sandboxed jobs; Prometheus scrapes a worker in the metrics test. As root
# on Debian each is installed when missing.
system:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; \
	  else \
	    echo "note: bubblewrap (bwrap) is not installed; jobs run with resource limits only"; \
	  fi; }
	@command -v prometheus >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; \
	  else \
	    echo "note: prometheus is not installed; the metrics scrape test is skipped"; \
	  fi; }

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: system $(STAMP)
	$(BIN)/assay envs prepare science
	$(BIN)/assay up --detach
	$(BIN)/assay run $(EXAMPLE) --wait --again
	$(BIN)/assay run $(SCIENCE) --wait --again
	$(BIN)/assay run $(SWEEP) --wait --again
	$(BIN)/assay study $(STUDY)/plan.json --plans $(STUDY)/cycle-2.json --cycles 3 \
	  --accept "r2 >= 0.95" --key-metric r2:maximize --wait --again
	ASSAY_JOB_ENVIRONMENT=base $(BIN)/assay study "$$(cat $(STUDY_GOAL)/goal.txt)" \
	  --data $(STUDY_GOAL)/points.csv --replay $(STUDY_GOAL)/recording.jsonl \
	  --policy $(STUDY_GOAL)/policy.json --cycles 3 --accept "r2 >= 0.95" \
	  --key-metric r2:maximize --wait --again
	ASSAY_JOB_ENVIRONMENT=base $(BIN)/assay run "$$(cat $(GOAL)/goal.txt)" \
	  --data $(GOAL)/measurements.csv --replay $(GOAL)/recording.jsonl --no-skills --wait --again
	@echo "The stack keeps running for the Web UI; stop it with: $(BIN)/assay down"

test: system $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest

# The unit tests: no Temporal, PostgreSQL, stack or job subprocess. A test is left out when it is
# marked `integration`: by hand, by a server fixture it uses (tests/conftest.py: SERVERS) or by
# where it lives (INTEGRATION_PATHS: tests/e2e, tests/examples, the sandbox's, the replays...).
# The 10 000-task run on the fake sandbox (marked `scale`; half an hour and more on 2 cores).
test-scale: system $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -m scale -q

test-fast: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -m "not integration" -q

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/pyright

bench: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m benchmarks

# The goal suite with every ablation, then with skills off everywhere, then with nothing learned
# (skills and memory off, so no run hands a fixed job to the next) against the debuggers and
# the model reviewers: offline, the goals with a recording replay it (or an ablated run's own,
# in examples/eval/ablations/<configuration>) and the others are skipped with the reason;
# with a key, all run live. The recordings were made with the science packages pinned in
# examples/hand-debug/environments.
EVAL_ABLATED := $(if $(ANTHROPIC_API_KEY),,--replay $(CURDIR)/examples/eval/ablations)
eval: system $(STAMP)
	ASSAY_ENVIRONMENTS_DIR=$${ASSAY_ENVIRONMENTS_DIR:-$(CURDIR)/examples/hand-debug/environments} \
	  $(BIN)/assay up --detach
	$(BIN)/assay eval $(EVAL) --repeat 3 --ablate all $(EVAL_ABLATED)
	$(BIN)/assay eval $(EVAL) --repeat 3 --ablate memory,debuggers,model-review --off skills \
	  $(EVAL_ABLATED)
	$(BIN)/assay eval $(EVAL) --repeat 3 --ablate debuggers,model-review --off skills,memory \
	  $(EVAL_ABLATED)

# The plan suite (jobs given, no model needed; two recorded goals), every ablation.
eval-plans: system $(STAMP)
	$(BIN)/assay up --detach
	$(BIN)/assay eval $(EVAL_PLANS) --repeat 3 --ablate all

# Re-record the example goals' model exchanges (after a deliberate change to prompts or roles).
example-recording: system $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" ASSAY_SAVE_EXAMPLE_RECORDING=1 $(BIN)/python -m pytest \
	  tests/e2e/test_agents_e2e.py tests/e2e/test_study_goal_e2e.py -k replayed
	PATH="$(CURDIR)/$(BIN):$$PATH" ASSAY_SAVE_EXAMPLE_RECORDING=1 $(BIN)/python -m pytest \
	  tests/workers/evaluation/test_goal_recordings.py

# The documentation site (mkdocs.yml, docs/): served with live reload, or built strict into site/.
docs: $(STAMP)
	$(BIN)/mkdocs serve

docs-build: $(STAMP)
	$(BIN)/mkdocs build --strict

histories: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m tests.histories.capture

up: $(STAMP)
	$(BIN)/assay up

down: $(STAMP)
	$(BIN)/assay down

check: $(STAMP)
	$(BIN)/assay check

clean:
	rm -rf .pytest_cache .ruff_cache site

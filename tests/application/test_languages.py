"""A vault in many languages, searched through the service's own wiring (issue 27): keyword search in every
script, the notes' languages told from frontmatter or text, maps of content below the notes they list in any
language, and a hybrid score that means the same when the keyword side finds nothing."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from backend.bootstrap import Services, build_services
from backend.config import load_settings
from backend.domain.models import SearchMode
from backend.entrypoints.cli.commands import run_job

NOTES = {
    "项目/数据库迁移.md": (
        "# 数据库迁移\n\n我们决定在三月把订单数据库从 MySQL 迁移到 PostgreSQL，先迁移只读副本。\n"
    ),
    "Projects/Project X.md": "# Project X\n\n## Decision\n\nWe decided on a cutover in March.\n",
    "旅行/京都旅行.md": "# 京都旅行\n\n十一月に京都へ行く。東福寺で紅葉を見る予定。宿は祇園の近く。\n",
    "料理/豚骨ラーメン.md": "# 豚骨ラーメン\n\n豚骨スープは十二時間煮込む。麺は細麺、替え玉は一回まで。\n",
    "อาหาร/ราเมน.md": "# สูตรราเมน\n\nต้มน้ำซุปกระดูกหมูสิบสองชั่วโมง แล้วใส่เส้นราเมนก่อนเสิร์ฟ\n",
    "Finanzen/Steuer.md": (
        "---\nlang: de\n---\n# Steuer 2025\n\nDie Steuererklärung für 2025 muss bis Ende Juli beim "
        "Finanzamt sein.\nBelege für die Handwerkerrechnungen liegen im Ordner.\n"
    ),
    "Работа/Миграция.md": (
        "# Миграция\n\nПлан миграции базы данных утверждён: переносим заказы в PostgreSQL в марте.\n"
    ),
    "학교/수업.md": "# 수업\n\n학교에서 한국어 수업을 들었다. 다음 주에는 시험이 있다.\n",
    "Home.md": (
        "# Home\n\n## Projects\n\n"
        "- [[Project X]] — the decision about the orders database, the options and the cutover plan\n"
        "- [[京都旅行]] — temples, autumn leaves, where we sleep and the budget for the trip\n"
        "- [[豚骨ラーメン]] — broth, noodles and how long the broth simmers before serving\n"
    ),
    "首页.md": (
        "# 首页\n\n- [[数据库迁移]]：数据库迁移的决定、备选方案和切换计划\n- [[京都旅行]]：行程和预算\n"
        "- [[Steuer]]：税务\n"
    ),
}

# concepts a bilingual reader would match across languages: a stand-in for a multilingual model
CONCEPTS = (("tax", "steuer"), ("deadline", "frist", "ende juli"), ("ramen", "ラーメン", "ราเมน"))


class ConceptEmbedder:
    """One dimension per concept, found in any of its languages: "tax deadline" meets the German tax note
    while sharing no word with it (what the keyword side needs)."""

    model_name = "fake-concepts"
    dimension = len(CONCEPTS) + 1

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        folded = text.casefold()
        vector = [float(sum(folded.count(word) for word in words)) for words in CONCEPTS] + [0.1]
        norm = math.sqrt(sum(v * v for v in vector))
        return [v / norm for v in vector]

    def health(self) -> bool:
        return True

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    vault = tmp_path_factory.mktemp("vault")
    for path, text in NOTES.items():
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(text, encoding="utf-8")
    settings = load_settings(vault_path=vault, data_dir=tmp_path_factory.mktemp("data"), watch=False)
    built = build_services(settings, embedder=ConceptEmbedder())
    try:
        built.supervisor.open(start_indexing=False)
        run_job(built, "index")
        yield built
    finally:
        built.close()


def notes(services: Services, query: str, mode: SearchMode = SearchMode.KEYWORD, **kw: object) -> list[str]:
    hits = services.search.search(query, top_k=5, mode=mode, **kw).hits  # type: ignore[arg-type]
    return [str(hit.payload["note_path"]) for hit in hits]


@pytest.mark.parametrize(
    ("query", "note"),
    [
        ("迁移", "项目/数据库迁移.md"),  # Chinese, a word inside the text (not the title)
        ("只读副本", "项目/数据库迁移.md"),
        ("東福寺で紅葉を見る", "旅行/京都旅行.md"),  # Japanese
        ("豚骨スープ", "料理/豚骨ラーメン.md"),
        ("น้ำซุปกระดูกหมู", "อาหาร/ราเมน.md"),  # Thai
        ("Steuer", "Finanzen/Steuer.md"),
        ("Handwerkerrechnung", "Finanzen/Steuer.md"),  # German, another form of the word
        ("Finanzämter", "Finanzen/Steuer.md"),
        ("Rechnungen", "Finanzen/Steuer.md"),  # a compound's part
        ("миграция базы данных", "Работа/Миграция.md"),  # Russian, other forms of each word
        ("학교", "학교/수업.md"),  # Korean, the word without its particle
    ],
)
def test_keyword_search_finds_notes_in_every_script(services: Services, query: str, note: str) -> None:
    assert notes(services, query)[:1] == [note]


def test_the_vaults_languages_are_surveyed(services: Services) -> None:
    languages = services.languages
    assert {"zh", "ja", "de", "ru"} <= set(languages.counts)
    assert languages.mostly_not_english


def test_a_map_of_content_goes_below_the_notes_it_links_to_whatever_its_descriptions(
    services: Services,
) -> None:
    # Home's link lines carry more words than links and match the question best: still a hub
    found = notes(services, "orders database decision options cutover plan")
    assert found[:2] == ["Projects/Project X.md", "Home.md"]
    found = notes(services, "数据库迁移的决定")
    assert found.index("项目/数据库迁移.md") < found.index("首页.md")


def test_hybrid_scores_reach_one_when_the_keyword_side_finds_nothing(services: Services) -> None:
    # an English question about a German note: no shared word, the dense side alone finds it. Its best
    # result scores 1 as any other best result would, so a threshold keeps it
    outcome = services.search.search("tax deadline", top_k=3, mode=SearchMode.HYBRID, threshold=0.5)
    assert [hit.payload["note_path"] for hit in outcome.hits][:1] == ["Finanzen/Steuer.md"]
    assert outcome.hits[0].score == pytest.approx(1.0)
    same = services.search.search("Steuererklärung Frist", top_k=1, mode=SearchMode.HYBRID)
    assert same.hits[0].score == pytest.approx(1.0)  # best on both sides: the same scale


def test_highlights_in_unspaced_scripts_are_the_matched_stretch(services: Services) -> None:
    from backend.domain.ranking.result_rules import highlights

    assert highlights("迁移", "我们决定把数据库迁移到新服务器", analyzer=services.search.analyzer) == ["迁移"]
    assert highlights("Steuer", "Die Steuererklärung", analyzer=services.search.analyzer) == [
        "Steuererklärung"
    ]


def test_note_language_from_frontmatter_wins(tmp_path: Path) -> None:
    from backend.domain.index.index_texts import note_language
    from backend.infrastructure.markdown.parser import parse_note

    services_analyzer = build_services(
        load_settings(vault_path=tmp_path, data_dir=tmp_path / "data", watch=False), embedder=None
    )
    try:
        analyzer = services_analyzer.search.analyzer
        note = parse_note("a.md", "---\nlanguage: Russian\n---\nok")
        assert note_language(analyzer, note) == "ru"
        assert note_language(analyzer, parse_note("b.md", "Das ist ein deutscher Satz über Steuern.")) == "de"
        assert note_language(analyzer, parse_note("c.md", "ok")) == "en"  # too short: VAULT_LANGUAGE
    finally:
        services_analyzer.close()

"""The recall block shares its room among the entries the gate lets through: two chat sessions, each one long
chunk, that both speak of what is asked are both quoted, each by its messages that do, attributed to those
lines (in a session a template left a query block and a comment in, the note's own lines, which the
reader never sees in the block); /search's explain data says the same. Asked without a floor, /context gives
the ranked chunks whole, as before. Through the HTTP API on real files, by keyword alone and with the default
model (slow)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from backend.application.recall.entries import QUOTED_EXCERPT
from backend.domain.ranking.confidence import RECALL_FLOOR
from tests.api.conftest import vault_client

FILLER = [
    "How was the weekend? We finally cleared out the garage and found the old bikes.",
    "Ha, ours was quiet. The kids had friends over and we ordered far too much pizza.",
    "Work has been hectic, the quarterly report is due and my manager keeps moving the deadline.",
    "That sounds exhausting. Are you still thinking of asking for a transfer to the other team?",
    "Maybe next year. For now I'm keeping my head down and walking the dog every evening.",
    "The dog must love that. We keep talking about getting one but the flat is too small.",
    "My sister is visiting next month, so the spare room needs clearing before she arrives.",
    "Good luck with that! Ours has been a storage room since we moved in, boxes everywhere.",
    "I also started reading that mystery novel you recommended, the one set on the island.",
    "Oh, you'll love the ending. Don't look anything up about it, just keep reading.",
    "Promise. Anyway, I should go, dinner is burning. Talk soon and say hi to everyone!",
    "Will do. Enjoy your evening and don't stay up too late with that book.",
]


# what a note template leaves in a note: a query Obsidian runs and a comment it hides, neither read as text
TEMPLATE_LEFTOVERS = """```dataview
LIST FROM "Chats" WHERE file.day < this.file.day SORT file.day DESC LIMIT 3
```

%%
Template: Chat session. Fill in the speakers before saving.
%%"""


def session(day: str, answer: str, *, leftovers: bool = False) -> str:
    """A chat session as LoCoMo keeps one: a heading, then one message a paragraph; `answer` in the middle
    (after TEMPLATE_LEFTOVERS, with `leftovers`)."""
    speakers = ["**Nate**", "**Joanna**"]
    talk = [f"{speakers[i % 2]}: {text} ^m{i}" for i, text in enumerate(FILLER[:5] + [answer] + FILLER[5:])]
    if leftovers:
        talk.insert(2, TEMPLATE_LEFTOVERS)
    body = "\n\n".join(talk)
    return f"---\ndate: {day}\n---\n# Chat with Joanna — {day}\n\n{body}\n"


VAULT = {
    "Chats/Session 01.md": session(
        "2023-05-02", "I finally joined the pottery workshop on Thursday and glazed my first bowl, turquoise."
    ),
    "Chats/Session 02.md": session(
        "2023-06-14",
        "Thursday's pottery workshop was great again: I glazed a vase for my mum, turquoise too.",
        leftovers=True,
    ),
    "Chats/Session 03.md": session(
        "2023-07-01", "We went hiking at the lake and the kids swam all afternoon."
    ),
    "Notes/Groceries.md": "# Groceries\n\nMilk, eggs, flour, apples, coffee.\n",
}
QUESTION = "what did Joanna glaze at the pottery workshop"


client = vault_client(VAULT)


def test_two_long_sessions_that_answer_are_both_quoted_by_their_matching_messages(client: TestClient) -> None:
    body = {"query": QUESTION, "max_chars": 1500, "max_chunks": 3, "min_confidence": RECALL_FLOOR}
    answer = client.post("/context", json={**body, "explain": True}).json()
    sources = {s["note_path"]: s for s in answer["sources"]}

    assert set(sources) == {"Chats/Session 01.md", "Chats/Session 02.md"}
    assert len(answer["context"]) <= 1500
    assert "glazed my first bowl" in answer["context"]
    assert "glazed a vase for my mum" in answer["context"]
    for path, source in sources.items():
        whole = VAULT[path].splitlines()
        # attributed to the lines quoted, which hold the answer: what memory_get reads back
        assert source["truncated"]
        quoted = "\n".join(whole[source["start_line"] - 1 : source["end_line"]])
        assert len(quoted) < len(VAULT[path]) / 2  # a part of the session
        assert "pottery workshop" in quoted
        assert quoted in answer["context"]
        assert f"[{path}:{source['start_line']}-{source['end_line']}]" in answer["context"]
    fates = {c["note_path"]: c["reason"] for c in answer["explain"]["considered"]}
    assert fates["Chats/Session 01.md"] == fates["Chats/Session 02.md"] == QUOTED_EXCERPT
    # the page's recall preview (the explain data of /search) says the same
    hits = client.post("/search", json={"query": QUESTION, "top_k": 10, "explain": True}).json()["results"]
    preview = {hit["note_path"]: hit["why"]["recall"] for hit in hits}
    assert preview["Chats/Session 01.md"] == {"quoted": True, "reason": QUOTED_EXCERPT}
    assert preview["Chats/Session 02.md"] == {"quoted": True, "reason": QUOTED_EXCERPT}


def test_asked_without_a_floor_the_block_gives_the_ranked_chunks_from_their_start(client: TestClient) -> None:
    body = {"query": QUESTION, "max_chars": 1500, "max_chunks": 3, "explain": True}
    answer = client.post("/context", json=body).json()

    assert answer["sources"][0]["start_line"] == 4  # the session's heading: its chunk from the start
    assert all(c["reason"] != QUOTED_EXCERPT for c in answer["explain"]["considered"])

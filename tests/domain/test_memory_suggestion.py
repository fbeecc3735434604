"""The memory suggestion: a fact about money owed, health or a commitment that a confident hit states, offered
for the agent to keep, with the note and the line it is on; nothing for chit-chat, a secret or an unconfident
hit."""

from __future__ import annotations

from dataclasses import replace

import pytest

from backend.domain.ranking.confidence import RECALL_FLOOR
from backend.domain.recall.memory_suggestion import FoundText, MemorySuggestion, is_secret, suggest_memory

LEDGER_PATH = "Finance/Money with Sreenivas.md"
# lines 20-27 of the example vault's ledger, as its chunk holds them
LEDGER = """## Ledger

- **2026-01-10** — He paid the whole Harz cabin weekend; my half was €140.00. Balance: I owe **€140.00**.
- **2026-01-24** — I bought his train ticket to Hamburg, €38.50. Balance: I owe **€101.50**.
- **2026-02-07** — He lent me €250.00 in cash for the laptop repair deposit. Balance: I owe **€351.50**.
- **2026-02-21** — I sent him €200.00 by bank transfer. Balance: I owe **€151.50**.
- **2026-03-08** — Dinner at the dosa place, he paid; my share €23.00. Balance: I owe **€174.50**.
- **2026-03-28** — I paid the Lisbon deposit (€190); his half comes off. Balance: I owe **€79.50**."""
GP = """# GP — shoulder

Dr Mensah (Meersbrook Medical Centre). Phone triage then seen same day.

- R shoulder pain since 29 Oct (Font, dynamic move, arm at full reach)
- Naproxen 500mg twice a day for 10 days (with omeprazole)
- Referred to NHS MSK physio — wait "12-16 weeks\""""
JOURNAL = """Had my first session with Jana, the counsellor. Mostly intake questions.
She asked what a "normal" week looks like. We agreed on eight sessions, weekly on Tuesdays. #mentalhealth"""


def hit(
    text: str, *, path: str = LEDGER_PATH, title: str = "", start: int = 1, conf: float = 0.8
) -> FoundText:
    return FoundText(note_path=path, note_title=title, text=text, start_line=start, confidence=conf)


def ledger(conf: float = 0.8) -> FoundText:
    return hit(LEDGER, title="Money with Sreenivas", start=20, conf=conf)


def test_money_owed_is_the_ledgers_latest_balance_with_its_note_and_line() -> None:
    found = suggest_memory("how much do I owe Sreenivas?", [ledger()])
    assert found == MemorySuggestion(
        key="money_with_sreenivas_balance",
        value="Balance: I owe €79.50. (Money with Sreenivas, 2026-03-28)",
        source=LEDGER_PATH,
        start_line=27,
        end_line=27,
        kind="money_owed",
        confidence=0.8,
    )
    assert LEDGER.split("\n")[found.start_line - 20].endswith("Balance: I owe **€79.50**.")


def test_a_balance_owed_to_me_in_pounds_counts_too() -> None:
    text = "| 2025-10-30 | chippy | Lyd | 18 | −9 | +20 |\n\n**Balance now: Lyd owes me £20.** ^balance"
    found = suggest_memory("how much does Lyd owe me", [hit(text, title="Ledger — me & Lyd", start=19)])
    assert found is not None
    assert (found.kind, found.value, found.start_line) == (
        "money_owed",
        "Balance now: Lyd owes me £20. (Ledger — me & Lyd)",
        21,
    )


def test_a_medication_line_is_a_health_fact() -> None:
    found = suggest_memory(
        "what did the GP give me for my shoulder",
        [hit(GP, path="Health/GP.md", title="GP — shoulder", start=5)],
    )
    assert found is not None
    assert found.kind == "health"
    assert found.key == "gp_shoulder_health"
    assert found.value.startswith("Naproxen 500mg twice a day for 10 days")
    assert found.start_line == 10


def test_an_agreement_is_a_commitment_and_only_its_sentence_is_kept() -> None:
    found = suggest_memory(
        "what did I agree with the counsellor?", [hit(JOURNAL, path="Journal/2026-02-17.md", start=11)]
    )
    assert found is not None
    assert found.kind == "commitment"
    assert found.value == "We agreed on eight sessions, weekly on Tuesdays."
    assert found.start_line == 12


def test_the_fact_sharing_the_questions_words_wins_over_a_better_ranked_one() -> None:
    allergy = hit("- Allergic to cashews (matters when cooking for him).", path="People/Sreenivas.md")
    found = suggest_memory("how much do I owe Sreenivas?", [allergy, ledger()])
    assert found is not None
    assert found.kind == "money_owed"
    found = suggest_memory("what is Sreenivas allergic to?", [allergy, ledger()])
    assert found is not None
    assert found.kind == "health"


def test_nothing_when_the_fact_is_not_about_what_was_asked() -> None:
    journal = hit("Said no to medication for now, yes to the sleep course.", path="Journal/2025-02-12.md")
    assert suggest_memory("days I went climbing", [journal]) is None
    assert suggest_memory("what did I decide about medication", [journal]) is not None
    agreed = hit(
        "Agreed: no big boat spending till the autumn.", path="Journal/2024-04-02.md", title="2024-04-02"
    )
    assert suggest_memory("what did we do over easter 2024", [agreed]) is None  # a year is no shared word
    # the note's title counts: the GP note is about the shoulder the question names
    assert suggest_memory("what did the GP give me for my shoulder", [hit(GP, title="GP — shoulder")])


def test_a_lab_volume_is_no_dose() -> None:
    line = "- Silver nitrate: 0.05M made up, 500ml, fine, kept in the dark"
    assert suggest_memory("what did Bernie find about the silver nitrate", [hit(line)]) is None


@pytest.mark.parametrize("query", ["hi", "thanks!", "Hello there", "ok thanks, bye", "?"])
def test_nothing_for_chit_chat_even_beside_a_confident_ledger(query: str) -> None:
    assert suggest_memory(query, [ledger()]) is None


def test_nothing_from_a_hit_below_the_confidence_floor() -> None:
    assert suggest_memory("how much do I owe Sreenivas?", [ledger(conf=RECALL_FLOOR - 0.01)]) is None
    assert suggest_memory("how much do I owe Sreenivas?", [ledger(conf=RECALL_FLOOR)]) is not None


def test_nothing_beyond_the_first_hits() -> None:
    others = [hit("Tamarind, tomatoes, rasam powder.", path=f"Recipes/{i}.md") for i in range(3)]
    assert suggest_memory("how much do I owe Sreenivas?", [*others, ledger()]) is None


@pytest.mark.parametrize(
    "line",
    [
        "- I owe Priya €40 for the gate; gate code 4711.",
        "- Promised Tomasz the alarm code: 1234.",
        "- Bank PIN for the joint account I owe into: [REDACTED:pin] (€20 a month).",
        "- I agreed to share the wifi password Lantern-Fjord-42 with Sreenivas.",
        "- Medication portal login: password: Tr0ub4dor&3 (renew 20mg prescription)",
        "- I owe the API €12: api_key = sk-proj-FAKEfake1234567890FAKEfake1234",
    ],
)
def test_never_a_secret_whatever_else_the_line_says(line: str) -> None:
    assert is_secret(line)
    assert suggest_memory("what do I owe, what did I promise or agree, my medication", [hit(line)]) is None


@pytest.mark.parametrize(
    "text",
    [
        "Productivity advice promises that you will get on top of everything.",  # not the user's promise
        "Read committed: no dirty reads or dirty writes.",
        "Paid €4.50 for coffee.",  # money, but nobody owes anything
        "## Rules we agreed",  # a heading names a section, it states nothing
        "Talked about sleep and felt better.",
    ],
)
def test_nothing_where_no_fact_of_these_kinds_is_stated(text: str) -> None:
    assert suggest_memory("what did I promise about sleep and money", [hit(text)]) is None


def test_a_fact_after_lines_the_text_leaves_out_names_its_own_line() -> None:
    # the ledger's chunk left a Dataview block (lines 22-24) out: its text's line 2 is the file's line 26
    text = "# Money with Sreenivas\n\nBalance: I owe **€79.50**."
    found = suggest_memory(
        "how much do I owe Sreenivas?",
        [replace(hit(text, title="Money with Sreenivas", start=20), line_map=((2, 6),))],
    )
    assert found is not None
    assert (found.start_line, found.end_line) == (26, 26)

"""A turn about the conversation itself, which the recall gate gives nothing (no note holds the chat)."""

from __future__ import annotations

import pytest

from backend.domain.recall.chat_turns import asks_about_the_chat


@pytest.mark.parametrize(
    "turn",
    [
        "summarize our conversation so far",
        "Summarise this chat for me",
        "recap what we discussed",
        "can you sum up what we've talked about?",
        "what did you just say?",
        "What have we covered?",
        "can you say that again?",
        "repeat that please",
        "go back over this whole discussion",
    ],
)
def test_turns_about_this_chat_are_read_as_such(turn: str) -> None:
    assert asks_about_the_chat(turn)


@pytest.mark.parametrize(
    "turn",
    [
        "which compulsory experiments has each class done so far",  # personal-dev: about classes
        "what did I discuss with Pete about the blacking",
        "what did we say in the conversation with the bank about the loan",
        "what did Dana and I agree in our conversation about the rent?",
        "summarize the science dept meeting",
        "what did Caroline and Melanie talk about last week?",
        "what did we decide about the database?",
        "tell me about the discussion on the hull",
    ],
)
def test_questions_of_the_vault_are_not(turn: str) -> None:
    assert not asks_about_the_chat(turn)

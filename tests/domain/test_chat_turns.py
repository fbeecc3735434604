"""A turn about the conversation itself, which the recall gate gives nothing (no note holds the chat)."""

from __future__ import annotations

import pytest

from backend.domain.recall.chat_turns import asks_about_the_chat, asks_to_make_something, to_the_agent


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
        "can you sum up what we’ve talked about?",  # the apostrophe phones type
        "what have we covered in this chat so far?",
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
        # the notes of another conversation, or a thing named after one
        "What did Sarah and I agree in our conversation last week?",
        "what did we decide in our discussion yesterday?",
        "What features did we plan for our chat app?",
        "what's the link to our discussion group?",
    ],
)
def test_questions_of_the_vault_are_not(turn: str) -> None:
    assert not asks_about_the_chat(turn)


@pytest.mark.parametrize(
    "turn",
    [
        "tell me a joke",
        "Tell me something funny",
        "can you tell me a story?",
        "make me laugh",
        "give me a fun fact",
        "write me a limerick about a cat",
        "please write a short poem about the sea.",
        "compose a haiku about autumn",
        "ok, tell me another joke please",
    ],
)
def test_turns_asking_the_agent_to_make_something_up_are_read_as_such(turn: str) -> None:
    assert asks_to_make_something(turn)
    assert to_the_agent(turn)


@pytest.mark.parametrize(
    "turn",
    [
        "tell me the story of how we bought Marigold",  # a story the vault holds
        "what funny story did Joanna tell?",
        "tell me a story about the time I broke my shoulder",
        "tell me something about Marigold",
        "what was the joke Oz made at the Christmas do?",
        "write down the battery spec",
        "give me a summary of the boat costs",
        "which poem did I learn for Esme's assembly?",
    ],
)
def test_questions_about_stories_and_jokes_in_the_notes_are_not(turn: str) -> None:
    assert not asks_to_make_something(turn)

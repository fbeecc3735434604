"""Turns addressed to the agent itself, which no note answers: one about the conversation ("summarize our
conversation so far", "recap what we discussed", "what did you just say?", "can you say that again?"), and
one asking it to make something up ("tell me a joke", "make me laugh", "write me a limerick about a cat").

It asks the agent about what was said in the chat, which the agent holds and no note does. A vault can still
look like an answer: LoCoMo's vault is made of conversations, and "summarize our conversation so far" found
them close by meaning (e5's gate, shipped and fitted, gave it an entry). So the recall gate gives such a turn
nothing, however close a note looks. Only a turn whose words point at this chat is read so ("the
conversation with Pete about the blacking" names another conversation, and asks the vault about it; "what did
we agree in our conversation last week?" and "our chat app" ask about the notes; "which experiments has each
class done so far" asks about classes). English turns only.
"""

from __future__ import annotations

import re

_CHAT = r"(?:conversation|chat|discussion|thread)"
_SAID = (
    r"(?:say|said|ask|asked|discuss|discussed|talk\s+about|talked\s+about|cover|covered"
    r"|go\s+over|went\s+over)"
)
_END = r"\s*[?.!]*\s*$"
_ABOUT_THE_CHAT = re.compile(
    # "summarise this chat", "our conversation so far": the chat the turn ends on, not "our chat app", "in our
    # conversation last week", "the conversation with Pete about ..." (another conversation, in the notes)
    rf"\b(?:this|our)\s+(?:whole\s+|last\s+|current\s+)?{_CHAT}\b"
    r"(?=\s*(?:so\s+far|until\s+now|till\s+now|up\s+to\s+now|here|for\s+(?:me|us))?(?:,?\s*please)?"
    rf"{_END})"
    # "what did you just say?", "what have we discussed?": nothing asked about beyond what was said
    rf"|\bwhat\s+(?:did|have)\s+(?:you|I|we)\s+(?:just\s+)?{_SAID}{_END}"
    rf"|\b(?:recap|summari[sz]e|sum\s+up)\s+(?:what\s+)?(?:we|we['’]ve|you['’]ve|you|I)\s+(?:have\s+)?(?:just\s+)?{_SAID}{_END}"
    r"|\b(?:repeat|say)\s+(?:that|it)\s+(?:again|please)\b",
    re.IGNORECASE,
)


def asks_about_the_chat(turn: str) -> bool:
    return _ABOUT_THE_CHAT.search(turn) is not None


# What an agent is asked to make up. A person's notes hold jokes and stories too (a vault of chats is full of
# "that's so funny!"), so by meaning they look close, and the gate fitted for a model without shipped weights
# set its floor above "tell me something funny" over LoCoMo's conversations. The whole turn is the request:
# "tell me the story of how we bought Marigold" and "what funny story did Joanna tell?" ask the vault.
_POLITE = r"(?:(?:please|pls|ok|okay|now|so|hey),?\s+)?(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?"
# "a joke", "another short story", "one more fun fact": one piece of something made up
_A_PIECE = (
    r"(?:a|an|another|one\s+more)\s+(?:short\s+|good\s+|funny\s+|little\s+)?"
    r"(?:joke|pun|riddle|story|poem|limerick|haiku|sonnet|song|rhyme|(?:fun|funny|random)\s+fact)"
)
_MADE_UP = re.compile(
    rf"^\s*{_POLITE}(?:"
    rf"(?:tell|give)\s+(?:me|us)\s+(?:{_A_PIECE}|something\s+(?:funny|interesting|random|fun|silly))"
    # "write me a limerick about a cat", "compose a haiku about autumn": made to order, on any subject
    rf"|(?:write|compose|make\s+up)\s+(?:me\s+|us\s+)?{_A_PIECE}(?:\s+(?:about|on|for)\s+[^?.!\n]{{1,60}})?"
    r"|make\s+(?:me|us)\s+(?:laugh|smile)"
    rf")(?:,?\s+please)?{_END}",
    re.IGNORECASE,
)


def asks_to_make_something(turn: str) -> bool:
    """Whether the whole turn asks the agent to make something up: a joke, a story, a poem, a fun fact."""
    return _MADE_UP.search(turn) is not None


def to_the_agent(turn: str) -> bool:
    """Whether no note can answer the turn, addressed as it is to the agent itself: the recall gate gives
    it nothing, and the gate fitted for a model places its floor by the turns that can reach it."""
    return asks_about_the_chat(turn) or asks_to_make_something(turn)

"""A turn about the conversation itself: "summarize our conversation so far", "recap what we discussed", "what
did you just say?", "can you say that again?".

It asks the agent about what was said in the chat, which the agent holds and no note does. A vault can still
look like an answer: LoCoMo's vault is made of conversations, and "summarize our conversation so far" found
them close by meaning (e5's gate, shipped and fitted, gave it an entry). So the recall gate gives such a turn
nothing, however close a note looks. Only a turn whose words point at this chat is read so ("the
conversation with Pete about the blacking" names another conversation, and asks the vault about it; "which
experiments has each class done so far" asks about classes). English turns only.
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
    # "this chat", "our conversation", "the whole discussion", not "the conversation with Pete about ..."
    rf"\b(?:this|our)\s+(?:whole\s+|last\s+|current\s+)?{_CHAT}\b(?!\s+(?:with|about|on)\b)"
    # "what did you just say?", "what have we discussed?": nothing asked about beyond what was said
    rf"|\bwhat\s+(?:did|have)\s+(?:you|I|we)\s+(?:just\s+)?{_SAID}{_END}"
    rf"|\b(?:recap|summari[sz]e|sum\s+up)\s+(?:what\s+)?(?:we|we've|you've|you|I)\s+(?:have\s+)?(?:just\s+)?{_SAID}{_END}"
    r"|\b(?:repeat|say)\s+(?:that|it)\s+(?:again|please)\b",
    re.IGNORECASE,
)


def asks_about_the_chat(turn: str) -> bool:
    return _ABOUT_THE_CHAT.search(turn) is not None

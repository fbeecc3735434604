"""The words a question writes with a capital inside a sentence: the names of the people, places and things
it asks about ("how much does Lyd owe me", "what did Boatyard Pete quote", "When did Melanie go to the
park?").

A person writes a name with its capital wherever it falls, and most other words without one; a sentence's
first word, "I" ("I'd"), a title or an initial ("Dr.", "C. S."), and the words of the period the question
names ("in May 2024") are capitalised for other reasons and are not names. A question that capitalises
most of its words (Title Case, shouting), or is written in a language capitalising every noun (German), says
nothing by its capitals: it names nothing here (two halves of XQuAD's German vault side by side: with German
nouns read as names, nDCG@10 of the merged list fell 0.952 -> 0.884 and 0.962 -> 0.930).

Beside another vault, the vault whose hits write more of the names the question writes answers first
(application/search/narrowing.py, domain/ranking/vault_merge.py): a vault that never mentions Melanie cannot
say when she went to the park, however sure it is of parks."""

from __future__ import annotations

import re
from collections.abc import Iterable

from backend.domain.text.sparse import fold, tokenize

_WORD = re.compile(r"[^\W_][\w'’-]*")
# what ends a sentence, or opens a quotation: the next word's capital is the sentence's, not a name's
_OPENERS = (".", "?", "!", ":", ";", '"', "“", "„", "«", "¿", "¡", "(", "\n")
_FIRST_PERSON = re.compile(r"I(?:['’](?:m|d|ve|ll))?")  # capitalised in English wherever it falls
# a title or an initial stands before a name and is none ("Dr. Seuss", "C. S. Lewis")
_TITLES = frozenset({"dr", "mr", "mrs", "ms", "mx", "prof", "st", "sr", "jr"})
# languages that write every noun with a capital: their capitals do not mark names (ISO 639-1)
_NOUNS_CAPITALISED = frozenset({"de", "lb"})
# more capitals than this share of a question's words: it capitalises by habit, not names
_MOST = 0.5


def named_words(text: str, period: str = "", language: str | None = None) -> tuple[str, ...]:
    """The folded words (sparse.tokenize) of the names `text` writes, each once, in order; `period`: the
    text of the period it names (its month or day names are capitalised as such, not as names);
    `language`: the one it is written in, as detected (None: not known)."""
    if language in _NOUNS_CAPITALISED:
        return ()
    inside = [match.group(0) for match in _WORD.finditer(text) if not _opens_sentence(text, match.start())]
    capitalised = [word for word in inside if word[0].isupper() and not _FIRST_PERSON.fullmatch(word)]
    if not capitalised or len(capitalised) > _MOST * len(inside):
        return ()
    skipped = set(tokenize(period)) | _TITLES
    named = (word for word in _folded(capitalised) if word not in skipped and len(word) > 1)
    return tuple(dict.fromkeys(named))


def names_held(texts: Iterable[str], names: tuple[str, ...]) -> int:
    """How many of `names` the `texts` together hold as whole words, folded as sparse.tokenize folds."""
    missing = set(names)
    for text in texts:
        if not missing:
            break
        folded = fold(text)
        missing = {name for name in missing if not _holds_word(folded, name)}
    return len(names) - len(missing)


def _holds_word(text: str, word: str) -> bool:
    """Whether `text` holds `word` (letters and figures, as tokenize gives it) whole: no letter or figure
    just before or after it. Found by `str.find`, not a pattern made for the question's names: compiling
    one took most of the ~0.1 ms each vault of a search over several spent here."""
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        if (start == 0 or not text[start - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        start = text.find(word, start + 1)
    return False


def _opens_sentence(text: str, start: int) -> bool:
    before = text[:start].rstrip(" \t")
    return not before or before.endswith(_OPENERS)


def _folded(words: list[str]) -> Iterable[str]:
    for word in words:
        yield from tokenize(word)

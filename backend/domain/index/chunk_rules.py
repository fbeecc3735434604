"""Which rules cut a vault's notes into the chunks an index holds, and what each chunk's payload says.

A change to parsing, chunking or a payload rule (the periods a chunk is of, say) reaches a note only when
it is indexed again: an index built before it keeps what it stored. Raise `CHUNK_RULES` with such a change
when indexes already built should get it: an index recorded with a lower number is rebuilt in the background
on its next start, while it keeps answering (IndexSupervisor), and re-embeds nothing the embedding cache
holds. Leave it for a change that needs no index work (ranking, recall, anything read at query time).

1: the periods a heading labels its section with ("## 2025" in a ledger kept by year).
2: a decade is its ten years ("the 1990s", not 1990), a year glued to a code, a sum or a size is none
   ("BA2025", "£2025", "1920x1080"), and when a note was made is never what it is of, however its key is
   written ("Created:", "date created:" as the Linter plugin writes it, "created_at").
3: a chunk that leaves hidden lines out (comments, Dataview blocks) stores where its lines stand in the file
   (line_map.py), so a quote of some of its lines cites the note's own.
4: a note of headings or a query alone, found by its title, is cited by its whole lines (was 1-1, which holds
   no title), and its chunk says it is its title alone (never quoted); a clipping's address keeps the query
   parameters that say what the page is (`keyword=`, `author=`: dropped as if credentials before).
5: a secret written in a note (a password, an API key) is no keyword term and no embedded word: a guessed
   password typed as a query found the note holding it, though its text was shown redacted; a table's header
   naming a column Pin is no PIN (a wiring table's colours were redacted, and now would not be indexed).
6: the days and months a chunk writes in other languages than English are its periods ("12. März 2026",
   "12.03.2026", "12 de marzo de 2026", "2026年3月12日", "März 2026"), as a note's name's are.
7: a chunk says whether its note states the time it is of (`date:`, a day or label in its name, its folder;
   not `created:`): asked about a year, a chunk of a note that does not, writing that year beside days of
   another time, keeps its score (search.ranking.time_factor).
8: that record reads the note's `date:`, name and folder only: a property's day (a person's `birthday:`, a
   clipping's `published:`) says what a note holds, not the time every chunk of it is of.
"""

from __future__ import annotations

CHUNK_RULES = 8  # 0: an index built before the rules were recorded

"""The instructions recorded with an index: read back as written, and an index recorded before they existed
read as built without any, so only a model whose documents get an instruction is rebuilt."""

from __future__ import annotations

from backend.domain.index.embedding_instructions import known_instructions
from backend.domain.models import IndexIdentity
from backend.infrastructure.qdrant.engine import identity_from_record, identity_record


def configured(model: str, dimension: int) -> IndexIdentity:
    instructions = known_instructions(model)
    assert instructions is not None
    return IndexIdentity(
        model,
        dimension,
        "bm25f",
        48,
        document_instruction=instructions.document,
        query_instruction=instructions.query,
    )


def test_the_instructions_are_recorded_and_read_back() -> None:
    identity = configured("nomic-embed-text", 768)

    assert identity_from_record(identity_record(identity)) == identity


def test_an_index_from_before_the_instructions_reads_as_built_without_them() -> None:
    old = {
        "embedding_model": "mxbai-embed-large",
        "dimension": 1024,
        "keyword_encoding": "bm25f",
        "dense_windows": 48,
    }

    stored = identity_from_record(old)

    assert stored is not None
    assert (stored.document_instruction, stored.query_instruction) == ("", "")


def test_an_old_mxbai_index_is_kept_its_documents_never_had_an_instruction() -> None:
    old = IndexIdentity("mxbai-embed-large", 1024, "bm25f", 48)

    # the query instruction is new, but queries are embedded as they are asked: nothing stored changes
    assert old.matches(configured("mxbai-embed-large", 1024))


def test_an_old_nomic_index_is_outdated_its_documents_lack_search_document() -> None:
    old = IndexIdentity("nomic-embed-text", 768, "bm25f", 48)

    assert not old.matches(configured("nomic-embed-text", 768))
    assert old.matches(IndexIdentity("nomic-embed-text", 768, "bm25f", 48))  # only the instruction differs

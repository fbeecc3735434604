"""The instructions a model served over HTTP is given, found by any name a person writes for it."""

from __future__ import annotations

import pytest

from backend.domain.index.embedding_instructions import Instructions, known_instructions, resolve

REPRESENT = "Represent this sentence for searching relevant passages: "
INSTRUCT = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: "


@pytest.mark.parametrize(
    ("name", "query", "document"),
    [
        # Ollama's names, with tags and library paths, in any case
        ("mxbai-embed-large", REPRESENT, ""),
        ("mxbai-embed-large:335m", REPRESENT, ""),
        ("library/MXBAI-embed-large:latest", REPRESENT, ""),
        ("nomic-embed-text", "search_query: ", "search_document: "),
        ("nomic-embed-text-v2-moe", "search_query: ", "search_document: "),
        ("snowflake-arctic-embed:335m", REPRESENT, ""),
        ("snowflake-arctic-embed2", "query: ", ""),
        ("bge-m3", "", ""),
        ("bge-large", REPRESENT, ""),
        ("all-minilm:l6-v2", "", ""),
        ("embeddinggemma", "task: search result | query: ", "title: none | text: "),
        ("paraphrase-multilingual", "", ""),
        ("granite-embedding:278m", "", ""),
        ("gte-large", "", ""),
        # Hugging Face names (an OpenAI-compatible server serves them by these) and GGUF files
        ("mixedbread-ai/mxbai-embed-large-v1", REPRESENT, ""),
        ("nomic-ai/nomic-embed-text-v1.5", "search_query: ", "search_document: "),
        ("models/nomic-embed-text-v1.5.Q8_0.gguf", "search_query: ", "search_document: "),
        ("Snowflake/snowflake-arctic-embed-l-v2.0", "query: ", ""),
        ("Snowflake/snowflake-arctic-embed-m-v1.5", REPRESENT, ""),
        ("BAAI/bge-large-en-v1.5", REPRESENT, ""),
        ("intfloat/e5-large-v2", "query: ", "passage: "),
        ("intfloat/multilingual-e5-small", "query: ", "passage: "),
        ("intfloat/multilingual-e5-large-instruct", INSTRUCT, ""),
        ("Alibaba-NLP/gte-Qwen2-1.5B-instruct", INSTRUCT, ""),
        ("Alibaba-NLP/gte-base-en-v1.5", "", ""),
    ],
)
def test_a_known_model_gets_its_documentations_instructions(name: str, query: str, document: str) -> None:
    assert known_instructions(name) == Instructions(query, document)


def test_an_unknown_model_gets_none_unless_the_settings_give_them() -> None:
    assert known_instructions("my-own-embedder") is None
    assert resolve("my-own-embedder") == Instructions()
    assert resolve("my-own-embedder", query="q: ", document="d: ") == Instructions("q: ", "d: ")


def test_a_setting_overrides_the_table_and_an_empty_one_means_none() -> None:
    assert resolve("nomic-embed-text", query="") == Instructions("", "search_document: ")
    assert resolve("mxbai-embed-large", document="doc: ") == Instructions(REPRESENT, "doc: ")

"""What an embedding model served over HTTP (Ollama, an OpenAI-compatible server) wants put before a search
query and before a document, from each model's own documentation.

Asymmetric retrieval models are trained with an instruction on one side or both ("Represent this sentence for
searching relevant passages: " before a query for mxbai-embed-large); a server embeds the text it is sent as
it is, so without the instruction every query is embedded as if it were a passage. The in-process ONNX models
add their own (e5's "query: " / "passage: ", onnx_minilm.py) and never go through this table.

A model is found by its Ollama name (`name`, `name:tag`, `library/name`, `user/name`), a Hugging Face name
(`org/name`) or a GGUF file name, case-insensitively: the longest entry the name starts with wins, so
`snowflake-arctic-embed2` is not `snowflake-arctic-embed` and `multilingual-e5-large-instruct` is not
`multilingual-e5-`. A model not in the table gets none unless EMBEDDING_QUERY_INSTRUCTION /
EMBEDDING_DOCUMENT_INSTRUCTION give them (`resolve`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Instructions:
    """The text put before a query and before a document ("" = none)."""

    query: str = ""
    document: str = ""


NONE = Instructions()
# the retrieval instruction BGE's English models were trained with, which mxbai and Snowflake's v1 reuse
_REPRESENT = Instructions(query="Represent this sentence for searching relevant passages: ")
_E5 = Instructions(query="query: ", document="passage: ")
_QUERY = Instructions(query="query: ")  # Snowflake's v2 models: e5's query prefix, none before documents
# BGE's Chinese models' own retrieval instruction
_BGE_ZH = Instructions(query="为这个句子生成表示以用于检索相关文章：")
# the instruction-tuned LLM embedders: a task on the query side only, the documents as they are
_WEB_SEARCH_TASK = "Given a web search query, retrieve relevant passages that answer the query"
_INSTRUCT = Instructions(query=f"Instruct: {_WEB_SEARCH_TASK}\nQuery: ")

# name prefix (lower case, without org or tag) -> instructions; each with the documentation it is taken from
KNOWN_INSTRUCTIONS: dict[str, Instructions] = {
    # huggingface.co/mixedbread-ai/mxbai-embed-large-v1 ("for retrieval ... add the prompt to the query,
    # nothing to the documents"); ollama.com/library/mxbai-embed-large shows the same query prompt
    "mxbai-embed-large": _REPRESENT,
    # huggingface.co/nomic-ai/nomic-embed-text-v1.5 and nomic-embed-text-v2-moe: "search_query: " before
    # questions, "search_document: " before documents (v1, v1.5 and v2-moe alike)
    "nomic-embed-text": Instructions(query="search_query: ", document="search_document: "),
    # huggingface.co/Snowflake/snowflake-arctic-embed-l (v1 and v1.5, every size): the query prefix
    # "Represent this sentence for searching relevant passages: ", documents without one
    "snowflake-arctic-embed": _REPRESENT,
    # huggingface.co/Snowflake/snowflake-arctic-embed-l-v2.0 and -m-v2.0 (Ollama: snowflake-arctic-embed2):
    # prompt_name="query" prepends "query: ", documents get no prompt
    "snowflake-arctic-embed2": _QUERY,
    "snowflake-arctic-embed-l-v2": _QUERY,
    "snowflake-arctic-embed-m-v2": _QUERY,
    # huggingface.co/BAAI/bge-m3: "no need to add instruction to queries"
    "bge-m3": NONE,
    # huggingface.co/BAAI/bge-large-en-v1.5 (Ollama's bge-large): the instruction before short queries for
    # passage retrieval, none before passages; the same for the base and small English models
    "bge-large": _REPRESENT,
    "bge-base-en": _REPRESENT,
    "bge-small-en": _REPRESENT,
    # huggingface.co/BAAI/bge-large-zh-v1.5: the Chinese models' own query instruction
    "bge-large-zh": _BGE_ZH,
    "bge-base-zh": _BGE_ZH,
    "bge-small-zh": _BGE_ZH,
    # huggingface.co/sentence-transformers/all-MiniLM-L6-v2 (Ollama's all-minilm), all-mpnet-base-v2:
    # symmetric sentence models, none
    "all-minilm": NONE,
    "all-mpnet-base": NONE,
    # huggingface.co/intfloat/e5-large-v2, intfloat/multilingual-e5-large: "query: " before queries and
    # "passage: " before passages, or performance degrades (every e5-* and multilingual-e5-* size)
    "e5-": _E5,
    "multilingual-e5-": _E5,
    # huggingface.co/intfloat/multilingual-e5-large-instruct, intfloat/e5-mistral-7b-instruct: a one-sentence
    # task before queries ("Instruct: {task}\nQuery: {query}"), none before documents
    "multilingual-e5-large-instruct": _INSTRUCT,
    "e5-mistral-7b-instruct": _INSTRUCT,
    # huggingface.co/thenlper/gte-large, Alibaba-NLP/gte-large-en-v1.5, gte-multilingual-base: "no
    # instructions", queries and documents embedded alike
    "gte-small": NONE,
    "gte-base": NONE,
    "gte-large": NONE,
    "gte-multilingual": NONE,
    # huggingface.co/Alibaba-NLP/gte-Qwen2-7B-instruct (and 1.5B): instruction tuning on the query side only
    "gte-qwen2": _INSTRUCT,
    # huggingface.co/Qwen/Qwen3-Embedding-0.6B: f"Instruct: {task}\nQuery:{query}" (no space after the colon),
    # documents as they are
    "qwen3-embedding": Instructions(query=f"Instruct: {_WEB_SEARCH_TASK}\nQuery:"),
    # huggingface.co/google/embeddinggemma-300m (ai.google.dev/gemma/docs/embeddinggemma): queries
    # "task: search result | query: ", documents "title: {title | none} | text: " (no title here: none)
    "embeddinggemma": Instructions(query="task: search result | query: ", document="title: none | text: "),
    # huggingface.co/sentence-transformers/paraphrase-multilingual-mpnet-base-v2 (Ollama's
    # paraphrase-multilingual): a symmetric paraphrase model, none
    "paraphrase-multilingual": NONE,
    # huggingface.co/ibm-granite/granite-embedding-30m-english and -278m-multilingual (Ollama's
    # granite-embedding): the card's usage encodes queries and passages as they are, none
    "granite-embedding": NONE,
}


def base_name(model: str) -> str:
    """`model` as the table is keyed: lower case, without an org or library path (`library/`, `org/`,
    a GGUF file's folders) and without an Ollama tag (`:335m`)."""
    return model.strip().lower().rsplit("/", 1)[-1].split(":", 1)[0]


def known_instructions(model: str) -> Instructions | None:
    """The instructions the model's documentation gives it (the longest matching entry), else None."""
    name = base_name(model)
    matches = [prefix for prefix in KNOWN_INSTRUCTIONS if name.startswith(prefix)]
    if not matches:
        return None
    return KNOWN_INSTRUCTIONS[max(matches, key=len)]


def resolve(model: str, *, query: str | None = None, document: str | None = None) -> Instructions:
    """The instructions in force for `model`: each given one as given ("" = none), the others from the
    table (none for a model it does not know)."""
    known = known_instructions(model) or NONE
    return Instructions(
        query=known.query if query is None else query,
        document=known.document if document is None else document,
    )

"""Examples for the OpenAPI schema, trimmed from real answers of the service on the bundled example vault
(captured by scripts/agent_examples.py; docs/agents/SKILL.md shows them whole). tests/api/test_openapi_docs.py
checks every example against its schema."""

from __future__ import annotations

from typing import Any

LEDGER = "Finance/Money with Sreenivas.md"
BALANCE = (
    "## Current balance\n\nAs of **28 March 2026**: **I owe Sreenivas €79.50.**\n\n"
    "Plan: pay it off in full before we fly to Lisbon on 14 May."
)

SEARCH_RESULT: dict[str, Any] = {
    "chunk_id": "27532db9-1299-5a91-b1d7-5b77430a8883",
    "note_path": LEDGER,
    "note_title": "Money with Sreenivas",
    "content": BALANCE,
    "score": 0.34285715222358704,
    "confidence": 0.4509,
    "heading_context": "Money with Sreenivas > Current balance",
    "start_line": 14,
    "end_line": 18,
    "tags": ["finance", "ledger"],
    "aliases": ["Sreenivas ledger", "IOU Sree"],
    "date": "2026-01-10",
    "highlights": ["owe", "Sreenivas"],
    "sensitive_categories": ["finance"],
    "redactions": 0,
    "obsidian_uri": "obsidian://open?vault=example-vault&file=Finance%2FMoney%20with%20Sreenivas.md",
}

FACT: dict[str, Any] = {
    "key": "sreenivas-balance",
    "value": "I owe Sreenivas €79.50 (28 March 2026); pay it before the Lisbon trip on 14 May.",
    "source": LEDGER,
    "source_exists": True,
    "created_at": "2026-11-22T22:40:10.250541Z",
    "updated_at": "2026-11-22T22:40:10.250541Z",
    "sensitive_categories": ["finance"],
    "redactions": 0,
    "score": None,
}

MEMORY_SUGGESTION: dict[str, Any] = {
    "key": "money_with_sreenivas_balance",
    "value": "As of 28 March 2026: I owe Sreenivas €79.50. (Money with Sreenivas)",
    "source": LEDGER,
    "start_line": 16,
    "end_line": 16,
    "kind": "money_owed",
    "confidence": 0.4509,
}

SEARCH_RESPONSE: dict[str, Any] = {
    "query": "how much do I owe Sreenivas?",
    "mode": "hybrid",
    "status": "healthy",
    "warnings": [],
    "results": [SEARCH_RESULT],
    "related_notes": [
        {
            "note_path": "People/Sreenivas.md",
            "note_title": "Sreenivas",
            "relationship": "outlink",
            "link_count": 1,
        }
    ],
    "memories": [{**FACT, "score": 0.4000000059604645}],
    "sensitive_detected": True,
    "total_hits": 100,
    "search_time_ms": 11.9,
    "memory_suggestion": MEMORY_SUGGESTION,
}

NOTE: dict[str, Any] = {
    "note_path": LEDGER,
    "note_title": "Money with Sreenivas",
    "aliases": ["Sreenivas ledger", "IOU Sree"],
    "tags": ["finance", "ledger"],
    "date": "2026-01-10",
    "modified": "2026-11-22T21:54:40.040702Z",
    "size_bytes": 1388,
    "total_lines": 37,
    "start_line": 14,
    "end_line": 18,
    "content": BALANCE,
    "redactions": 0,
    "sensitive_categories": ["finance"],
    "status": "healthy",
    "warnings": [],
    "obsidian_uri": "obsidian://open?vault=example-vault&file=Finance%2FMoney%20with%20Sreenivas.md",
}

NOTE_SUMMARY: dict[str, Any] = {
    "note_path": "Journal/2026/2026-03-28.md",
    "note_title": "2026-03-28",
    "aliases": [],
    "tags": ["journal", "mentalhealth", "health", "work", "finance"],
    "date": "2026-03-28",
    "modified": "2026-11-22T21:54:40.041220Z",
    "size_bytes": 825,
    "sensitive_categories": ["health", "finance"],
}

NOTE_LIST: dict[str, Any] = {
    "notes": [NOTE_SUMMARY],
    "total": 11,
    "limit": 1,
    "offset": 1,
    "next_offset": 2,
    "status": "healthy",
    "warnings": [],
}

NOTE_LINKS: dict[str, Any] = {
    "note_path": "People/Sreenivas.md",
    "note_title": "Sreenivas",
    "outlinks": [
        {
            "note_path": LEDGER,
            "note_title": "Money with Sreenivas",
            "kind": "wikilink",
            "anchor": None,
            "text": None,
            "line": 30,
        }
    ],
    "backlinks": [
        {
            "note_path": "Home.md",
            "note_title": "Home",
            "kind": "wikilink",
            "anchor": None,
            "text": None,
            "line": 43,
        }
    ],
    "unresolved": [],
    "attachments": [],
}

NOTE_CHUNKS: dict[str, Any] = {
    "note_path": LEDGER,
    "note_title": "Money with Sreenivas",
    "current": True,
    "chunks": [
        {
            "chunk_id": "5a3e9c1d-7b2f-5e4a-9c8d-1f2e3a4b5c6d",
            "chunk_index": 1,
            "heading_context": "Current balance",
            "start_line": 14,
            "end_line": 18,
            "tags": ["finance", "ledger"],
            "date": "2026-01-10",
            "language": "en",
            "embedded_text": "Money with Sreenivas > Current balance\n\n" + BALANCE,
        }
    ],
}
UNRESOLVED_LINKS: dict[str, Any] = {
    "total": 1,
    "items": [
        {
            "source_path": "Projects/Architecture overview.md",
            "target": "Connection pooling with PgBouncer",
            "kind": "wikilink",
            "line": 30,
        }
    ],
    "next_offset": None,
}
CONTEXT_RESPONSE: dict[str, Any] = {
    "query": "Do I still owe him money?\nI'm flying to Lisbon with Sreenivas in May.",
    "context": f"[{LEDGER}:14-18] Money with Sreenivas > Current balance\n{BALANCE}\n\n"
    "[Travel/Lisbon trip May 2026.md:47-48] Lisbon trip May 2026 > Budget\n## Budget …",
    "chars": 297,
    "max_chars": 300,
    "sources": [
        {
            "kind": "note",
            "note_path": LEDGER,
            "note_title": "Money with Sreenivas",
            "heading_context": "Money with Sreenivas > Current balance",
            "start_line": 14,
            "end_line": 18,
            "memory_key": None,
            "attribution": f"{LEDGER}:14-18",
            "score": 0.4000000059604645,
            "confidence": 0.4509,
            "chars": 212,
            "truncated": False,
            "sensitive_categories": ["finance"],
        },
        {
            "kind": "note",
            "note_path": "Travel/Lisbon trip May 2026.md",
            "note_title": "Lisbon trip May 2026",
            "heading_context": "Lisbon trip May 2026 > Budget",
            "start_line": 47,
            "end_line": 48,
            "memory_key": None,
            "attribution": "Travel/Lisbon trip May 2026.md:47-48",
            "score": 0.2539682686328888,
            "confidence": 0.0008,
            "chars": 83,
            "truncated": True,
            "sensitive_categories": ["finance"],
        },
    ],
    "omitted": 8,
    "mode": "hybrid",
    "status": "healthy",
    "warnings": [],
    "sensitive_detected": True,
    "memory_suggestion": MEMORY_SUGGESTION,
}

INDEX_STATUS: dict[str, Any] = {
    "indexed_notes": 32,
    "indexed_chunks": 161,
    "dense_pending": 0,
    "unindexed_files": 0,
    "pending_changes": 0,
    "watcher_running": True,
    "watcher_restarts": 0,
    "watcher_error": None,
    "links": {"total": 81, "resolved": 80, "unresolved": 1, "embeds": 1},
    "last_indexed": "2026-11-22T22:40:08.123456Z",
    "last_sync": "2026-11-22T22:40:08.123456Z",
    "generation": "g1",
    "embedder": {
        "provider": "onnx",
        "model": "all-MiniLM-L6-v2",
        "state": "ready",
        "healthy": True,
        "chosen_by": "languages",
        "reason": "first index, the notes are mostly in English: en 100% of 32 sampled notes",
        "proposal": None,
    },
    "embedding_model": "all-MiniLM-L6-v2",
    "embedding_dimension": 384,
    "index_model": "all-MiniLM-L6-v2",
    "index_dimension": 384,
    "model_change": None,
    "recall_calibration": {"source": "shipped", "model": "all-MiniLM-L6-v2"},
    "languages": {
        "shares": {"en": 1.0},
        "sampled_notes": 32,
        "query_languages": ["en"],
        "non_english_share": 0.0,
    },
    "vault_path": "/home/me/knowledge-bridge/docs/example-vault",
    "store": "embedded",
    "store_healthy": True,
    "job": {
        "id": "619c02ed9c67",
        "kind": "index",
        "phase": "done",
        "done": 32,
        "total": 32,
        "started_at": "2026-11-22T22:39:56.068312Z",
        "finished_at": "2026-11-22T22:40:08.123469Z",
        "error": None,
        "detail": None,
        "vectors_left": 0,
        "eta_seconds": None,
    },
    "search_warming": False,
    "failed_files": [],
}

VERIFY_RESULT: dict[str, Any] = {  # a note added and one deleted while the service was stopped
    "consistent": False,
    "notes_on_disk": 32,
    "notes_indexed": 32,
    "indexed_chunks": 161,
    "dense_pending": 0,
    "pending_changes": 0,
    "drift": [
        {"kind": "notes on disk missing from the index", "count": 1, "paths": ["Plumber.md"]},
        {"kind": "indexed notes no longer on disk", "count": 1, "paths": ["Shopping list.md"]},
    ],
    "skipped": [],
}
JOB_ACCEPTED: dict[str, Any] = {"job_id": "a41c9e07d2b3", "status": "accepted", "status_url": "/index/status"}
HEALTH: dict[str, Any] = {"status": "ok", "version": "0.1.0", "instance": "5f0c2a9e8d7b6a41"}

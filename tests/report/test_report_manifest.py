"""Reading a dump: the manifest, the files it names, and the counts the CLI prints."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from depyf.report import DumpError, load_dump, summarize
from depyf.report.manifest import referenced_files

FIXTURE = Path(__file__).parent / "fixtures" / "toy_dump"


def test_fixture_loads_with_every_listed_file():
    dump = load_dump(FIXTURE)
    assert [f["name"] for f in dump.functions] == ["toy_example", "torch_dynamo_resume_in_toy_example_at_5"]
    assert set(dump.index["files"]) <= set(dump.files)
    assert "cpp_fused_abs_add_div_lt_sum_0" in dump.files["__compiled_fn_1.kernel.0.py"]
    assert dump.missing == [] and dump.truncated == []


def test_summary_counts_match_the_fixture():
    s = summarize(load_dump(FIXTURE))
    assert (s.functions, s.user_functions, s.resume_functions) == (2, 1, 1)
    assert (s.cache_entries, s.graphs, s.graph_breaks, s.recompilations, s.fallbacks) == (4, 4, 1, 2, 1)
    lines = s.lines(report_path="/x/index.html", dump_dir="/x")
    assert "graph breaks       : 1" in lines
    assert lines[-1] == "report             : /x/index.html"


def test_referenced_files_are_unique_and_include_graph_stages():
    index = json.loads((FIXTURE / "index.json").read_text())
    names = referenced_files(index)
    assert len(names) == len(set(names))
    assert "__compiled_fn_13.captured_graph.0.py" in names


def test_missing_directory_names_the_fix(tmp_path):
    with pytest.raises(DumpError, match="no such dump directory.*depyf run"):
        load_dump(tmp_path / "nope")


def test_directory_without_index_is_not_a_dump(tmp_path):
    with pytest.raises(DumpError, match="index.json: missing"):
        load_dump(tmp_path)


def test_newer_format_version_asks_for_an_upgrade(tmp_path):
    (tmp_path / "index.json").write_text(json.dumps({"format": "depyf-dump", "version": 99}))
    with pytest.raises(DumpError, match="version 99 is newer.*upgrade depyf"):
        load_dump(tmp_path)


def test_broken_json_is_reported(tmp_path):
    (tmp_path / "index.json").write_text("{not json")
    with pytest.raises(DumpError, match="cannot be read as JSON"):
        load_dump(tmp_path)


def test_unknown_keys_and_missing_files_are_tolerated(tmp_path):
    dump_dir = tmp_path / "d"
    shutil.copytree(FIXTURE, dump_dir)
    index = json.loads((dump_dir / "index.json").read_text())
    index["a_future_key"] = {"anything": 1}
    index["functions"][0]["another_future_key"] = [1, 2]
    (dump_dir / "index.json").write_text(json.dumps(index))
    (dump_dir / "__compiled_fn_7.kernel.0.py").unlink()
    dump = load_dump(dump_dir)
    assert dump.missing == ["__compiled_fn_7.kernel.0.py"]
    assert summarize(dump).graphs == 4


def test_files_outside_the_dump_are_never_read(tmp_path):
    secret = tmp_path / "secret.py"
    secret.write_text("token = 1\n")
    dump_dir = tmp_path / "d"
    dump_dir.mkdir()
    (dump_dir / "index.json").write_text(json.dumps({"version": 1, "files": ["../secret.py"]}))
    assert load_dump(dump_dir).files == {}

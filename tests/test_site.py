"""The static HTML site: pages, links, escaping, the JSON API and its schema."""

from __future__ import annotations

import dataclasses
import html
import json
import re
from pathlib import Path

import jsonschema
import pytest
from conftest import add_commit
from sample_repo import FILES, XSS_MESSAGE, error_for, mine_sample, publish_site

from miner import cli
from miner.model import SCHEMA_VERSION, Analysis, ExampleFix
from miner.pipeline import mine_and_analyze
from miner.publish import schemas
from miner.publish.html import script_json

LINK = re.compile(r'(?:href|src)="([^"]*)"')


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def sample(make_repo):
    return mine_sample(make_repo)


@pytest.fixture
def built(sample, tmp_path: Path):
    repo, mined = sample
    dest = tmp_path / "site"
    stats = publish_site(mined, dest)
    return mined.result, dest, stats


def test_files_and_relative_links(built) -> None:
    result, dest, stats = built
    files = tree(dest)
    assert stats["written"] == len(files) and stats["removed"] == 0
    assert stats["bytes"] == sum(len(b) for b in files.values())
    ids = sorted(e.error_id for e in result.errors)
    assert sorted(p[len("errors/") : -5] for p in files if p.startswith("errors/")) == ids
    assert sorted(p[len("api/errors/") : -5] for p in files if p.startswith("api/errors/")) == ids
    for required in (
        "index.html",
        "search-data.js",
        "api/index.json",
        f"api/schema/error-v{SCHEMA_VERSION}.json",
        f"api/schema/index-v{SCHEMA_VERSION}.json",
        "static/site.css",
        "static/pygments.css",
        "static/search.js",
        "static/vendor/minisearch-7.2.0.js",
        "static/vendor/LICENSE-minisearch.txt",
    ):
        assert required in files
    # Every local link is relative and points at a file of the site.
    checked = 0
    for rel, data in files.items():
        if not rel.endswith(".html"):
            continue
        for target in LINK.findall(data.decode()):
            target = html.unescape(target)
            if target.startswith("https://github.com/sgl-project/sglang/blob/v1/python/"):
                continue
            assert not target.startswith(("/", "http:", "https:", "file:")), (rel, target)
            if target.startswith("#"):
                assert f'id="{target[1:]}"' in data.decode(), (rel, target)
                continue
            local = target.split("#")[0].split("?")[0]
            assert (dest / rel).parent.joinpath(local).resolve().is_file(), (rel, target)
            checked += 1
    assert checked > 50


def test_card_page(built) -> None:
    result, dest, _ = built
    error_id = error_for(result, "auxiliary_state.py", 12)
    page = (dest / "errors" / f"{error_id}.html").read_text()
    assert '<h1 id="title">MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, got ' in page
    assert (
        '<pre class="message">MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, got '
        '<span class="placeholder" title="filled in at run time">{type(pool)}</span></pre>'
    ) in page
    # Pygments: real line numbers (the excerpt starts at line 1), the raise
    # statement (lines 12-15) marked, the rest not.
    assert '<a href="#L-1"> 1</a>' in page and '<a href="#L-15">15</a>' in page
    marked = re.findall(r'<a id="L-(\d+)" name="L-\d+"></a><span class="hll">', page)
    assert marked == ["12", "13", "14", "15"]
    assert (
        'href="https://github.com/sgl-project/sglang/blob/v1/python/sglang/srt/hardware_backend/'
        'mlx/kv_cache/auxiliary_state.py#L12"'
    ) in page
    assert "<li><code>not isinstance(pool, MlxAuxiliaryStatePool)</code>" in page
    assert f'href="../api/errors/{error_id}.json"' in page
    assert "<script" not in page


def test_index_page(built) -> None:
    result, dest, _ = built
    page = (dest / "index.html").read_text()
    rows = re.findall(r'<tr data-exception="([^"]*)" data-module="([^"]*)"', page)
    assert len(rows) == len(result.errors) == 11
    assert ("TypeError", "sglang.srt.hardware_backend.mlx.kv_cache.auxiliary_state") in rows
    assert '<option value="ValueError">ValueError (5)</option>' in page
    assert '<option value="sglang.srt.server_args">' in page
    assert re.findall(r"<script[^>]*>", page) == [
        '<script src="static/vendor/minisearch-7.2.0.js">',
        '<script src="search-data.js">',
        '<script src="static/search.js">',
    ]


def test_html_in_messages_renders_as_text_everywhere(built) -> None:
    result, dest, _ = built
    files = tree(dest)
    for rel, data in files.items():
        text = data.decode()
        if rel.endswith(".html"):
            assert "<script>alert(" not in text, rel
            assert "</script><script>" not in text, rel
            assert "<b>{tag}</b>" not in text, rel
    data_js = files["search-data.js"].decode()
    assert "<" not in data_js and ">" not in data_js and "&" not in data_js
    prefix, payload = data_js.split(" = ", 1)
    assert prefix == "window.RAISE_MINER_SEARCH"
    docs = json.loads(payload.rstrip(";\n"))["docs"]
    assert [XSS_MESSAGE] in [d[5] for d in docs]  # the literal message, intact once decoded
    card = files[f"errors/{error_for(result, 'html_tags.py', 3)}.html"].decode()
    assert (
        "Refusing tag &lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;quotes&#34; &#39;single&#39;"
        in card
    )
    # Pygments escapes the excerpt as well.
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in card.split('class="excerpt"')[1]
    other = files[f"errors/{error_for(result, 'html_tags.py', 4)}.html"].decode()
    assert "Cannot render &lt;b&gt;" in other and "&lt;/script&gt;&lt;script&gt;alert(2)" in other


def test_script_json_cannot_close_a_script() -> None:
    text = script_json({"m": "</script><!-- & \u2028"})
    assert text == '{"m":"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028"}'
    assert json.loads(text) == {"m": "</script><!-- & \u2028"}


def _validator(name: str, dest: Path) -> jsonschema.Draft202012Validator:
    """The validator of the schema ``name`` as the site at ``dest`` publishes it."""
    schema = json.loads((dest / "api" / "schema" / f"{name}-v{SCHEMA_VERSION}.json").read_text())
    assert schema == schemas.schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_api_matches_the_published_schema(built) -> None:
    result, dest, _ = built
    properties = schemas.schema("error")["properties"]
    assert properties["schema_version"] == {"const": SCHEMA_VERSION}
    errors = _validator("error", dest)
    index = _validator("index", dest)
    published = json.loads((dest / "api" / "index.json").read_text())
    index.validate(published)
    assert [e["error_id"] for e in published["errors"]] != []
    for path in sorted((dest / "api" / "errors").glob("*.json")):
        errors.validate(json.loads(path.read_text()))
    # The schema rejects what it should: a wrong version, a bad id, a missing field.
    record = json.loads(next((dest / "api" / "errors").glob("*.json")).read_text())
    for broken in (
        {**record, "schema_version": SCHEMA_VERSION + 1},
        {**record, "error_id": "XYZ"},
        {k: v for k, v in record.items() if k != "sites"},
        {**record, "message_parts": [{"text": "a", "expr": "b"}]},
    ):
        assert not errors.is_valid(broken)
    entry = published["errors"][0]
    assert not index.is_valid({**published, "errors": [{**entry, "card": "/abs.html"}]})


def test_analysis_sections_render(sample, tmp_path: Path) -> None:
    repo, mined = sample
    result = mined.result
    error_id = error_for(result, "registry.py", 8)
    related = error_for(result, "registry.py", 10)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Later(Analysis):  # a field another stage may add later
        history: tuple[str, ...] = ()

    analysis = Later(
        error_id=error_id,
        trigger="`ctx.is_hybrid_ssm` is true when `f` runs.",
        what_it_means="Hybrid SSM models <em>cannot</em> use **host_pool**.",
        situations=("A Mamba hybrid with `--retraction host_pool`",),
        solutions=("Use the default backup", "Upgrade"),
        example_fix=ExampleFix("shell", "--backup host_pool", "--backup default"),
        related=(related, "0000000000000000"),
        author="Analysis generated from the source at v1",
        history=("Added in v0.5.18", "Message changed in v0.5.19"),
    )
    publish_site(mined, tmp_path / "site", analyses={error_id: analysis})
    page = (tmp_path / "site" / "errors" / f"{error_id}.html").read_text()
    assert (
        "<p>Hybrid SSM models &lt;em&gt;cannot&lt;/em&gt; use <strong>host_pool</strong>.</p>"
        in page
    )
    assert "<p><code>ctx.is_hybrid_ssm</code> is true when <code>f</code> runs.</p>" in page
    assert "<li>A Mamba hybrid with <code>--retraction host_pool</code></li>" in page
    assert "<ol>\n<li>Use the default backup</li>\n<li>Upgrade</li>\n</ol>" in page
    assert 'id="example-fix"' in page and page.count('<div class="highlight">') == 3
    assert (
        f'<li><a href="{related}.html">Host-pool retraction does not support pure-SWA '
        "models.</a></li>"
    ) in page
    assert "<li><code>0000000000000000</code></li>" in page  # not in this release: no link
    assert '<section class="extra" id="history">\n<h2>History</h2>' in page
    assert "<li>Message changed in v0.5.19</li>" in page
    assert "Analysis generated from the source at v1. Extracted from" in page


def test_deterministic_incremental_and_stale_pages(make_repo, tmp_path: Path) -> None:
    repo, mined = mine_sample(make_repo)
    result = mined.result
    first = publish_site(mined, tmp_path / "a")
    publish_site(mined, tmp_path / "b")
    assert tree(tmp_path / "a") == tree(tmp_path / "b")
    again = publish_site(mined, tmp_path / "a")
    assert again["written"] == 0 and again["unchanged"] == first["written"]
    gone = error_for(result, "html_tags.py", 3)
    add_commit(repo, {}, tag="v2", remove=("python/sglang/srt/utils/html_tags.py",))
    later = mine_and_analyze(str(repo), "v2", slug="sgl-project/sglang")
    stats = publish_site(later, tmp_path / "a")
    assert stats["removed"] == 4  # two errors: their pages and JSON
    assert not (tmp_path / "a" / "errors" / f"{gone}.html").exists()
    assert len(list((tmp_path / "a" / "errors").glob("*.html"))) == 9


def test_cli_site_from_records_equals_mine_site(make_repo, tmp_path: Path, capsys) -> None:
    repo = make_repo(FILES, tag="v1", name="sglang")
    out = tmp_path / "out"
    args = ["mine", "--repo", str(repo), "--commit", "v1", "--out", str(out)]
    assert cli.main([*args, "--slug", "sgl-project/sglang", "--site"]) == 0
    assert f"site: {out / 'site' / 'index.html'}" in capsys.readouterr().out
    assert cli.main(["site", "--out", str(out), "--dest", str(tmp_path / "again")]) == 0
    assert capsys.readouterr().out.startswith(f"site: {tmp_path / 'again' / 'index.html'}: 11 ")
    assert tree(out / "site") == tree(tmp_path / "again")
    # The site's error records are the mined output's records.
    for path in (out / "api" / "errors").glob("*.json"):
        assert path.read_bytes() == (out / "site" / "api" / "errors" / path.name).read_bytes()
    assert cli.main(["site", "--out", str(tmp_path / "nothing")]) == 2
    assert "no mined records here (manifest.json missing)" in capsys.readouterr().err


def test_release_diff_pages(sample, tmp_path: Path) -> None:
    repo, mined = sample
    result = mined.result
    out = tmp_path / "out"
    args = ["mine", "--repo", str(repo), "--commit", "v1", "--slug", "sgl-project/sglang"]
    assert cli.main([*args, "--out", str(out)]) == 0
    added = error_for(result, "html_tags.py", 3)
    (out / "diffs").mkdir()
    diff = {
        "old": "v0",
        "new": "v1",
        "changes": [
            {"kind": "added", "error_id": added, "note": "<script>alert(3)</script>"},
            {"kind": "removed", "error_id": "0123456789abcdef", "message": "old text"},
        ],
    }
    (out / "diffs" / "v0..v1.json").write_text(json.dumps(diff))
    (out / "diffs" / "broken.json").write_text("[1, 2")
    assert cli.main(["site", "--out", str(out)]) == 0
    page = (out / "site" / "diffs" / "v0..v1.html").read_text()
    assert "<dt>Old</dt><dd>v0</dd>" in page and "<h2>Changes (2)</h2>" in page
    assert "<th>error_id</th><th>kind</th><th>message</th><th>note</th>" in page
    assert f'<td><a href="../errors/{added}.html">Refusing tag &lt;script&gt;' in page
    assert "<td>&lt;script&gt;alert(3)&lt;/script&gt;</td>" in page
    assert "<td>0123456789abcdef</td>" in page
    index = (out / "site" / "index.html").read_text()
    assert '<a href="diffs/v0..v1.html">v0..v1</a>' in index and "broken" not in index
    assert json.loads((out / "site" / "api" / "diffs" / "v0..v1.json").read_text()) == diff
    published = json.loads((out / "site" / "api" / "index.json").read_text())
    assert published["diffs"] == ["api/diffs/v0..v1.json"]


def test_cards_rendered_by_worker_processes_are_the_same(sample, tmp_path: Path, monkeypatch):
    repo, mined = sample
    publish_site(mined, tmp_path / "one", jobs=1)
    monkeypatch.setattr("miner.publish.html.PARALLEL_MIN", 0)
    publish_site(mined, tmp_path / "two", jobs=2)
    assert tree(tmp_path / "one") == tree(tmp_path / "two")

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
from miner.lookup.report import card_location
from miner.model import SCHEMA_VERSION, Analysis, ExampleFix, FixKind
from miner.pipeline import mine_and_analyze
from miner.publish import schemas
from miner.publish.bundles import bundle_path, bundle_record, load_bundle, read_record
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
    modules = {e.error_id: e.module for e in result.errors}
    table = json.loads(files["api/ids.json"])
    assert {i: table["modules"][n] for i, n in table["ids"].items()} == modules
    records = {i: bundle_record(load_bundle(files[bundle_path(modules[i])]), i) for i in ids}
    audience = {i: records[i]["audience"] for i in ids}
    internal = sorted(i for i in ids if audience[i] == "internal")
    assert len(internal) == 3
    pages = sorted(p[len("errors/") : -5] for p in files if p.startswith("errors/"))
    assert pages == sorted(set(ids) - set(internal))  # a page for each user-facing error
    # the records in one bundle per module, none on its own
    assert not [p for p in files if p.startswith("api/errors/")]
    assert sorted(p for p in files if p.startswith("api/modules/")) == sorted(
        {bundle_path(m) for m in modules.values()}
    )
    assert sorted(p for p in files if p.startswith("internal/")) == [
        "internal/index.html",
        "internal/sglang.srt.hardware_backend.mlx.kv_cache.auxiliary_state.html",
        "internal/sglang.srt.utils.html_tags.html",
    ]
    for required in (
        "index.html",
        "search-data.js",
        "api/index.json.gz",
        f"api/schema/error-v{SCHEMA_VERSION}.json",
        f"api/schema/index-v{SCHEMA_VERSION}.json",
        "static/site.css",
        "static/pygments.css",
        "static/search.js",
        "static/table.js",
        "all.html",
        "modules/sglang.srt.server_args.html",
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
            if target == "https://github.com/sgl-project/sglang/issues":
                continue
            assert not target.startswith(("/", "http:", "https:", "file:")), (rel, target)
            if target.startswith("#"):
                assert f'id="{target[1:]}"' in data.decode(), (rel, target)
                continue
            local, _, anchor = target.split("?")[0].partition("#")
            page = (dest / rel).parent.joinpath(local).resolve()
            assert page.is_file(), (rel, target)
            if anchor:  # an entry on a grouped page
                assert f'id="{anchor}"' in page.read_text(), (rel, target)
            checked += 1
    assert checked > 50


def test_card_page(built) -> None:
    result, dest, _ = built
    error_id = error_for(result, "auxiliary_state.py", 6)
    page = (dest / "errors" / f"{error_id}.html").read_text()
    assert '<h1 id="title">MLX auxiliary-state radix cache does not support ' in page
    assert (
        '<pre class="message">MLX auxiliary-state radix cache does not support '
        "enable_mamba_extra_buffer yet.</pre>"
    ) in page
    # Pygments: real line numbers (the excerpt starts at line 1), the raise
    # statement (lines 6-9) marked, the rest not.
    assert '<div class="highlight numbered" style="counter-reset: line 0">' in page
    (error,) = [e for e in result.errors if e.error_id == error_id]
    lines = error.primary.excerpt.text.count("\n") + 1
    assert lines > 9 and error.primary.excerpt.start_line == 1
    assert re.findall(r'<span id="L-(\d+)"', page) == [str(n) for n in range(1, lines + 1)]
    marked = re.findall(r'<span id="L-(\d+)" class="hll"><span>', page)
    assert marked == ["6", "7", "8", "9"]
    assert (
        'href="https://github.com/sgl-project/sglang/blob/v1/python/sglang/srt/hardware_backend/'
        'mlx/kv_cache/auxiliary_state.py#L6"'
    ) in page
    assert "<li><code>params.enable_mamba_extra_buffer</code>" in page
    bundle = "api/modules/sglang.srt.hardware_backend.mlx.kv_cache.auxiliary_state.json.gz"
    assert f'Data as JSON: <a href="../{bundle}">{bundle}</a>' in page
    # the module wraps only after its dots
    module = "sglang.<wbr>srt.<wbr>hardware_backend.<wbr>mlx.<wbr>kv_cache.<wbr>auxiliary_state"
    assert f'<code class="module">{module}</code>' in page
    assert "<script" not in page


def test_grouped_page_of_an_internal_check(built) -> None:
    result, dest, _ = built
    error_id = error_for(result, "auxiliary_state.py", 12)
    assert not (dest / "errors" / f"{error_id}.html").exists()
    page = dest / "internal" / "sglang.srt.hardware_backend.mlx.kv_cache.auxiliary_state.html"
    text = page.read_text()
    entry = text.split(f'<article class="entry" id="{error_id}">')[1].split("</article>")[0]
    assert (
        '<pre class="message">MlxAuxiliaryStateComponent requires MlxAuxiliaryStatePool, got '
        '<span class="placeholder" title="filled in at run time">{type(pool)}</span></pre>'
    ) in entry
    assert (
        'href="https://github.com/sgl-project/sglang/blob/v1/python/sglang/srt/hardware_backend/'
        'mlx/kv_cache/auxiliary_state.py#L12">python/sglang/srt/hardware_backend/mlx/kv_cache/'
        "auxiliary_state.py:12</a> in <code>MlxAuxiliaryStateComponent.__init__</code>"
    ) in entry
    assert "<li><code>not isinstance(pool, MlxAuxiliaryStatePool)</code>" in entry
    assert "message names no setting, input or dependency (rule <code>default</code>)" in entry
    bundle = "api/modules/sglang.srt.hardware_backend.mlx.kv_cache.auxiliary_state.json.gz"
    # its record: in the bundle of its module, linked once for the page
    assert f'<a class="bundle" href="../{bundle}">{bundle}</a>.</p>' in text
    assert bundle not in entry and error_id in load_bundle((dest / bundle).read_bytes())["errors"]
    assert 'class="highlight"' not in text  # no excerpt, no prose
    assert '<a href="index.html">Internal checks</a>' in text
    # the audience's page says once what it means, and lists its module pages
    about = (dest / "internal" / "index.html").read_text()
    assert "Report it, with: the full message and the traceback" in about
    assert 'href="https://github.com/sgl-project/sglang/issues"' in about
    assert (
        '<tr><td><a href="sglang.srt.utils.html_tags.html"><code class="module">sglang.<wbr>srt.'
        "<wbr>utils.<wbr>html_tags</code></a></td><td>2</td></tr>"
    ) in about
    # the index and the search data point at the entry
    published = load_bundle((dest / "api" / "index.json.gz").read_bytes())
    entries = {e["error_id"]: e for e in published["errors"]}
    card = "internal/sglang.srt.hardware_backend.mlx.kv_cache.auxiliary_state.html#" + error_id
    assert entries[error_id]["audience"] == "internal"
    assert entries[error_id]["card"] == card
    user = error_for(result, "registry.py", 8)
    assert (entries[user]["audience"], entries[user]["card"]) == (
        "unsupported",
        f"errors/{user}.html",
    )
    data = (dest / "search-data.js").read_text().split(" = ", 1)[1].rstrip(";\n")
    search = json.loads(data)
    docs = {d[0]: d for d in search["docs"]}
    assert search["pages"][docs[error_id][7]] + "#" + error_id == card
    assert docs[error_id][8] == "internal"
    assert docs[user][7:] == [-1, "unsupported", ""]  # its own card; of the newest release


def test_index_page(built) -> None:
    result, dest, _ = built
    page = (dest / "index.html").read_text()
    # the user-facing errors by module, with counts per audience, linked to
    # the module's page; no table of every error
    assert "<tr data-audience=" not in page
    modules = re.findall(r'<tr data-module="([^"]*)"><td><a href="([^"]*)">', page)
    assert modules == [
        (
            "sglang.srt.hardware_backend.mlx.kv_cache.auxiliary_state",
            "modules/sglang.srt.hardware_backend.mlx.kv_cache.auxiliary_state.html",
        ),
        ("sglang.srt.mem_cache.registry", "modules/sglang.srt.mem_cache.registry.html"),
        ("sglang.srt.server_args", "modules/sglang.srt.server_args.html"),
    ]
    assert "<th>Module</th><th>Errors</th><th>user-setting</th><th>unsupported</th></tr>" in page
    assert (
        '<tr data-module="sglang.srt.server_args"><td>'
        '<a href="modules/sglang.srt.server_args.html">'
        '<code class="module">sglang.<wbr>srt.<wbr>server_args</code></a></td><td>5</td>'
        "<td>5</td><td></td></tr>"
    ) in page
    assert '<a href="all.html">All 8 in one table</a>' in page
    # the other audiences: linked counts per module
    assert '<section class="grouped" data-audience="internal" id="audience-internal">' in page
    assert (
        '<li data-module="sglang.srt.utils.html_tags"><a href="internal/sglang.srt.utils.'
        'html_tags.html"><code class="module">sglang.<wbr>srt.<wbr>utils.<wbr>html_tags</code>'
        '</a> <span class="count">2</span></li>'
    ) in page
    assert re.findall(r"<script[^>]*>", page) == [
        '<script src="static/vendor/minisearch-7.2.0.js">',
        '<script src="search-data.js">',
        '<script src="static/search.js">',
    ]
    module = (dest / "modules" / "sglang.srt.mem_cache.registry.html").read_text()
    assert "2 errors of v1: 2 unsupported." in module
    assert module.count('<a href="../errors/') == 2


def test_page_of_every_user_facing_error(built) -> None:
    result, dest, _ = built
    page = (dest / "all.html").read_text()
    rows = re.findall(
        r'<tr data-audience="([^"]*)" data-exception="([^"]*)" data-module="([^"]*)"', page
    )
    # the user-facing errors only, by audience (in display order) then module
    assert len(rows) == 8 and len(result.errors) == 11
    assert [a for a, _, _ in rows] == ["user-setting"] * 5 + ["unsupported"] * 3
    assert rows[5] == (
        "unsupported",
        "NotImplementedError",
        "sglang.srt.hardware_backend.mlx.kv_cache.auxiliary_state",
    )
    assert '<option value="ValueError">ValueError (4)</option>' in page
    assert '<option value="sglang.srt.server_args">' in page
    assert '<option value="">user-facing (8)</option>' in page
    assert 'value="internal"' not in page  # no cards of their own: not in this table
    assert re.findall(r"<script[^>]*>", page) == ['<script src="static/table.js">']


def test_html_in_messages_renders_as_text_everywhere(built, sample, tmp_path: Path) -> None:
    result, dest, _ = built
    files = tree(dest)
    for rel, data in files.items():
        text = load_bundle(data)["errors"] if rel.endswith(".gz") else data.decode()
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
    entries = files["internal/sglang.srt.utils.html_tags.html"].decode()
    escaped = (
        "Refusing tag &lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;quotes&#34; &#39;single&#39;"
    )
    assert escaped in entries
    assert (
        "Cannot render &lt;b&gt;" in entries and "&lt;/script&gt;&lt;script&gt;alert(2)" in entries
    )
    # the same errors with cards of their own (as if users could cause them)
    _, mined = sample
    analyses = {k: dataclasses.replace(a, audience="user-input") for k, a in mined.analyses.items()}
    publish_site(mined, tmp_path / "cards", analyses=analyses)
    cards = tree(tmp_path / "cards")
    assert not any(rel.startswith("internal/") for rel in cards)
    card = cards[f"errors/{error_for(result, 'html_tags.py', 3)}.html"].decode()
    assert escaped in card and "<script>alert(" not in card
    # Pygments escapes the excerpt as well.
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in card.split('class="excerpt"')[1]
    other = cards[f"errors/{error_for(result, 'html_tags.py', 4)}.html"].decode()
    assert "Cannot render &lt;b&gt;" in other and "&lt;/script&gt;&lt;script&gt;alert(2)" in other
    assert "</script><script>" not in other


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
    published = load_bundle((dest / "api" / "index.json.gz").read_bytes())
    index.validate(published)
    assert [e["error_id"] for e in published["errors"]] != []
    records = [
        bundle_record(bundle, error_id)
        for path in sorted((dest / "api" / "modules").glob("*.json.gz"))
        for bundle in [load_bundle(path.read_bytes())]
        for error_id in bundle["errors"]
    ]
    assert len(records) == len(result.errors)
    for record in records:
        errors.validate(record)
    # The schema rejects what it should: a wrong version, a bad id, a missing field.
    record = records[0]
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
        audience="unsupported",
        trigger="`ctx.is_hybrid_ssm` is true when `f` runs.",
        what_it_means="Hybrid SSM models <em>cannot</em> use **host_pool**.",
        situations=("A Mamba hybrid with `--retraction host_pool`",),
        solutions=("Use the default backup", "Upgrade"),
        example_fix=ExampleFix("shell", "--backup host_pool", "--backup default", FixKind.FLAG),
        related=(related, "0000000000000000"),
        author="Analysis generated from the source at v1",
        history=("Added in v0.5.18", "Message changed in v0.5.19"),
    )
    publish_site(mined, tmp_path / "site", analyses={**mined.analyses, error_id: analysis})
    page = (tmp_path / "site" / "errors" / f"{error_id}.html").read_text()
    assert (
        "<p>Hybrid SSM models &lt;em&gt;cannot&lt;/em&gt; use <strong>host_pool</strong>.</p>"
        in page
    )
    assert "<p><code>ctx.is_hybrid_ssm</code> is true when <code>f</code> runs.</p>" in page
    assert "<li>A Mamba hybrid with <code>--retraction host_pool</code></li>" in page
    assert "<ol>\n<li>Use the default backup</li>\n<li>Upgrade</li>\n</ol>" in page
    assert 'id="example-fix"' in page and page.count('<div class="highlight') == 3
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
    # two internal errors of one module: its bundle of records and its page
    assert stats["removed"] == 2
    assert not (tmp_path / "a" / "api" / "modules" / "sglang.srt.utils.html_tags.json.gz").exists()
    assert not (tmp_path / "a" / "internal" / "sglang.srt.utils.html_tags.html").exists()
    assert len(list((tmp_path / "a" / "errors").glob("*.html"))) == 8
    ids = json.loads((tmp_path / "a" / "api" / "ids.json").read_text())["ids"]
    assert len(ids) == 9 and gone not in ids


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
    paths = sorted((out / "api" / "errors").glob("*.json"))
    modules = json.loads((out / "site" / "api" / "ids.json").read_text())["modules"]
    assert len(paths) == 11 and len(modules) < len(paths)
    for path in paths:
        module = json.loads(path.read_text())["module"]
        _, text = read_record(out / "site", path.stem, module)
        assert text == path.read_text()
    assert cli.main(["site", "--out", str(tmp_path / "nothing")]) == 2
    assert "no mined records here (manifest.json missing)" in capsys.readouterr().err


def test_release_diff_pages(sample, tmp_path: Path) -> None:
    """A diff the diff stage left in ``diffs/`` becomes a page of tables by
    kind and module, ids linked to their cards, changes as before/after."""
    repo, mined = sample
    result = mined.result
    out = tmp_path / "out"
    args = ["mine", "--repo", str(repo), "--commit", "v1", "--slug", "sgl-project/sglang"]
    assert cli.main([*args, "--out", str(out), "--no-origins"]) == 0  # as `sample` mined
    added = error_for(result, "html_tags.py", 3)
    changed = error_for(result, "registry.py", 8)
    (out / "diffs").mkdir()

    def side(error_id: str, title: str, guards: list[str]) -> dict:
        return {
            "error_id": error_id,
            "exception": "ValueError",
            "title": title,
            "message": title,
            "module": "sglang.srt.mem_cache.registry",
            "path": "python/sglang/srt/mem_cache/registry.py",
            "line": 8,
            "scope": "_create_unified_radix_cache",
            "guards": guards,
            "sites": 1,
        }

    diff = {
        "old": {"rev": "v0"},
        "new": {"rev": "v1"},
        "counts": {"removed": 1, "added": 1, "changed": 1, "moved": 0, "unchanged": 7},
        "changes": [
            {
                "kind": "removed",
                "old": side("0123456789abcdef", "old <b>text</b>", []),
                "new": None,
            },
            {"kind": "added", "old": None, "new": side(added, "Refusing tag", ["x"])},
            {
                "kind": "changed",
                "aspects": [{"kind": "message", "description": "Message template was reworded"}],
                "old": side("fedcba9876543210", "Host-pool retraction is not for Mamba.", []),
                "new": side(changed, "Host-pool retraction does not support Mamba models.", []),
            },
        ],
    }
    (out / "diffs" / "v0..v1.json").write_text(json.dumps(diff))
    (out / "diffs" / "broken.json").write_text("[1, 2")
    assert cli.main(["site", "--out", str(out)]) == 0
    page = (out / "site" / "diffs" / "v0..v1.html").read_text()
    assert "<h1>From v0 to v1</h1>" in page
    assert "1 removed, 1 added, 1 changed, 7 unchanged: errors paired one to one" in page
    assert '<tr><td><a href="#changed">Changed errors</a></td><td>1</td></tr>' in page
    assert "<tr><td>Unchanged errors</td><td>7 (not listed)</td></tr>" in page
    assert "<h2>Changed errors (1)</h2>" in page
    grouped = f"../internal/sglang.srt.utils.html_tags.html#{added}"
    assert f'<a href="{grouped}">Refusing tag</a> <code class="id">{added}</code>' in page
    assert f'<a href="../errors/{changed}.html">Host-pool retraction does not support' in page
    # an id without a page here is shown, not linked; mined text stays text
    assert 'old &lt;b&gt;text&lt;/b&gt; <code class="id">0123456789abcdef</code>' in page
    assert (
        '<dt>Message template was reworded</dt><dd><pre class="before">Host-pool retraction is '
        'not for Mamba.</pre><pre class="after">Host-pool retraction does not support Mamba '
        "models.</pre></dd>"
    ) in page
    assert "{&#34;" not in page and '{"' not in page  # no JSON objects in cells
    index = (out / "site" / "index.html").read_text()
    assert '<a href="diffs/v0..v1.html">v0..v1</a>' in index and "broken" not in index
    assert load_bundle((out / "site" / "api" / "diffs" / "v0..v1.json.gz").read_bytes()) == diff
    published = load_bundle((out / "site" / "api" / "index.json.gz").read_bytes())
    assert published["diffs"] == ["api/diffs/v0..v1.json.gz"]


def test_cards_rendered_by_worker_processes_are_the_same(sample, tmp_path: Path, monkeypatch):
    repo, mined = sample
    publish_site(mined, tmp_path / "one", jobs=1)
    monkeypatch.setattr("miner.publish.html.PARALLEL_MIN", 0)
    publish_site(mined, tmp_path / "two", jobs=2)
    assert tree(tmp_path / "one") == tree(tmp_path / "two")


def test_a_guard_outside_the_excerpt_is_not_a_broken_anchor(make_repo, tmp_path: Path) -> None:
    """A guard far above its raise is outside the excerpt: its line is named,
    not linked to an anchor the page does not have."""
    body = "".join(f"        y{n} = {n}\n" for n in range(30))
    raise_line = '        raise ValueError("--flag must be set when x is given")\n'
    source = f"def f(x):\n    if x:\n{body}{raise_line}"
    repo = make_repo({"pkg/server_args.py": source}, tag="v1")
    mined = mine_and_analyze(str(repo), "v1", slug="sgl-project/sglang", link_ref="v1")
    (error,) = mined.result.errors
    assert error.primary.line == 33 and error.primary.excerpt.start_line > 2
    publish_site(mined, tmp_path / "site")
    page = (tmp_path / "site" / "errors" / f"{error.error_id}.html").read_text()
    assert '<li><code>x</code> <span class="line">line 2</span></li>' in page
    assert 'href="#L-2"' not in page


def test_lookup_places_an_entry_from_the_site_bundles(built) -> None:
    """With no mined records beside the site, ``miner lookup`` finds where an
    internal error is documented from its record in its module's bundle."""
    result, dest, _ = built
    error_id = error_for(result, "auxiliary_state.py", 12)
    assert not (dest.parent / "api").exists()
    page = dest / "internal" / "sglang.srt.hardware_backend.mlx.kv_cache.auxiliary_state.html"
    assert card_location(dest.parent, error_id) == f"{page}#{error_id}"

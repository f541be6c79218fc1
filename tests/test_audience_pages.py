"""Where each error is documented, by audience: a full card for the errors a
user can cause, an anchored entry on a page per module for internal checks,
abstract stubs, the test suite and scripts; JSON for every error; the index
and the site list the user-facing errors first; lookup finds the right page."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import get_args

import pytest

from miner import cli, pipeline
from miner.analysis.audience import USER_FACING as CLASSIFIED_USER_FACING
from miner.model import AudienceName
from miner.publish import cards
from miner.publish.bundles import load_bundle
from miner.publish.cards import AUDIENCES, GROUPED, USER_FACING, card_ref, page_name

SERVER_ARGS = """\
def check(args):
    if args.tp_size <= 0:
        raise ValueError(f"Invalid tp_size {args.tp_size}: must be positive")
"""
CACHE = """\
def grow(pool, n):
    assert pool.free >= n
    return pool
"""
TESTS = """\
def test_grow():
    raise ValueError("the fixture pool did not grow")
"""
BENCH = """\
def main(argv):
    if not argv:
        raise SystemExit("usage: bench_grow.py N")
"""
FILES = {
    "app/server_args.py": SERVER_ARGS,
    "app/engine/cache.py": CACHE,
    "app/tests/test_cache.py": TESTS,
    "benchmark/bench_grow.py": BENCH,
}
#: The audience each fixture file's error gets, and its module.
EXPECTED = {
    "app/server_args.py": ("user-setting", "app.server_args"),
    "app/engine/cache.py": ("internal", "app.engine.cache"),
    "app/tests/test_cache.py": ("test", "app.tests.test_cache"),
    "benchmark/bench_grow.py": ("script", "benchmark.bench_grow"),
}


@pytest.fixture
def mined(make_repo):
    repo = make_repo(FILES, tag="v1", name="app")
    done = pipeline.mine_and_analyze(str(repo), "v1", slug="acme/app", link_ref="v1")
    return repo, done


def ids_by_path(done: pipeline.Mined) -> dict[str, str]:
    return {e.primary.path: e.error_id for e in done.result.errors}


def test_audiences_of_the_fixture(mined) -> None:
    _, done = mined
    ids = ids_by_path(done)
    assert sorted(ids) == sorted(FILES)
    for path, (audience, module) in EXPECTED.items():
        assert done.analyses[ids[path]].audience == audience, path
        assert (
            done.result.errors[[e.error_id for e in done.result.errors].index(ids[path])].module
            == module
        )


def test_audience_lists_agree_with_the_model() -> None:
    assert set(USER_FACING) == {str(a) for a in CLASSIFIED_USER_FACING}
    assert set(AUDIENCES) == set(get_args(AudienceName)) and len(AUDIENCES) == 8
    assert not set(USER_FACING) & set(GROUPED)
    for audience in GROUPED:
        assert audience in cards.AUDIENCE_GUIDES and audience in cards.AUDIENCE_TITLES


def test_one_full_card_the_others_on_grouped_pages(mined, tmp_path: Path) -> None:
    _, done = mined
    ids = ids_by_path(done)
    out = tmp_path / "out"
    pipeline.publish(done, out)
    # exactly one full card: the user-facing error's
    assert [p.name for p in (out / "errors").iterdir()] == [f"{ids['app/server_args.py']}.md"]
    # the JSON record of every error, with its audience
    for path, error_id in ids.items():
        record = json.loads((out / "api" / "errors" / f"{error_id}.json").read_text())
        assert record["audience"] == EXPECTED[path][0]
        assert record["analysis"]["audience_reason"]
    # the others: an anchored entry on the page of their module
    for path, (audience, module) in EXPECTED.items():
        if audience in USER_FACING:
            continue
        page = (out / audience / f"{module}.md").read_text()
        assert page.count('<a id="') == 1 and f'<a id="{ids[path]}"></a>' in page, path
        assert "](README.md)" in page and "](../index.md)" in page
        assert f"(../api/errors/{ids[path]}.json)" in page
        assert "## What it means" not in page and "## Solutions" not in page  # no prose
        about = (out / audience / "README.md").read_text()
        assert f"| [`{module}`]({module}.md) | 1 |" in about
    entry = (out / "internal" / "app.engine.cache.md").read_text()
    error_id = ids["app/engine/cache.py"]
    assert (
        f'<a id="{error_id}"></a>\n### `AssertionError`: `assert pool.free >= n`\n\n'
        "- At [`app/engine/cache.py:2`](https://github.com/acme/app/blob/v1/app/engine/cache.py#L2)"
        " in `grow`\n"
        "- Guards, outermost first: none\n"
        "- Why `internal`: assert with no message: an invariant of the code (rule `bare-assert`)\n"
        f"- JSON: [`api/errors/{error_id}.json`](../api/errors/{error_id}.json)\n"
    ) in entry
    script = (out / "script" / "benchmark.bench_grow.md").read_text()
    assert "- Guards, outermost first: `not argv` (line 2)\n" in script
    # each audience's page says once what it means and what to do
    internal = (out / "internal" / "README.md").read_text()
    assert internal.startswith("# Internal checks\n\nAn internal check of app failed")
    assert "the full message and the traceback; the app version" in internal
    assert "the launch command" in internal
    assert "[acme/app](https://github.com/acme/app/issues)" in internal
    assert not (out / "abstract").exists()  # no abstract stub in the fixture
    assert "test suite" in (out / "test" / "README.md").read_text()
    assert "benchmark" in (out / "script" / "README.md").read_text()


def test_index_lists_user_facing_errors_first(mined, tmp_path: Path) -> None:
    _, done = mined
    ids = ids_by_path(done)
    out = tmp_path / "out"
    pipeline.publish(done, out)
    index = (out / "index.md").read_text()
    counts = re.findall(r"^\| `([a-z-]+)` \| (\d+) \|", index, re.M)
    # counts per audience at the top, user-facing first, from the analyses
    assert counts == [("user-setting", "1"), ("internal", "1"), ("test", "1"), ("script", "1")]
    user = index.index("## Errors users can cause")
    other = index.index("## Other errors")
    assert index.index("## Errors by audience") < user < other
    setting = ids["app/server_args.py"]
    assert f"[{setting}](errors/{setting}.md)" in index[user:other]
    # the other audiences: their pages with counts, not their errors
    for path, (audience, module) in EXPECTED.items():
        if audience in USER_FACING:
            continue
        assert f"| [`{module}`]({audience}/{module}.md) | 1 |" in index[other:]
        assert ids[path] not in index
        assert f"({audience}/README.md)" in index


def test_site_pages_index_and_search_data(mined, tmp_path: Path) -> None:
    _, done = mined
    ids = ids_by_path(done)
    out = tmp_path / "out"
    pipeline.publish(done, out, site=True, jobs=1)
    site = out / "site"
    assert [p.name for p in (site / "errors").iterdir()] == [f"{ids['app/server_args.py']}.html"]
    table = json.loads((site / "api" / "ids.json").read_text())
    assert len(table["ids"]) == len(FILES)
    published = load_bundle((site / "api" / "index.json.gz").read_bytes())
    entries = {e["error_id"]: e for e in published["errors"]}
    data = (site / "search-data.js").read_text().split(" = ", 1)[1].rstrip(";\n")
    search = json.loads(data)
    docs = {d[0]: d for d in search["docs"]}
    for path, (audience, module) in EXPECTED.items():
        error_id = ids[path]
        card = card_ref(error_id, module, audience, ".html")
        assert entries[error_id]["audience"] == audience
        assert entries[error_id]["card"] == card
        page_index, shown, release = docs[error_id][7:]
        assert shown == audience and release == ""  # an error of the newest release
        assert (page_index < 0) == (audience in USER_FACING)
        if page_index >= 0:
            assert f"{search['pages'][page_index]}#{error_id}" == card
        page, _, anchor = card.partition("#")
        text = (site / page).read_text()
        if anchor:
            assert f'<article class="entry" id="{anchor}">' in text
            assert (site / audience / "index.html").is_file()
        else:
            assert page == f"errors/{error_id}.html"
    table = (site / "all.html").read_text()
    assert table.count("<tr data-audience=") == 1  # the table: user-facing errors
    assert '<option value="user-setting">user-setting (1)</option>' in table
    index = (site / "index.html").read_text()
    assert index.count('<tr data-module="app.server_args">') == 1  # by module, user-facing
    for audience in ("internal", "test", "script"):
        assert f'<section class="grouped" data-audience="{audience}"' in index
    assert index.index('id="by-module"') < index.index('id="other"')


def test_lookup_prints_the_grouped_page_of_an_internal_assert(
    mined, tmp_path: Path, capsys
) -> None:
    _, done = mined
    error_id = ids_by_path(done)["app/engine/cache.py"]
    paste = (
        "Traceback (most recent call last):\n"
        '  File "/srv/venv/lib/python3.11/site-packages/app/engine/cache.py", line 2, in grow\n'
        "    assert pool.free >= n\n"
        "AssertionError\n"
    )
    out = tmp_path / "out"
    pipeline.publish(done, out)
    assert cli.main(["lookup", "--out", str(out), paste]) == 0
    text = capsys.readouterr().out
    assert f"   card: {out / 'internal' / 'app.engine.cache.md'}#{error_id}\n" in text
    pipeline.publish(done, out, site=True, jobs=1)
    assert cli.main(["lookup", "--out", str(out), "--json", paste]) == 0
    top = json.loads(capsys.readouterr().out)["results"][0]
    assert top["error_id"] == error_id
    assert top["card"] == f"{out / 'site' / 'internal' / 'app.engine.cache.html'}#{error_id}"
    page, _, anchor = top["card"].partition("#")
    assert f'id="{anchor}"' in Path(page).read_text()
    assert cli.main(["lookup", "--out", str(out), "--base-url", "https://e.x/d/", paste]) == 0
    assert f"card: https://e.x/d/internal/app.engine.cache.html#{error_id}\n" in (
        capsys.readouterr().out
    )
    # a user-facing error keeps its card
    assert cli.main(["lookup", "--out", str(out), "Invalid tp_size -2: must be positive"]) == 0
    setting = ids_by_path(done)["app/server_args.py"]
    assert f"card: {out / 'site' / 'errors' / setting}.html\n" in capsys.readouterr().out


def test_a_card_id_stays_when_the_audience_changes(mined, tmp_path: Path) -> None:
    _, done = mined
    error_id = ids_by_path(done)["app/server_args.py"]
    out = tmp_path / "out"
    pipeline.publish(done, out, site=True, jobs=1)
    assert (out / "errors" / f"{error_id}.md").is_file()
    moved = dataclasses.replace(
        done,
        analyses={
            **done.analyses,
            error_id: dataclasses.replace(done.analyses[error_id], audience="internal"),
        },
    )
    counts = pipeline.publish(moved, out, site=True, jobs=1)
    # the same id, now an entry on its module's page; the old card is gone
    assert not (out / "errors" / f"{error_id}.md").exists()
    assert not (out / "site" / "errors" / f"{error_id}.html").exists()
    assert f'<a id="{error_id}"></a>' in (out / "internal" / "app.server_args.md").read_text()
    page = (out / "site" / "internal" / "app.server_args.html").read_text()
    assert f'<article class="entry" id="{error_id}">' in page
    assert (out / "api" / "errors" / f"{error_id}.json").is_file()
    # the site also drops the module's page of user-facing errors, now empty
    assert counts["output"]["removed"] == 1 and counts["site"]["removed"] == 2
    assert not (out / "site" / "modules" / "app.server_args.html").exists()
    # and back: the entry goes, the card comes back under the same id
    pipeline.publish(done, out, site=True, jobs=1)
    assert (out / "errors" / f"{error_id}.md").is_file()
    assert not (out / "internal" / "app.server_args.md").exists()
    assert not (out / "site" / "internal" / "app.server_args.html").exists()


def test_abstract_stub_page(mined, tmp_path: Path) -> None:
    """A method a subclass must implement (the extractor's ``body_only`` and
    ``abstract`` decide it; here the analysis is given)."""
    _, done = mined
    error_id = ids_by_path(done)["app/engine/cache.py"]
    stub = dataclasses.replace(
        done.analyses[error_id], audience="abstract", audience_rule="abstract"
    )
    done = dataclasses.replace(done, analyses={**done.analyses, error_id: stub})
    out = tmp_path / "out"
    pipeline.publish(done, out, site=True, jobs=1)
    assert f'<a id="{error_id}"></a>' in (out / "abstract" / "app.engine.cache.md").read_text()
    about = (out / "abstract" / "README.md").read_text()
    assert "A method a subclass must implement" in about
    assert "| [`app.engine.cache`](app.engine.cache.md) | 1 |" in about
    assert "must implement" in (out / "site" / "abstract" / "index.html").read_text()
    assert not (out / "internal").exists() and not (out / "site" / "internal").exists()


def test_site_from_records_is_byte_identical(mined, tmp_path: Path, capsys) -> None:
    repo, _ = mined
    out, again = tmp_path / "out", tmp_path / "again"
    args = ["mine", "--repo", str(repo), "--commit", "v1", "--out", str(out), "--site", "-j", "0"]
    assert cli.main([*args, "--slug", "acme/app", "--no-origins"]) == 0  # cards by words
    assert cli.main(["site", "--out", str(out), "--dest", str(again)]) == 0
    capsys.readouterr()

    def tree(root: Path) -> dict[str, bytes]:
        return {
            p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()
        }

    first = tree(out / "site")
    assert {rel.split("/")[0] for rel in first} >= {"internal", "test", "script", "errors", "api"}
    assert first == tree(again)


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("sglang.srt.mem_cache.registry", "sglang.srt.mem_cache.registry"),
        (".github.scripts.check", "_.github.scripts.check"),
        ("README", "_README"),
        ("index", "_index"),
        ("pkg.my module.ünï", "pkg.my_module._n_"),
        ("", "_"),
    ],
)
def test_page_names(module: str, name: str) -> None:
    assert page_name(module) == name


def test_long_module_names_are_cut_with_a_hash() -> None:
    module = ".".join(["component"] * 40)
    name = page_name(module)
    assert len(name) <= 130 and name != page_name(module + ".x")
    assert re.fullmatch(r"[A-Za-z0-9_.-]+-[0-9a-f]{12}", name)

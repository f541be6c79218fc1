"""``miner site`` on a mined folder writes the very bytes ``miner mine --site``
wrote: the site is a function of the saved records (sites, analyses,
configuration), not of anything only the mining run had in memory.

The fixture has a configuration model, so the analyses that the site renders
from ``analyses.jsonl`` name flags, dataclass settings and environment
variables; a fixture without one could pass while the republished cards lost
exactly those parts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from miner.cli import main

CLI = """\
import argparse

from app.server import ServerArgs, launch


def build_parser():
    parser = argparse.ArgumentParser(prog="app")
    parser.add_argument(
        "--retraction",
        choices=["none", "host_pool"],
        default="none",
        help="Where retracted requests are kept.",
    )
    ServerArgs.add_cli_args(parser)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    launch(args, ServerArgs.from_cli_args(args))


if __name__ == "__main__":
    main()
"""

SERVER = """\
import dataclasses
import os


@dataclasses.dataclass
class ServerArgs:
    page_size: int = dataclasses.field(default=1, metadata={"help": "Tokens per page."})
    decode_server: str = dataclasses.field(default="", metadata={"help": "Decode server URL."})

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--page-size", type=int, default=ServerArgs.page_size)
        parser.add_argument("--decode-server", type=str, default=ServerArgs.decode_server)

    @classmethod
    def from_cli_args(cls, args):
        return cls(page_size=args.page_size, decode_server=args.decode_server)


def launch(args, server_args):
    if args.retraction == "host_pool":
        raise ValueError("host pool needs a decode server")
    if server_args.page_size <= 0:
        raise ValueError(f"page_size must be positive, got {server_args.page_size}")
    if os.environ.get("APP_FLAG") == "1":
        raise RuntimeError("APP_FLAG=1 is not supported by this build")
    return server_args
"""

FILES = {"app/__init__.py": "", "app/cli.py": CLI, "app/server.py": SERVER}


def tree(root: Path, *, only: tuple[str, ...] = ()) -> dict[str, bytes]:
    """Relative path -> bytes of every file under ``root`` (those under the
    folders or with the names in ``only``, when given)."""
    files = {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*")) if p.is_file()}
    if only:
        files = {
            rel: p
            for rel, p in files.items()
            if any(rel == o or rel.startswith(o.rstrip("/") + "/") for o in only)
        }
    return {rel: p.read_bytes() for rel, p in files.items()}


def assert_same_tree(a: dict[str, bytes], b: dict[str, bytes]) -> None:
    assert sorted(a) == sorted(b), {
        "only in mine --site": sorted(set(a) - set(b)),
        "only in site": sorted(set(b) - set(a)),
    }
    differ = sorted(rel for rel in a if a[rel] != b[rel])
    assert not differ, f"files that differ between mine --site and site: {differ}"


def card_for(out: Path, message: str) -> str:
    """The Markdown card of the error whose message is ``message``."""
    for line in (out / "sites.jsonl").read_text(encoding="utf-8").splitlines():
        site = json.loads(line)
        if site["message"] == message:
            return (out / "errors" / f"{site['error_id']}.md").read_text(encoding="utf-8")
    raise AssertionError(f"no site with the message {message!r}")


def test_site_from_records_is_byte_identical_with_a_config_model(
    make_repo, tmp_path: Path, capsys
) -> None:
    repo = make_repo(FILES, tag="v1", name="app")
    out, again = tmp_path / "out", tmp_path / "again"
    mine = ["mine", "--repo", str(repo), "--commit", "v1", "--out", str(out), "--site"]
    assert main([*mine, "--slug", "acme/app", "-j", "0", "--no-origins"]) == 0
    assert main(["site", "--out", str(out), "--dest", str(again)]) == 0
    capsys.readouterr()

    # The analysis used the configuration model: a flag with its choices, a
    # dataclass setting and an environment variable, on the cards and pages.
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert "ServerArgs" in config["classes"]
    assert [e["name"] for e in config["env"]] == ["APP_FLAG"]
    host_pool = card_for(out, "host pool needs a decode server")
    assert "`--retraction` is `host_pool`" in host_pool
    # the fix picks another choice, on the command line of the module that
    # runs as one (``python -m app.cli``)
    assert "python -m app.cli ... --retraction none" in host_pool
    page_size = card_for(out, "page_size must be positive, got {server_args.page_size}")
    assert "the setting `ServerArgs.page_size`" in page_size
    app_flag = card_for(out, "APP_FLAG=1 is not supported by this build")
    assert "the environment variable `APP_FLAG` is `1`" in app_flag
    pages = "".join(p.read_text(encoding="utf-8") for p in (again / "errors").glob("*.html"))
    assert "--retraction" in pages and "APP_FLAG" in pages and "ServerArgs.page_size" in pages

    site = tree(out / "site")
    assert len([rel for rel in site if rel.startswith("errors/")]) == 3
    assert_same_tree(site, tree(again))


@pytest.mark.integration
def test_site_from_records_is_byte_identical_on_sglang(mined_release, tmp_path: Path, capsys):
    """The same on SGLang v0.5.19 (the session's mined release, published with
    its site): the JSON API, every error page and the index pages."""
    _, out = mined_release("v0.5.19")
    again = tmp_path / "again"
    assert main(["site", "--out", str(out), "--dest", str(again)]) == 0
    capsys.readouterr()
    assert "`--" in card_for_any_flag(out), "no card of v0.5.19 names a flag"
    only = ("api", "errors", "internal", "test", "script", "index.html", "search-data.js")
    first = tree(out / "site", only=only)
    assert len([rel for rel in first if rel.startswith("errors/")]) > 1000
    assert len([rel for rel in first if rel.startswith("internal/")]) > 1000
    assert_same_tree(first, tree(again, only=only))


def card_for_any_flag(out: Path) -> str:
    """Some card of ``out`` whose guard is linked to a command-line flag."""
    for card in sorted((out / "errors").glob("*.md")):
        text = card.read_text(encoding="utf-8")
        if "reads the setting" in text and "`--" in text:
            return text
    return ""

"""The optional LLM writer against a small OpenAI-compatible server on loopback."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from test_analysis_cards import mine_fixture

from miner.analysis import analyze
from miner.analysis.llm import LLMSettings, validate


class FakeEndpoint:
    """Answers ``/v1/chat/completions`` with prepared JSON, by a word of the request."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.answers: dict[str, dict | str] = {}
        self.status = 200
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                endpoint.requests.append({"path": self.path, "body": body})
                facts = json.loads(body["messages"][1]["content"])
                answer = next(
                    (a for key, a in endpoint.answers.items() if key in (facts["message"] or "")),
                    None,
                )
                if endpoint.status != 200 or answer is None:
                    self.send_response(endpoint.status if endpoint.status != 200 else 500)
                    self.end_headers()
                    return
                content = answer if isinstance(answer, str) else json.dumps(answer)
                data = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint() -> Iterator[FakeEndpoint]:
    server = FakeEndpoint()
    yield server
    server.close()


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory):
    return mine_fixture(tmp_path_factory)


@pytest.fixture(scope="module")
def result(mined):
    return mined.result


@pytest.fixture(scope="module")
def facts(mined):
    return mined.facts


GOOD = {
    "what_it_means": "The host pool cannot back up hybrid model state.",
    "trigger": "When `--retraction-backup` is `host_pool` and `ctx.is_hybrid_ssm` is true.",
    "situations": ["Decode servers that keep retracted requests in the host pool."],
    "solutions": ["Set `--retraction-backup` to `cpu_tensor`."],
}
MADE_UP = {
    "what_it_means": "Extra buffering is not implemented here.",
    "trigger": "When `--enable-extra-buffer` is given.",
    "situations": ["Copying flags between deployments."],
    "solutions": ["Drop `--enable-extra-buffer`."],
}


def settings(endpoint: FakeEndpoint, cache: Path, **kw) -> LLMSettings:
    return LLMSettings(
        base_url=endpoint.url, model="tiny-test", cache_dir=cache, timeout=5, retries=0, **kw
    )


def by_message(result, start: str) -> str:
    return next(e.error_id for e in result.errors if (e.message or "").startswith(start))


def test_valid_answer_used_made_up_flag_rejected_and_cached(result, facts, endpoint, tmp_path):
    endpoint.answers = {"Host-pool": GOOD, "aux state": MADE_UP}
    rules = analyze(result, facts)
    first = analyze(result, facts, llm=settings(endpoint, tmp_path / "cache"))
    host, aux = by_message(result, "Host-pool"), by_message(result, "aux state")
    assert first[host].what_it_means == GOOD["what_it_means"]
    assert first[host].solutions == ("Set `--retraction-backup` to `cpu_tensor`.",)
    assert first[host].author == "AI-assisted analysis (model tiny-test)"
    assert first[host].related == rules[host].related
    # the made-up flag is rejected: the card keeps the rule text
    assert first[aux] == rules[aux]
    # errors the endpoint failed on keep the rule text too
    failed = by_message(result, "empty batch")
    assert first[failed] == rules[failed]
    asked = len(endpoint.requests)
    assert asked == len(result.errors)
    request = endpoint.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "tiny-test"
    assert request["body"]["response_format"]["type"] == "json_schema"
    # second run: answers (valid and rejected) come from the cache, failures are asked again
    second = analyze(result, facts, llm=settings(endpoint, tmp_path / "cache"))
    assert second == first
    assert len(endpoint.requests) == asked + len(result.errors) - 2


def test_endpoint_down_never_fails_the_run(result, facts, tmp_path):
    down = LLMSettings(
        base_url="http://127.0.0.1:9/v1", model="m", cache_dir=tmp_path, timeout=1, retries=1
    )
    assert analyze(result, facts, llm=down) == analyze(result, facts)


def test_bad_json_answer_falls_back(result, facts, endpoint, tmp_path):
    endpoint.answers = {"Host-pool": "not json at all"}
    out = analyze(result, facts, llm=settings(endpoint, tmp_path))
    host = by_message(result, "Host-pool")
    assert out[host] == analyze(result, facts)[host]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (MADE_UP, "names the flag --enable-extra-buffer, which is not in the facts"),
        ({**GOOD, "trigger": "When `SGLANG_MADE_UP` is set."}, "names SGLANG_MADE_UP"),
        ({**GOOD, "trigger": "When `ctx.is_imaginary` is true."}, "names `is_imaginary`"),
        ({**GOOD, "solutions": []}, "missing solutions"),
        ([], "not a JSON object"),
    ],
)
def test_validation_rejects(answer, reason):
    facts = {
        "message": "Host-pool",
        "settings": [{"flags": ["--retraction-backup"]}],
        "guards": ["ctx.is_hybrid_ssm"],
        "choices": ["host_pool", "cpu_tensor"],
    }
    problem = validate(answer, facts)
    assert problem is not None and problem.startswith(reason)


def test_validation_accepts_grounded_answer():
    facts = {
        "message": "Host-pool",
        "settings": [{"flags": ["--retraction-backup"], "choices": ["host_pool", "cpu_tensor"]}],
        "guards": ["ctx.is_hybrid_ssm"],
    }
    assert validate(GOOD, facts) is None


def test_cli_llm_needs_url_and_model(capsys):
    from miner.cli import main

    assert main(["mine", "--commit", "v1", "--analyst", "llm", "--llm-model", "m"]) == 2
    assert "--analyst llm needs --llm-base-url URL and --llm-model NAME" in capsys.readouterr().err


def test_cli_llm_end_to_end(endpoint, tmp_path, tmp_path_factory):
    import git
    from conftest import commit_all, write_files
    from test_analysis_cards import FILES

    from miner.cli import main

    root = tmp_path_factory.mktemp("clirepo")
    write_files(root, FILES)
    commit_all(git.Repo.init(root, initial_branch="main"), "fixture", "v1")
    endpoint.answers = {"Host-pool": GOOD}
    argv = ["mine", "--repo", str(root), "--commit", "v1", "--out", str(tmp_path / "out")]
    argv += ["--analyst", "llm", "--llm-base-url", endpoint.url, "--llm-model", "tiny-test"]
    argv += ["--llm-cache", str(tmp_path / "cache")]
    assert main(argv) == 0
    cards = [p.read_text() for p in (tmp_path / "out" / "errors").glob("*.md")]
    host = next(c for c in cards if "# Host-pool" in c)
    assert "AI-assisted analysis (model tiny-test)." in host
    assert GOOD["what_it_means"] in host
    others = [c for c in cards if "# Host-pool" not in c]
    assert all("Analysis generated from the source at " in c for c in others)

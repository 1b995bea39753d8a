"""
The plugin under pytest itself: an inner test session (pytester) whose tests call an OpenAI-compatible upstream with
the Python openai SDK through the ``tapedeck`` fixture. First run: each test recorded on its own tape; second run,
the upstream gone: every test replayed from its tape. ``TAPEDECK_COMMAND`` says how to run tapedeck (default: the
repository's built CLI).
"""

import json
import os
import shlex
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pytest_tapedeck.plugin import tape_name_for, tape_url

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[3]
COMMAND = os.environ.get("TAPEDECK_COMMAND") or shlex.join(["node", str(REPO / "dist" / "cli" / "main.js")])

INNER = '''
import openai

def ask(question):
    client = openai.OpenAI(api_key="sk-pytest-SECRET-0123", max_retries=0)
    answer = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": question}])
    return answer.choices[0].message.content

def test_celsius(tapedeck):
    assert tapedeck.tape == "test_agent/test_celsius"
    assert ask("celsius") == "echo: celsius"

class TestWeather:
    def test_fahrenheit(self, tapedeck):
        assert tapedeck.tape == "test_agent/TestWeather/test_fahrenheit"
        assert ask("fahrenheit") == "echo: fahrenheit"
'''


class Echo(BaseHTTPRequestHandler):
    seen = []

    def do_POST(self):  # noqa: N802 (the http.server API)
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        Echo.seen.append(body)
        text = body["messages"][-1]["content"]
        out = json.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1700000000,
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": f"echo: {text}"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


@pytest.fixture
def upstream():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_tape_names():
    assert tape_name_for("tests/test_x.py::TestA::test_b[1-°C]") == "tests/test_x/TestA/test_b-1-C"
    assert tape_name_for("test_x.py::test_y") == "test_x/test_y"
    assert tape_url("http://127.0.0.1:8787/", "a/b") == "http://127.0.0.1:8787/@a%2Fb"


def test_records_then_replays_each_test_on_its_own_tape(pytester, upstream, tmp_path, monkeypatch):
    monkeypatch.delenv("TAPEDECK_URL", raising=False)
    monkeypatch.setenv("TAPEDECK_COMMAND", COMMAND)
    monkeypatch.setenv("TAPEDECK_DIR", str(tmp_path / "tapes"))
    pytester.makepyfile(test_agent=INNER)

    monkeypatch.setenv("TAPEDECK_SERVE_ARGS", f"--route /openai={upstream}")
    first = pytester.runpytest_subprocess("-p", "pytest_tapedeck.plugin", "-p", "no:cacheprovider")
    first.assert_outcomes(passed=2)
    assert "2 tape(s): 2 recorded, 0 replayed" in first.stdout.str()
    assert (tmp_path / "tapes" / "test_agent" / "test_celsius.jsonl").exists()
    assert (tmp_path / "tapes" / "test_agent" / "TestWeather" / "test_fahrenheit.jsonl").exists()
    assert len(Echo.seen) == 2
    assert "sk-pytest-SECRET" not in (tmp_path / "tapes" / "test_agent" / "test_celsius.jsonl").read_text()

    # The upstream gone (its route points nowhere): every answer comes from the tapes.
    monkeypatch.setenv("TAPEDECK_SERVE_ARGS", "--route /openai=http://127.0.0.1:9")
    second = pytester.runpytest_subprocess("-p", "pytest_tapedeck.plugin", "-p", "no:cacheprovider", "--tapedeck-mode", "replay")
    second.assert_outcomes(passed=2)
    assert "2 tape(s): 0 recorded, 2 replayed" in second.stdout.str()
    assert len(Echo.seen) == 2


def test_a_wrapper_that_keeps_signals_to_itself_still_stops(pytester, upstream, tmp_path, monkeypatch):
    # `npx tapedeck` does not pass SIGTERM on: tapedeck must still stop, print its report, and leave nothing running.
    monkeypatch.delenv("TAPEDECK_URL", raising=False)
    monkeypatch.setenv("TAPEDECK_COMMAND", shlex.join(["sh", "-c", COMMAND + ' "$@"', "tapedeck-wrapper"]))
    monkeypatch.setenv("TAPEDECK_DIR", str(tmp_path / "tapes"))
    monkeypatch.setenv("TAPEDECK_SERVE_ARGS", f"--route /openai={upstream}")
    pytester.makepyfile(test_agent=INNER)
    run = pytester.runpytest_subprocess("-p", "pytest_tapedeck.plugin", "-p", "no:cacheprovider", timeout=120)
    run.assert_outcomes(passed=2)
    assert "2 tape(s): 2 recorded, 0 replayed" in run.stdout.str()
    assert not (tmp_path / "tapes" / "test_agent" / "test_celsius.jsonl.lock").exists()


def test_a_running_serve_is_used_as_it_is(pytester, monkeypatch):
    monkeypatch.setenv("TAPEDECK_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("TAPEDECK_COMMAND", "false")
    pytester.makepyfile(
        test_url='''
def test_env(tapedeck):
    import os
    assert tapedeck.url == "http://127.0.0.1:9/@test_url%2Ftest_env"
    assert os.environ["OPENAI_BASE_URL"] == tapedeck.url + "/openai/v1"
'''
    )
    pytester.runpytest_subprocess("-p", "pytest_tapedeck.plugin").assert_outcomes(passed=1)

"""
The plugin under pytest itself: an inner test session (pytester) whose tests call an OpenAI-compatible upstream with
the Python openai SDK through the ``tapedeck`` fixture. First run: each test recorded on its own tape; second run,
the upstream gone: every test replayed from its tape. ``TAPEDECK_COMMAND`` says how to run tapedeck (default: the
repository's built CLI).
"""

import json
import os
import re
import shlex
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pytest_tapedeck.plugin import tape_url

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


def test_tape_url():
    assert tape_url("http://127.0.0.1:8787/", "a/b") == "http://127.0.0.1:8787/@a%2Fb"
    assert tape_url("http://127.0.0.1:8787", "天気/東京") == "http://127.0.0.1:8787/@%E5%A4%A9%E6%B0%97%2F%E6%9D%B1%E4%BA%AC"


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


def test_a_running_serve_is_used_as_it_is(pytester, tmp_path, monkeypatch):
    # A serve started by hand; the session starts none (its command would fail).
    serve = subprocess.Popen(
        shlex.split(COMMAND) + ["serve", "--port", "0", "--dir", str(tmp_path / "tapes")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert serve.stdout is not None
        url = next(m.group(1) for line in serve.stdout if (m := re.search(r"listening on (http://\S+)", line)))
        monkeypatch.setenv("TAPEDECK_URL", url)
        monkeypatch.setenv("TAPEDECK_COMMAND", "false")
        pytester.makepyfile(
            test_url=f'''
def test_env(tapedeck):
    import os
    assert tapedeck.url == "{url}/@test_url%2Ftest_env"
    assert os.environ["OPENAI_BASE_URL"] == tapedeck.url + "/openai/v1"
'''
        )
        pytester.runpytest_subprocess("-p", "pytest_tapedeck.plugin").assert_outcomes(passed=1)
    finally:
        serve.terminate()
        serve.wait(timeout=60)


def test_a_test_gets_no_tape_when_serve_cannot_be_asked(pytester, monkeypatch):
    monkeypatch.setenv("TAPEDECK_URL", "http://127.0.0.1:9")
    pytester.makepyfile(test_down="def test_env(tapedeck):\n    pass\n")
    run = pytester.runpytest_subprocess("-p", "pytest_tapedeck.plugin")
    run.assert_outcomes(errors=1)
    run.stdout.fnmatch_lines(["*tapedeck: cannot ask tapedeck serve at http://127.0.0.1:9 for this test's tape*"])


# Tests a slug alone would confuse: parameters that differ only in punctuation, names in another script.
NAMES = """
import openai
import pytest
from pytest_tapedeck.plugin import names_of

def ask(question):
    client = openai.OpenAI(api_key="sk-pytest-SECRET-0123", max_retries=0)
    answer = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": question}])
    return answer.choices[0].message.content

@pytest.mark.parametrize("expr", ["1+1", "1-1"])
def test_calc(tapedeck, request, expr):
    assert names_of(request.node) == ("test_names.py", [f"test_calc[{expr}]"])
    assert tapedeck.tape.startswith("test_names/test_calc-1-1-")
    assert ask(f"calc {expr}") == f"echo: calc {expr}"

def test_東京の天気(tapedeck):
    assert tapedeck.tape == "test_names/test_東京の天気"
    assert ask("tokyo") == "echo: tokyo"

def test_大阪の天気(tapedeck):
    assert ask("osaka") == "echo: osaka"
"""


def test_tests_whose_names_a_slug_confuses_get_tapes_of_their_own(pytester, upstream, tmp_path, monkeypatch):
    monkeypatch.delenv("TAPEDECK_URL", raising=False)
    monkeypatch.setenv("TAPEDECK_COMMAND", COMMAND)
    monkeypatch.setenv("TAPEDECK_DIR", str(tmp_path / "tapes"))
    pytester.makepyfile(test_names=NAMES)
    seen = len(Echo.seen)

    monkeypatch.setenv("TAPEDECK_SERVE_ARGS", f"--route /openai={upstream}")
    first = pytester.runpytest_subprocess("-p", "pytest_tapedeck.plugin", "-p", "no:cacheprovider")
    first.assert_outcomes(passed=4)
    assert "4 tape(s): 4 recorded, 0 replayed" in first.stdout.str()
    tapes = sorted(p.relative_to(tmp_path / "tapes").as_posix() for p in (tmp_path / "tapes").rglob("*.jsonl"))
    assert len(tapes) == 4
    assert "test_names/test_東京の天気.jsonl" in tapes
    assert "test_names/test_大阪の天気.jsonl" in tapes
    assert len([t for t in tapes if re.fullmatch(r"test_names/test_calc-1-1-[0-9a-f]{8}\.jsonl", t)]) == 2
    assert len(Echo.seen) == seen + 4

    # Replayed with the upstream gone: each test's own answers, no miss.
    monkeypatch.setenv("TAPEDECK_SERVE_ARGS", "--route /openai=http://127.0.0.1:9")
    second = pytester.runpytest_subprocess("-p", "pytest_tapedeck.plugin", "-p", "no:cacheprovider", "--tapedeck-mode", "replay")
    second.assert_outcomes(passed=4)
    assert "4 tape(s): 0 recorded, 4 replayed" in second.stdout.str()
    assert "missed 1" not in second.stdout.str()
    assert len(Echo.seen) == seen + 4

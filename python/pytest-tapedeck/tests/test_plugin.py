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
from datetime import datetime, timedelta, timezone
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


# A suite whose tests change between sessions as a real one does (FIXTURE_* variables): a call dropped, a test skipped.
SUITE = """
import os
import openai
import pytest

def ask(question):
    client = openai.OpenAI(api_key="sk-pytest-SECRET-0123", max_retries=0)
    answer = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": question}])
    return answer.choices[0].message.content

def first(question):
    # FIXTURE_FAULTS=1: a rule rate-limits each test's first call (a plan per test), then the answer comes.
    if os.environ.get("FIXTURE_FAULTS") == "1":
        with pytest.raises(openai.RateLimitError):
            ask(question)
    return ask(question)

class TestWeather:
    def test_celsius(self, tapedeck):
        assert first("celsius 1") == "echo: celsius 1"
        if os.environ.get("FIXTURE_DROP") != "1":
            assert ask("celsius 2") == "echo: celsius 2"

    def test_fahrenheit(self, tapedeck):
        assert first("fahrenheit") == "echo: fahrenheit"

@pytest.mark.skipif(os.environ.get("FIXTURE_SKIP") == "1", reason="sometimes")
def test_sometimes(tapedeck):
    assert first("skipped") == "echo: skipped"
"""

CELSIUS = "test_suite/TestWeather/test_celsius"
FAHRENHEIT = "test_suite/TestWeather/test_fahrenheit"
GONE = "test_suite/test_since_deleted"


def test_a_suite_faults_expect_orphans_rerecord_and_max_age(pytester, upstream, tmp_path, monkeypatch):
    tapes = tmp_path / "tapes"
    monkeypatch.delenv("TAPEDECK_URL", raising=False)
    monkeypatch.setenv("TAPEDECK_COMMAND", COMMAND)
    monkeypatch.setenv("TAPEDECK_DIR", str(tapes))
    monkeypatch.setenv("TAPEDECK_SERVE_ARGS", f"--route /openai={upstream}")
    for name in ("FIXTURE_FAULTS", "FIXTURE_DROP", "FIXTURE_SKIP", "TAPEDECK_EXPECT", "TAPEDECK_RERECORD", "TAPEDECK_MAX_AGE"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_suite=SUITE)
    run = lambda *args: pytester.runpytest_subprocess("-p", "pytest_tapedeck.plugin", "-p", "no:cacheprovider", *args)  # noqa: E731
    seen = len(Echo.seen)

    run().assert_outcomes(passed=3)
    assert len(Echo.seen) == seen + 4
    # A tape whose test is gone: an orphan.
    header = json.loads((tapes / f"{CELSIUS}.jsonl").read_text().splitlines()[0])
    (tapes / f"{GONE}.jsonl").write_text(json.dumps({**header, "name": GONE}) + "\n")

    # Replayed with each test's first call rate-limited, celsius's second call dropped, one test skipped.
    faults = tmp_path / "faults.yaml"
    faults.write_text("faults:\n  - when: { api: openai, call: 1 }\n    then: { status: 429, retryAfter: 0 }\n")
    monkeypatch.setenv("TAPEDECK_FAULTS", str(faults))
    monkeypatch.setenv("FIXTURE_FAULTS", "1")
    monkeypatch.setenv("FIXTURE_DROP", "1")
    monkeypatch.setenv("FIXTURE_SKIP", "1")
    contract = run("--tapedeck-mode", "replay", "--tapedeck-expect", "llm")
    contract.assert_outcomes(passed=2, skipped=1, errors=1)
    out = contract.stdout.str()
    assert "ERROR at teardown of TestWeather.test_celsius" in out
    assert f"tapedeck --expect: this test's tape \"{CELSIUS}\":\nunused recordings  1 of 2 expected recorded call(s) never made\n  step 1  LLM gpt-4o-mini" in out
    # A complete session: the orphan listed, the skipped test's tape not.
    assert "tapedeck: 1 orphan tape(s): no test of this session has them" in out
    assert f"tapedeck:   {GONE}\n" in out
    assert "test_sometimes" not in out.split("orphan tape(s)")[1]
    assert len(Echo.seen) == seen + 4
    monkeypatch.delenv("TAPEDECK_FAULTS")
    monkeypatch.delenv("FIXTURE_FAULTS")

    # A partial session (-k) deletes nothing, and says why.
    partial = run("--tapedeck-mode", "replay", "--tapedeck-prune-orphans", "-k", "fahrenheit")
    partial.assert_outcomes(passed=1, deselected=2)
    assert "tapedeck: orphan tapes not deleted: a partial session (2 test(s) deselected)" in partial.stdout.str()
    assert (tapes / f"{GONE}.jsonl").exists()

    # TAPEDECK_RERECORD: celsius records afresh (live) while the others replay; the ini setting prunes the orphans.
    pytester.makeini("[pytest]\ntapedeck_prune_orphans = true\n")
    monkeypatch.setenv("TAPEDECK_RERECORD", "*::test_celsius")
    rerecord = run("--tapedeck-mode", "replay")
    rerecord.assert_outcomes(passed=2, skipped=1)
    out = rerecord.stdout.str()
    assert re.search(rf"{CELSIUS}\s+recorded 1 exchange\(s\) \(afresh: --rerecord\)", out), out
    assert re.search(rf"{FAHRENHEIT}\s+replayed 1, missed 0", out), out
    assert f"tapedeck: deleted 1 orphan tape(s): no test of this session has them\ntapedeck:   {GONE}\n" in out
    assert len(Echo.seen) == seen + 5
    assert sorted(p.relative_to(tapes).as_posix() for p in tapes.rglob("*.jsonl")) == sorted(
        [f"{CELSIUS}.jsonl", f"{FAHRENHEIT}.jsonl", "test_suite/test_sometimes.jsonl"]
    )
    monkeypatch.delenv("TAPEDECK_RERECORD")

    # TAPEDECK_MAX_AGE: an older tape errors its test in replay mode with one line; auto mode records it afresh.
    path = tapes / f"{FAHRENHEIT}.jsonl"
    lines = path.read_text().split("\n")
    old = (datetime.now(timezone.utc) - timedelta(days=40)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    lines[0] = json.dumps({**json.loads(lines[0]), "createdAt": old})
    path.write_text("\n".join(lines))
    monkeypatch.setenv("TAPEDECK_MAX_AGE", "30d")
    stale = run("--tapedeck-mode", "replay")
    stale.assert_outcomes(passed=1, skipped=1, errors=1)
    line = (
        f"tapedeck: tape \"{FAHRENHEIT}\" is 40 days old (recorded {old[:10]}), older than --max-age 30d: "
        f"re-record it with TAPEDECK_RERECORD='{FAHRENHEIT}'"
    )
    # One line, once (the short summary has its own, cut to the terminal's width except on CI), no traceback, no
    # "during handling of the above exception".
    out = stale.stdout.str()
    assert out.split("short test summary info")[0].count(line) == 1, out
    assert "TapeTooOld" not in out and "plugin.py" not in out and "During handling" not in out
    refreshed = run("--tapedeck-mode", "auto")
    refreshed.assert_outcomes(passed=2, skipped=1)
    assert re.search(rf"{FAHRENHEIT}\s+recorded 1 exchange\(s\) \(afresh: older than --max-age\)", refreshed.stdout.str())
    assert len(Echo.seen) == seen + 6


# Tests that a session may not reach: a module skipped as it is collected (allow_module_level, importorskip), a file
# left out with --ignore. Their tapes are no orphans: a session that did not reach them deletes nothing.
ASK = """
import openai

def ask(question):
    client = openai.OpenAI(api_key="sk-pytest-SECRET-0123", max_retries=0)
    answer = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": question}])
    return answer.choices[0].message.content
"""
KEPT = ASK + """
def test_kept(tapedeck):
    assert ask("kept") == "echo: kept"
"""
OPTIONAL = ASK + """
import os
import pytest

if os.environ.get("FIXTURE_SKIP_MODULE") == "1":
    pytest.skip("not here", allow_module_level=True)

def test_optional(tapedeck):
    assert ask("optional") == "echo: optional"
"""
IMPORTS = ASK + """
import os
import pytest

pytest.importorskip(os.environ.get("FIXTURE_MODULE", "json"))

def test_imports(tapedeck):
    assert ask("imports") == "echo: imports"
"""
IGNORED = ASK + """
import os
import pytest

@pytest.mark.skipif(os.environ.get("FIXTURE_SKIP_TEST") == "1", reason="sometimes")
def test_ignored(request):
    # The fixture taken another way than by name: the test is claimed all the same when it does not run.
    assert request.getfixturevalue("tapedeck").tape == "test_ignored/test_ignored"
    assert ask("ignored") == "echo: ignored"
"""


def test_prune_deletes_no_tape_of_a_test_the_session_did_not_reach(pytester, upstream, tmp_path, monkeypatch):
    tapes = tmp_path / "tapes"
    monkeypatch.setenv("TAPEDECK_COMMAND", COMMAND)
    monkeypatch.setenv("TAPEDECK_DIR", str(tapes))
    monkeypatch.setenv("TAPEDECK_SERVE_ARGS", f"--route /openai={upstream}")
    for name in ("FIXTURE_SKIP_MODULE", "FIXTURE_MODULE", "FIXTURE_SKIP_TEST", "TAPEDECK_PRUNE_ORPHANS"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_kept=KEPT, test_optional=OPTIONAL, test_imports=IMPORTS, test_ignored=IGNORED)
    run = lambda *args: pytester.runpytest_subprocess("-p", "pytest_tapedeck.plugin", "-p", "no:cacheprovider", *args)  # noqa: E731

    def left() -> list:
        return sorted(p.relative_to(tapes).as_posix() for p in tapes.rglob("*.jsonl"))

    # One serve for the sessions that record and that are partial (a partial session asks serve nothing).
    serve = subprocess.Popen(
        shlex.split(COMMAND) + ["serve", "--port", "0", "--dir", str(tapes), "--route", f"/openai={upstream}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert serve.stdout is not None
        monkeypatch.setenv("TAPEDECK_URL", next(m.group(1) for line in serve.stdout if (m := re.search(r"listening on (http://\S+)", line))))
        run().assert_outcomes(passed=4)
        every = left()
        assert every == ["test_ignored/test_ignored.jsonl", "test_imports/test_imports.jsonl", "test_kept/test_kept.jsonl", "test_optional/test_optional.jsonl"]

        # A module skipped by pytest.skip(allow_module_level=True), another by importorskip: their tests never collected.
        monkeypatch.setenv("FIXTURE_SKIP_MODULE", "1")
        monkeypatch.setenv("FIXTURE_MODULE", "a_module_this_machine_does_not_have")
        skipped = run("--tapedeck-prune-orphans")
        skipped.assert_outcomes(passed=2, skipped=2)
        assert "orphan tapes not deleted: a partial session (2 modules skipped as collected (allow_module_level, importorskip): test_" in skipped.stdout.str()
        assert left() == every
        monkeypatch.delenv("FIXTURE_SKIP_MODULE")
        monkeypatch.delenv("FIXTURE_MODULE")

        ignored = run("--tapedeck-prune-orphans", "--ignore=test_ignored.py")
        ignored.assert_outcomes(passed=3)
        assert "a partial session (1 test file left out of collection (--ignore, --ignore-glob, collect_ignore): test_ignored.py)" in ignored.stdout.str()
        assert left() == every
    finally:
        serve.terminate()
        serve.wait(timeout=60)

    # A complete session with a serve of its own, the test that takes the fixture another way skipped: it is claimed,
    # its tape no orphan.
    monkeypatch.delenv("TAPEDECK_URL")
    monkeypatch.setenv("FIXTURE_SKIP_TEST", "1")
    complete = run("--tapedeck-mode", "replay", "--tapedeck-prune-orphans")
    complete.assert_outcomes(passed=3, skipped=1)
    assert "orphan" not in complete.stdout.str()
    assert left() == every

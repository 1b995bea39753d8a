"""
The ``tapedeck`` fixture: each test gets its own tape in one ``tapedeck serve`` for the session, named after the
test (``tests/test_agent.py::TestWeather::test_celsius`` is the tape ``tests/test_agent/TestWeather/test_celsius``),
and the base-URL variables the SDKs read point at it while the test runs; when the test is over its tape is
closed (``DELETE /@NAME``), its file and lock given back. The server names the tape (``GET /@?file=...&name=...``):
one rule for every test runner's helper, so a parametrized test (``test_calc[1+1]``) gets a tape of its own.

The server: ``TAPEDECK_URL`` of a running ``tapedeck serve``, or one started for the session: tapedeck as
``command.find_command`` finds it (``TAPEDECK_COMMAND``, ``node_modules/.bin``, the ``PATH``, else
``npx --yes tapedeck-proxy@VERSION``) with ``serve --port 0 --json``, the mode from ``--tapedeck-mode`` /
``TAPEDECK_MODE`` (default auto), the folder from ``--tapedeck-dir`` / ``TAPEDECK_DIR``, more flags from
``TAPEDECK_SERVE_ARGS``. It is stopped (every tape finished) when the session ends; its report is printed.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple
from urllib.parse import quote, urlencode

import pytest

from .command import INSTALL, TapedeckUnavailable, describe, find_command


def tape_url(serve_url: str, tape: str) -> str:
    """The base URL of a tape in a ``tapedeck serve`` at ``serve_url``."""
    return f"{serve_url.rstrip('/')}/@{quote(tape, safe='')}"


def names_of(node: pytest.Item) -> Tuple[str, List[str]]:
    """What names a test, as ``tapedeck serve`` takes it: its file, and its class(es) and name (parameters included)."""
    file = node.nodeid.split("::", 1)[0]
    # The nodes inside the file, outermost first (a parameter id may itself hold "::": the nodes say where names end).
    names = [n.name for n in node.listchain() if "::" in n.nodeid]
    return file, names


def tape_for(serve_url: str, file: str, names: Sequence[str]) -> str:
    """The tape ``tapedeck serve`` at ``serve_url`` gives the test (``GET /@?file=FILE&name=NAME...``)."""
    query = urlencode([("file", file)] + [("name", n) for n in names])
    try:
        with urllib.request.urlopen(f"{serve_url.rstrip('/')}/@?{query}", timeout=30) as res:
            return json.load(res)["tape"]
    except urllib.error.HTTPError as err:
        try:
            message = json.load(err)["error"]["message"]
        except (ValueError, KeyError, TypeError):
            message = f"tapedeck serve at {serve_url} answered {err.code}"
        raise RuntimeError(f"tapedeck: no tape for this test: {message}") from None
    except (OSError, ValueError, KeyError) as err:
        raise RuntimeError(f"tapedeck: cannot ask tapedeck serve at {serve_url} for this test's tape: {err}") from None


def agent_env(url: str) -> Dict[str, str]:
    """The variables tapedeck sets for an agent (as ``src/proxy/agent-env.ts``), for a tape's base URL."""
    return {
        "TAPEDECK_URL": url,
        "OPENAI_BASE_URL": f"{url}/openai/v1",
        "ANTHROPIC_BASE_URL": f"{url}/anthropic",
        "GOOGLE_GEMINI_BASE_URL": f"{url}/gemini",
        "GEMINI_BASE_URL": f"{url}/gemini",
    }


@dataclass
class Tapedeck:
    """The current test's tape: its name, its base URL (add a route: ``/openai/v1``), the variables set."""

    tape: str
    url: str
    env: Dict[str, str] = field(default_factory=dict)


class ServeProcess:
    """``tapedeck serve`` as a child process: started on a free port, stopped with SIGTERM, its report read."""

    def __init__(self, command: List[str], mode: Optional[str], directory: Optional[str], extra: List[str]):
        args = command + ["serve", "--port", "0", "--json"]
        if mode:
            args += ["--mode", mode]
        if directory:
            args += ["--dir", directory]
        args += extra
        self.args = args
        # A process group of its own, signalled whole on stop: `npx` does not pass SIGTERM on to tapedeck, which
        # would outlive the session (and keep its stdout, the report's pipe, open). No stdin: under `pytest -s` it
        # is the terminal, where a question (npx's, before it installs) would wait unseen among pytest's output.
        self._group = hasattr(os, "killpg")
        self._stopping = False
        try:
            self.proc = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=self._group,
            )
        except OSError as err:
            given = " (TAPEDECK_COMMAND)" if os.environ.get("TAPEDECK_COMMAND") else ""
            raise TapedeckUnavailable(
                f"pytest-tapedeck: cannot run {describe(command)}{given}: {err.strerror or err}; "
                f"install tapedeck (`{INSTALL}`) or set TAPEDECK_COMMAND to a command that runs it"
            ) from None
        self.stderr: List[str] = []
        self._err = threading.Thread(target=self._read_err, daemon=True)
        self._err.start()
        self.url = self._wait_listening()
        self.report: List[dict] = []
        self.report_read = False

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def _wait_listening(self) -> str:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            m = re.search(r"listening on (http://\S+)", line)
            if m:
                return m.group(1)
        self.proc.wait()
        self._err.join(timeout=5)
        raise TapedeckUnavailable(
            f"pytest-tapedeck: {describe(self.args)} exited ({self.proc.returncode}) before it listened: {''.join(self.stderr).strip()}"
        )

    def stop(self) -> int:
        """Stop it (SIGTERM), read its report; its exit code, 0 where only a wrapper (npx) died of that SIGTERM."""
        if self.proc.poll() is None:
            self._stopping = True
            if self._group:
                try:
                    os.killpg(self.proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            else:
                self.proc.send_signal(signal.SIGTERM)
        assert self.proc.stdout is not None
        # stderr has its own reader (the thread): only stdout is read here, to its end.
        out = self.proc.stdout.read()
        self.proc.wait(timeout=60)
        self._err.join(timeout=10)
        for line in reversed((out or "").strip().splitlines()):
            try:
                self.report = json.loads(line)["tapes"]
                self.report_read = True
                break
            except (ValueError, KeyError):
                continue
        code = self.proc.returncode
        # Under npx the child is npm, which dies of the SIGTERM sent to the group while tapedeck (its grandchild)
        # stops as asked; tapedeck's report on stdout says it finished.
        if self._stopping and code in (-signal.SIGTERM, 128 + signal.SIGTERM) and self.report_read:
            return 0
        return code


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tapedeck")
    group.addoption("--tapedeck-mode", default=None, help="auto (default), record, replay or refresh (or TAPEDECK_MODE)")
    group.addoption("--tapedeck-dir", default=None, help="the tape folder (or TAPEDECK_DIR; default ./tapes)")


@pytest.fixture(scope="session")
def tapedeck_server(pytestconfig: pytest.Config) -> Iterator[str]:
    """The URL of the session's ``tapedeck serve`` (``TAPEDECK_URL``, or one started for the session)."""
    given = os.environ.get("TAPEDECK_URL")
    if given:
        yield given
        return
    mode = pytestconfig.getoption("--tapedeck-mode") or os.environ.get("TAPEDECK_MODE")
    directory = pytestconfig.getoption("--tapedeck-dir") or os.environ.get("TAPEDECK_DIR")
    unavailable = ""
    try:
        command = find_command(os.environ, Path(pytestconfig.invocation_params.dir))
        server: Optional[ServeProcess] = ServeProcess(command, mode, directory, shlex.split(os.environ.get("TAPEDECK_SERVE_ARGS", "")))
    except TapedeckUnavailable as err:
        server, unavailable = None, str(err)
    if server is None:
        # One line in each test's error, no traceback: what is missing and what to install.
        pytest.fail(unavailable, pytrace=False)
    try:
        yield server.url
    finally:
        code = server.stop()
        # Shown in the terminal summary (output of a fixture's teardown is captured).
        lines = [line.rstrip("\n") for line in server.stderr if line.strip()]
        if code != 0:
            lines.append(f"tapedeck serve exited with {code}")
        pytestconfig.stash[_SUMMARY] = lines
        pytestconfig.stash[_REPORT] = server.report


_SUMMARY = pytest.StashKey[List[str]]()
_REPORT = pytest.StashKey[List[dict]]()


def tapedeck_report(config: pytest.Config) -> List[dict]:
    """What each tape did (serve's ``--json`` report), once the session's server has stopped."""
    return config.stash.get(_REPORT, [])


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    lines = config.stash.get(_SUMMARY, [])
    if lines:
        terminalreporter.section("tapedeck")
        for line in lines:
            terminalreporter.write_line(line)


def _close_tape(url: str) -> None:
    """``DELETE /@NAME``: the test is over, its tape is closed now (file and lock given back)."""
    try:
        urllib.request.urlopen(urllib.request.Request(url, method="DELETE"), timeout=30).close()
    except OSError:
        pass


@pytest.fixture
def tapedeck(request: pytest.FixtureRequest, tapedeck_server: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Tapedeck]:
    """This test's tape, and the SDK base-URL variables pointing at it for the test's duration."""
    tape = tape_for(tapedeck_server, *names_of(request.node))
    url = tape_url(tapedeck_server, tape)
    env = agent_env(url)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    yield Tapedeck(tape=tape, url=url, env=env)
    _close_tape(url)

"""
The ``tapedeck`` fixture: each test gets its own tape in one ``tapedeck serve`` for the session, named after the
test (``tests/test_agent.py::TestWeather::test_celsius`` is the tape ``tests/test_agent/TestWeather/test_celsius``),
and the base-URL variables the SDKs read point at it while the test runs; when the test is over its tape is
closed (``DELETE /@NAME``), its file and lock given back. The server names the tape (``GET /@?file=...&name=...``):
one rule for every test runner's helper, so a parametrized test (``test_calc[1+1]``) gets a tape of its own.

The server: ``TAPEDECK_URL`` of a running ``tapedeck serve``, or one started for the session: tapedeck as
``command.locate`` finds it (the executable this package carries, ``TAPEDECK_COMMAND``, the project's
``node_modules/.bin``, the ``PATH``, else ``npx --yes tapedeck-proxy@VERSION``; ``-v`` shows which in the header) with
``serve --port 0 --json``, the mode from ``--tapedeck-mode`` /
``TAPEDECK_MODE`` (default auto), the folder from ``--tapedeck-dir`` / ``TAPEDECK_DIR``, more flags from
``TAPEDECK_SERVE_ARGS``. It is stopped (every tape finished) when the session ends; its report is printed.

The suite's options (each an option, else the variable, else the ini setting): ``--tapedeck-expect`` (the recorded
calls each replayed test must make: its test errors at teardown with serve's report, in ``diff``'s words),
``--tapedeck-faults`` / ``--tapedeck-seed`` (faults, a plan per test), ``--tapedeck-rerecord`` (a glob: those tests
record afresh while the others replay), ``--tapedeck-max-age`` (an older tape is recorded afresh in auto mode, fails
its test in replay mode) and ``--tapedeck-prune-orphans``. After a complete session (``_Coverage``) the orphan tapes,
recordings no test of the session has, are listed in the summary, and deleted when asked.
"""

from __future__ import annotations

import fnmatch
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

from .command import INSTALL, TapedeckUnavailable, describe, locate


def tape_url(serve_url: str, tape: str) -> str:
    """The base URL of a tape in a ``tapedeck serve`` at ``serve_url``."""
    return f"{serve_url.rstrip('/')}/@{quote(tape, safe='')}"


def names_of(node: pytest.Item) -> Tuple[str, List[str]]:
    """What names a test, as ``tapedeck serve`` takes it: its file, and its class(es) and name (parameters included)."""
    file = node.nodeid.split("::", 1)[0]
    # The nodes inside the file, outermost first (a parameter id may itself hold "::": the nodes say where names end).
    names = [n.name for n in node.listchain() if "::" in n.nodeid]
    return file, names


class TapeTooOld(RuntimeError):
    """The test's tape is older than ``--max-age`` in replay mode; the message says how old and how to refresh it."""


def tape_for(serve_url: str, file: str, names: Sequence[str]) -> str:
    """The tape ``tapedeck serve`` at ``serve_url`` gives the test (``GET /@?file=FILE&name=NAME...``)."""
    query = urlencode([("file", file)] + [("name", n) for n in names])
    try:
        with urllib.request.urlopen(f"{serve_url.rstrip('/')}/@?{query}", timeout=30) as res:
            return json.load(res)["tape"]
    except urllib.error.HTTPError as err:
        try:
            error = json.load(err)["error"]
            message, kind = error["message"], error.get("type")
        except (ValueError, KeyError, TypeError):
            message, kind = f"tapedeck serve at {serve_url} answered {err.code}", None
        if kind == "tapedeck_tape_too_old":
            raise TapeTooOld(f"tapedeck: {message}") from None
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

    def __init__(self, command: List[str], flags: List[str], extra: List[str]):
        args = command + ["serve", "--port", "0", "--json"] + flags + extra
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


# The session's serve settings: (option, environment variable, ini setting, serve flag, help).
_SETTINGS = [
    ("--tapedeck-mode", "TAPEDECK_MODE", "tapedeck_mode", "--mode", "auto (default), record, replay or refresh"),
    ("--tapedeck-dir", "TAPEDECK_DIR", "tapedeck_dir", "--dir", "the tape folder (default ./tapes)"),
    (
        "--tapedeck-expect",
        "TAPEDECK_EXPECT",
        "tapedeck_expect",
        "--expect",
        "the recorded calls each replayed test must make: all, llm, tools, or tool and model names (comma-separated)",
    ),
    ("--tapedeck-faults", "TAPEDECK_FAULTS", "tapedeck_faults", "--faults", "a YAML file of fault rules, a plan per test"),
    ("--tapedeck-seed", "TAPEDECK_SEED", "tapedeck_seed", "--seed", "the seed of fault rules with a probability"),
    (
        "--tapedeck-rerecord",
        "TAPEDECK_RERECORD",
        "tapedeck_rerecord",
        "--rerecord",
        "a glob over test node ids or tape names: those tests record afresh while the others replay",
    ),
    (
        "--tapedeck-max-age",
        "TAPEDECK_MAX_AGE",
        "tapedeck_max_age",
        "--max-age",
        "e.g. 30d: an older tape is recorded afresh (auto) or fails its test (replay)",
    ),
]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tapedeck")
    for option, env, ini, _flag, text in _SETTINGS:
        group.addoption(option, default=None, help=f"{text} (or {env}, or ini {ini})")
        parser.addini(ini, f"tapedeck: {text}", default=None)
    group.addoption(
        "--tapedeck-prune-orphans",
        action="store_true",
        default=None,
        help="after a complete session, delete the tapes no test has (or TAPEDECK_PRUNE_ORPHANS=1, or ini tapedeck_prune_orphans)",
    )
    parser.addini("tapedeck_prune_orphans", "tapedeck: after a complete session, delete the tapes no test has", type="bool", default=False)


def pytest_report_header(config: pytest.Config) -> List[str]:
    """Which tapedeck the session runs, with ``-v``; always, a line where it falls back or refuses one it found."""
    verbose = config.getoption("verbose") > 0
    if os.environ.get("TAPEDECK_URL"):
        return [f"tapedeck: the running serve at TAPEDECK_URL={os.environ['TAPEDECK_URL']}"] if verbose else []
    try:
        found = locate(os.environ, Path(config.invocation_params.dir))
    except TapedeckUnavailable:
        return []  # each test's error says it, in one line
    return found.notes + ([f"tapedeck: {describe(found.command)} ({found.source})"] if verbose else [])


def _setting(config: pytest.Config, option: str, env: str, ini: str) -> Optional[str]:
    """An option, else the environment variable, else the ini setting (empty is unset)."""
    value = config.getoption(option) or os.environ.get(env) or config.getini(ini)
    return (str(value).strip() or None) if value else None


def _serve_flags(config: pytest.Config) -> List[str]:
    flags: List[str] = []
    for option, env, ini, flag, _text in _SETTINGS:
        value = _setting(config, option, env, ini)
        if value:
            flags += [flag, value]
    return flags


def _prune_orphans(config: pytest.Config) -> bool:
    if config.getoption("--tapedeck-prune-orphans"):
        return True
    env = os.environ.get("TAPEDECK_PRUNE_ORPHANS", "").strip().lower()
    if env:
        return env in ("1", "true", "yes")
    return bool(config.getini("tapedeck_prune_orphans"))


class _Coverage:
    """
    Whether the session reached every test it has: tapes of tests it left out would look like orphans, so only a
    complete session may delete them (when in doubt, list, never delete). Partial: paths or node ids named on the
    command line, a deselection (``-k``, ``-m``, ``--deselect``), ``--lf`` or ``--sw``, a collection error, a module
    skipped as it was collected (``pytest.skip(..., allow_module_level=True)``, which ``importorskip`` does), test files
    left out of collection (``--ignore``, ``--ignore-glob``, a conftest's ``collect_ignore``), a stop before the last
    test (``-x``, ``--maxfail``, Ctrl-C), ``--collect-only``, an xdist worker. Registered as a plugin of its own (its
    hooks count), one per session.
    """

    def __init__(self) -> None:
        self.deselected = 0
        self.collect_errors = 0
        self.skipped_modules: List[str] = []
        self.left_out: List[str] = []
        self.started = 0

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self.deselected += len(items)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collect_errors += 1
        elif report.skipped:
            # A module (or a conftest's folder) skipped as a whole while it was collected: its tests never were.
            self.skipped_modules.append(report.nodeid or "a module")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config):
        outcome = yield
        if outcome.get_result() and _holds_tests(collection_path, config):
            self.left_out.append(_relative(collection_path, config))

    def pytest_runtest_logstart(self) -> None:
        self.started += 1

    def partial(self, session: pytest.Session) -> Optional[str]:
        config = session.config
        if hasattr(config, "workerinput"):
            return "an xdist worker sees part of the session"
        if getattr(config, "args_source", None) == pytest.Config.ArgsSource.ARGS:
            return "paths or tests named on the command line"
        if self.deselected:
            return f"{self.deselected} test(s) deselected"
        if config.getoption("lf", default=False):
            return "--lf"
        if config.getoption("stepwise", default=False):
            return "--sw"
        if self.collect_errors:
            return f"{self.collect_errors} collection error(s)"
        if self.skipped_modules:
            return f"{_counted(self.skipped_modules, 'module')} skipped as collected (allow_module_level, importorskip): {self.skipped_modules[0]}"
        if self.left_out:
            return f"{_counted(self.left_out, 'test file')} left out of collection (--ignore, --ignore-glob, collect_ignore): {self.left_out[0]}"
        if self.started < len(session.items):
            return f"{self.started} of {len(session.items)} tests ran"
        return None


def _counted(items: Sequence[str], what: str) -> str:
    return f"{len(items)} {what}{'' if len(items) == 1 else 's'}"


def _is_test_file(path: Path, config: pytest.Config) -> bool:
    return path.suffix == ".py" and any(fnmatch.fnmatch(path.name, pattern) for pattern in config.getini("python_files"))


def _holds_tests(path: Path, config: pytest.Config) -> bool:
    """
    Whether a path pytest did not collect held tests it was asked to leave out: a test file, or a folder with test files
    in it (``__pycache__``, a virtualenv and ``norecursedirs``, which pytest leaves out on its own, are not counted).
    """
    if path.is_file():
        return _is_test_file(path, config)
    if not path.is_dir() or path.name == "__pycache__" or (path / "pyvenv.cfg").exists():
        return False
    if any(fnmatch.fnmatch(path.name, pattern) for pattern in config.getini("norecursedirs")):
        return False
    return any(_is_test_file(f, config) for f in path.rglob("*.py"))


def _relative(path: Path, config: pytest.Config) -> str:
    try:
        return path.relative_to(config.rootpath).as_posix()
    except ValueError:
        return str(path)


_COVERAGE = pytest.StashKey[_Coverage]()


def pytest_configure(config: pytest.Config) -> None:
    coverage = _Coverage()
    config.stash[_COVERAGE] = coverage
    config.pluginmanager.register(coverage, "tapedeck-coverage")


def _orphan_lines(session: pytest.Session, serve_url: str, prune: bool) -> List[str]:
    """After a complete session: claim its tests (skipped ones too), then list or delete the orphan tapes."""
    partial = session.config.stash[_COVERAGE].partial(session)
    if partial is not None:
        return [f"orphan tapes not deleted: a partial session ({partial}); pruning needs a complete one"] if prune else []
    # Every test of the session is claimed, not only those that name the fixture: one that takes it another way
    # (``request.getfixturevalue``) has a tape too.
    tests = [names_of(item) for item in session.items]
    base = serve_url.rstrip("/")
    body = json.dumps({"tests": [{"file": f, "names": n} for f, n in tests]}).encode()
    try:
        claim = urllib.request.Request(f"{base}/@/tests", data=body, method="POST", headers={"content-type": "application/json"})
        urllib.request.urlopen(claim, timeout=60).close()
        with urllib.request.urlopen(urllib.request.Request(f"{base}/@/orphans", method="DELETE" if prune else "GET"), timeout=60) as res:
            answer = json.load(res)
    except (OSError, ValueError) as err:
        return [f"orphan tapes not checked: {err}"]
    if prune:
        removed, skipped = answer.get("removed", []), answer.get("skipped", [])
        if not removed and not skipped:
            return []
        return (
            [f"deleted {len(removed)} orphan tape(s): no test of this session has them"]
            + [f"  {n}" for n in removed]
            + [f"  {s['name']} not deleted: {s['reason']}" for s in skipped]
        )
    orphans = answer.get("orphans", [])
    if not orphans:
        return []
    return [
        f"{len(orphans)} orphan tape(s): no test of this session has them (--tapedeck-prune-orphans or TAPEDECK_PRUNE_ORPHANS=1 deletes them)"
    ] + [f"  {n}" for n in orphans]


@pytest.fixture(scope="session")
def tapedeck_server(pytestconfig: pytest.Config, request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of the session's ``tapedeck serve`` (``TAPEDECK_URL``, or one started for the session)."""
    prune = _prune_orphans(pytestconfig)
    given = os.environ.get("TAPEDECK_URL")
    if given:
        try:
            yield given
        finally:
            pytestconfig.stash[_SUMMARY] = _orphan_lines(request.session, given, prune)
        return
    unavailable = ""
    try:
        command = locate(os.environ, Path(pytestconfig.invocation_params.dir)).command
        server: Optional[ServeProcess] = ServeProcess(
            command, _serve_flags(pytestconfig), shlex.split(os.environ.get("TAPEDECK_SERVE_ARGS", ""))
        )
    except TapedeckUnavailable as err:
        server, unavailable = None, str(err)
    if server is None:
        # One line in each test's error, no traceback: what is missing and what to install.
        pytest.fail(unavailable, pytrace=False)
    try:
        yield server.url
    finally:
        # Torn down after the session's last test (its protocol started): the session is over, orphans can be told.
        orphans = _orphan_lines(request.session, server.url, prune)
        code = server.stop()
        # Shown in the terminal summary (output of a fixture's teardown is captured).
        lines = [line.rstrip("\n") for line in server.stderr if line.strip()]
        if code != 0:
            lines.append(f"tapedeck serve exited with {code}")
        pytestconfig.stash[_SUMMARY] = lines + [f"tapedeck: {line}" for line in orphans]
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


def _close_tape(url: str) -> Optional[dict]:
    """``DELETE /@NAME``: the test is over, its tape is closed now (file and lock given back); its report row."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="DELETE"), timeout=30) as res:
            return json.load(res).get("tape")
    except (OSError, ValueError, AttributeError):
        return None


@pytest.fixture
def tapedeck(request: pytest.FixtureRequest, tapedeck_server: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Tapedeck]:
    """
    This test's tape, and the SDK base-URL variables pointing at it for the test's duration. A tape too old to replay
    (``--tapedeck-max-age``) errors the test at setup with serve's one line; recorded calls the test never made
    (``--tapedeck-expect``) error it at teardown, with serve's report in ``diff``'s words.
    """
    too_old: Optional[str] = None
    try:
        tape = tape_for(tapedeck_server, *names_of(request.node))
    except TapeTooOld as err:
        too_old = str(err)
    # Failed outside the handler: raised inside it, pytest would print the line twice, the second "during handling of
    # the above exception".
    if too_old is not None:
        pytest.fail(too_old, pytrace=False)
    url = tape_url(tapedeck_server, tape)
    env = agent_env(url)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    yield Tapedeck(tape=tape, url=url, env=env)
    report = (_close_tape(url) or {}).get("expect") or {}
    if report.get("report"):
        pytest.fail("\n".join([f'tapedeck --expect: this test\'s tape "{tape}":'] + report["report"]), pytrace=False)

"""
How the plugin finds tapedeck (``pytest_tapedeck.command``), what it says when it cannot run it, how it stops a
tapedeck run through a wrapper that dies of the signal (as npx does), and the package as pip builds it.
"""

import json
import os
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from pytest_tapedeck.command import PACKAGE, TAPEDECK_VERSION, TapedeckUnavailable, find_command

pytest_plugins = ["pytester"]

PLUGIN = Path(__file__).resolve().parents[1]
REPO = PLUGIN.parents[1]
COMMAND = os.environ.get("TAPEDECK_COMMAND") or shlex.join(["node", str(REPO / "dist" / "cli" / "main.js")])


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def tree(tmp_path):
    """A project folder (``project/tests`` is where pytest starts), and folders for the PATH."""
    start = tmp_path / "project" / "tests"
    start.mkdir(parents=True)
    return tmp_path, start


def test_tapedeck_command_comes_first(tree):
    root, start = tree
    executable(root / "project" / "node_modules" / ".bin" / "tapedeck")
    env = {"TAPEDECK_COMMAND": "node '/opt/my tapedeck/main.js'", "PATH": ""}
    assert find_command(env, start) == ["node", "/opt/my tapedeck/main.js"]


def test_then_node_modules_bin_up_the_tree_then_the_path_then_npx(tree):
    root, start = tree
    on_path = executable(root / "bin" / "tapedeck")
    npx = executable(root / "node" / "npx")
    env = {"PATH": os.pathsep.join([str(on_path.parent), str(npx.parent)])}

    local = executable(root / "project" / "node_modules" / ".bin" / "tapedeck")
    assert find_command(env, start) == [str(local)]
    local.unlink()
    assert find_command(env, start) == [str(on_path)]
    on_path.unlink()
    assert find_command(env, start) == [str(npx), "--yes", f"tapedeck-proxy@{TAPEDECK_VERSION}"]
    npx.unlink()
    with pytest.raises(TapedeckUnavailable) as err:
        find_command(env, start)
    message = str(err.value)
    assert "\n" not in message
    assert "Node.js" in message and "npm install --save-dev tapedeck-proxy" in message


def test_the_npm_package_and_version_are_tapedecks():
    manifest = json.loads((REPO / "package.json").read_text())
    assert PACKAGE == manifest["name"] == "tapedeck-proxy"
    assert TAPEDECK_VERSION == manifest["version"]
    sys.path.insert(0, str(PLUGIN / "_build"))
    try:
        import backend
    finally:
        sys.path.remove(str(PLUGIN / "_build"))
    assert backend.VERSION == manifest["version"]


INNER = """
def test_one(tapedeck):
    pass

def test_two(tapedeck):
    pass
"""


def test_a_command_that_cannot_run_is_one_line_per_test(pytester, monkeypatch):
    monkeypatch.delenv("TAPEDECK_URL", raising=False)
    monkeypatch.setenv("TAPEDECK_COMMAND", "tapedeck-not-installed-anywhere")
    pytester.makepyfile(test_inner=INNER)
    run = pytester.runpytest_subprocess("-p", "pytest_tapedeck.plugin", "-p", "no:cacheprovider")
    run.assert_outcomes(errors=2)
    out = run.stdout.str()
    assert "pytest-tapedeck: cannot run tapedeck-not-installed-anywhere (TAPEDECK_COMMAND): No such file or directory" in out
    assert "Traceback" not in out and "FileNotFoundError" not in out and "During handling" not in out


def test_no_node_is_one_line_with_the_install_command(pytester, monkeypatch):
    monkeypatch.delenv("TAPEDECK_URL", raising=False)
    monkeypatch.delenv("TAPEDECK_COMMAND", raising=False)
    # Nothing on the PATH: no tapedeck, no npx (the inner pytest is started by its full path).
    monkeypatch.setenv("PATH", str(pytester.path / "empty-bin"))
    pytester.makepyfile(test_inner=INNER)
    run = pytester.runpytest_subprocess("-p", "pytest_tapedeck.plugin", "-p", "no:cacheprovider")
    run.assert_outcomes(errors=2)
    out = run.stdout.str()
    # Each test's error is the one line (the short summary repeats it, cut to the terminal's width).
    errors = [line for line in out.splitlines() if line.startswith("pytest-tapedeck: ")]
    assert len(errors) == 2 and errors[0] == errors[1]
    assert errors[0].startswith("pytest-tapedeck: tapedeck runs on Node.js, and there is none here")
    assert "npm install --save-dev tapedeck-proxy" in errors[0]
    assert "Traceback" not in out


def test_a_command_that_exits_before_listening_says_so_in_its_error(pytester, monkeypatch):
    monkeypatch.delenv("TAPEDECK_URL", raising=False)
    monkeypatch.setenv("TAPEDECK_COMMAND", "sh -c 'echo no such tapedeck >&2; exit 3' sh")
    pytester.makepyfile(test_inner=INNER)
    run = pytester.runpytest_subprocess("-p", "pytest_tapedeck.plugin", "-p", "no:cacheprovider")
    run.assert_outcomes(errors=2)
    out = run.stdout.str()
    assert "exited (3) before it listened: no such tapedeck" in out
    assert "RuntimeError" not in out and "Traceback" not in out


def test_a_wrapper_that_dies_of_the_stop_signal_is_no_failure(pytester, tmp_path, monkeypatch):
    # npx: tapedeck (its grandchild) stops on SIGTERM and prints its report; npm itself dies of the signal (-15).
    # A shell that runs the command and then something else is such a wrapper (it cannot exec it in its place).
    monkeypatch.delenv("TAPEDECK_URL", raising=False)
    monkeypatch.setenv("TAPEDECK_COMMAND", shlex.join(["sh", "-c", COMMAND + ' "$@"; exit $?', "tapedeck-wrapper"]))
    monkeypatch.setenv("TAPEDECK_DIR", str(tmp_path / "tapes"))
    pytester.makepyfile(test_inner=INNER)
    run = pytester.runpytest_subprocess("-p", "pytest_tapedeck.plugin", "-p", "no:cacheprovider", timeout=120)
    run.assert_outcomes(passed=2)
    out = run.stdout.str()
    assert "tapedeck: 0 tape(s): 0 recorded, 0 replayed" in out  # the report: tapedeck finished
    assert "exited with" not in out


def test_tapedeck_gets_no_stdin(pytester, tmp_path, monkeypatch):
    # npx asks before it installs; under `pytest -s` (no capture: stdin is the terminal) it would wait for an answer
    # to a question the user does not see. The command checks what its stdin is.
    if not Path("/proc/self/fd/0").exists():
        pytest.skip("no /proc/self/fd here")
    check = 'in=$(readlink /proc/self/fd/0); [ "$in" = /dev/null ] || { echo "stdin is $in" >&2; exit 9; }; exec '
    monkeypatch.delenv("TAPEDECK_URL", raising=False)
    monkeypatch.setenv("TAPEDECK_COMMAND", shlex.join(["sh", "-c", check + COMMAND + ' "$@"', "tapedeck"]))
    monkeypatch.setenv("TAPEDECK_DIR", str(tmp_path / "tapes"))
    pytester.makepyfile(test_inner=INNER)
    run = pytester.runpytest_subprocess("-s", "-p", "pytest_tapedeck.plugin", "-p", "no:cacheprovider", timeout=120)
    run.assert_outcomes(passed=2)


def test_pip_builds_the_package_with_nothing_to_download(tmp_path):
    # The build backend needs nothing: no index (--no-index), no setuptools or wheel in the build environment.
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-index", "--no-deps", "--wheel-dir", str(tmp_path), str(PLUGIN)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if run.returncode != 0 and "No module named pip" in run.stderr:
        pytest.skip("no pip for this Python")
    assert run.returncode == 0, run.stdout + run.stderr
    wheel = tmp_path / f"pytest_tapedeck-{TAPEDECK_VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        assert "pytest_tapedeck/plugin.py" in names and "pytest_tapedeck/command.py" in names
        info = f"pytest_tapedeck-{TAPEDECK_VERSION}.dist-info"
        assert "[pytest11]\ntapedeck = pytest_tapedeck.plugin" in whl.read(f"{info}/entry_points.txt").decode()
        metadata = whl.read(f"{info}/METADATA").decode()
        assert "Name: pytest-tapedeck\n" in metadata and "Requires-Dist: pytest>=7\n" in metadata
        record = whl.read(f"{info}/RECORD").decode()
        assert all(name in record for name in names)
    # pip built it from a copy: nothing is left in the source folder.
    assert not list(PLUGIN.glob("*.egg-info")) and not (PLUGIN / "build").exists()

"""
How the plugin finds tapedeck (``pytest_tapedeck.command``), what it says when it cannot run it, how it stops a
tapedeck run through a wrapper that dies of the signal (as npx does), and the package as pip builds it.
"""

import json
import os
import shlex
import stat
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from pytest_tapedeck import command as command_module
from pytest_tapedeck.command import PACKAGE, TAPEDECK_VERSION, TapedeckUnavailable, find_command, locate

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
    """A project folder (``project/tests`` is where pytest starts; ``project`` its root), and folders for the PATH."""
    start = tmp_path / "project" / "tests"
    start.mkdir(parents=True)
    (tmp_path / "project" / "pyproject.toml").write_text("[project]\nname = 'agent'\n")
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


def test_the_executable_this_package_carries_comes_first(tree, monkeypatch):
    root, start = tree
    exe = executable(root / "site-packages" / "pytest_tapedeck" / "bin" / "tapedeck")
    monkeypatch.setattr(command_module, "bundled_executable", lambda: exe)
    executable(root / "project" / "node_modules" / ".bin" / "tapedeck")
    found = locate({"TAPEDECK_COMMAND": "node main.js", "PATH": ""}, start)
    assert found.command == [str(exe)] and found.source == "the executable in this package" and found.notes == []


def test_without_one_the_fallback_is_said_in_one_line(tree):
    root, start = tree
    npx = executable(root / "node" / "npx")
    found = locate({"PATH": str(npx.parent)}, start)
    assert found.command == [str(npx), "--yes", f"tapedeck-proxy@{TAPEDECK_VERSION}"]
    [note] = found.notes
    assert note.startswith("pytest-tapedeck: this install has no tapedeck executable for ") and "(the pure wheel)" in note
    assert note.endswith(f"running `npx --yes tapedeck-proxy@{TAPEDECK_VERSION}` on Node.js")
    # TAPEDECK_COMMAND is the user's own choice: nothing to say.
    assert locate({"TAPEDECK_COMMAND": "node main.js", "PATH": ""}, start).notes == []


def test_a_tapedeck_planted_above_the_project_is_not_run(tree):
    # /tmp/shared/proj: anyone can write /tmp/shared; a node_modules/.bin/tapedeck there would run with the test's
    # environment (its API keys). Only the project's own, up to its root (pyproject.toml here), is taken.
    root, start = tree
    executable(root / "node_modules" / ".bin" / "tapedeck")
    npx = executable(root / "node" / "npx")
    assert find_command({"PATH": str(npx.parent)}, start) == [str(npx), "--yes", f"tapedeck-proxy@{TAPEDECK_VERSION}"]
    # The root is the nearest folder with a marker: a .git one level up makes that the root instead.
    (root / "project" / "pyproject.toml").unlink()
    (root / "project" / ".git").mkdir()
    assert find_command({"PATH": str(npx.parent)}, start)[0] == str(npx)
    (root / "project" / ".git").rmdir()
    if command_module.project_root(start) is None:
        # No marker anywhere: only the folder pytest started from.
        assert find_command({"PATH": str(npx.parent)}, start)[0] == str(npx)
    local = executable(start / "node_modules" / ".bin" / "tapedeck")
    assert find_command({"PATH": str(npx.parent)}, start) == [str(local)]


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="file owners and modes are POSIX")
def test_one_in_the_project_that_others_can_write_or_own_is_not_run_and_said(tree):
    root, start = tree
    local = executable(root / "project" / "node_modules" / ".bin" / "tapedeck")
    npx = executable(root / "node" / "npx")
    env = {"PATH": str(npx.parent)}
    local.chmod(0o757)
    found = locate(env, start)
    assert found.command[0] == str(npx)
    assert f"pytest-tapedeck: not running {local}: {local} is writable by others" in found.notes
    local.chmod(0o755)
    assert locate(env, start).command == [str(local)]
    # A link (as npm makes them) to a file others can write: the file is what runs.
    target = executable(root / "project" / "node_modules" / "tapedeck-proxy" / "main.js")
    local.unlink()
    local.symlink_to(target)
    target.chmod(0o777)
    assert locate(env, start).command[0] == str(npx)
    target.chmod(0o755)
    assert locate(env, start).command == [str(local)]
    if os.getuid() == 0:
        # Another user's: root can make one (os.chown); elsewhere this part cannot be set up.
        os.chown(target, 4242, 4242)
        found = locate(env, start)
        assert found.command[0] == str(npx)
        assert f"pytest-tapedeck: not running {local}: {target} belongs to another user (uid 4242)" in found.notes
        npx.unlink()
        with pytest.raises(TapedeckUnavailable) as err:
            locate(env, start)
        assert "belongs to another user (uid 4242)" in str(err.value) and "\n" not in str(err.value)


def test_this_packages_own_console_command_on_the_path_is_not_tapedeck(tree):
    # pip's wrapper for the `tapedeck` console command runs this package again: never "tapedeck on the PATH".
    root, start = tree
    own = root / "venv" / "bin" / "tapedeck"
    own.parent.mkdir(parents=True)
    own.write_text("#!/usr/bin/python3\nimport sys\nfrom pytest_tapedeck.console import main\nsys.exit(main())\n")
    own.chmod(0o755)
    npx = executable(root / "node" / "npx")
    assert find_command({"PATH": os.pathsep.join([str(own.parent), str(npx.parent)])}, start)[0] == str(npx)


def test_the_npm_package_and_version_are_tapedecks():
    manifest = json.loads((REPO / "package.json").read_text())
    assert PACKAGE == manifest["name"] == "tapedeck-proxy"
    assert TAPEDECK_VERSION == manifest["version"]
    assert _backend().VERSION == manifest["version"]


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


def test_verbose_says_which_tapedeck_runs_and_the_fallback_is_always_said(pytester, monkeypatch):
    # In-process runs: no tapedeck starts (no test uses the fixture), only the header is read.
    monkeypatch.delenv("TAPEDECK_URL", raising=False)
    monkeypatch.delenv("TAPEDECK_COMMAND", raising=False)
    pytester.makefile(".toml", pyproject="[project]\nname = 'agent'\n")
    local = executable(pytester.path / "node_modules" / ".bin" / "tapedeck")
    monkeypatch.setenv("PATH", str(pytester.path / "empty-bin"))
    pytester.makepyfile(test_inner="def test_plain():\n    pass\n")
    fallback = f"pytest-tapedeck: this install has no tapedeck executable for * (the pure wheel): running the project's node_modules/.bin/tapedeck"
    quiet = pytester.runpytest_inprocess("-p", "pytest_tapedeck.plugin", "-p", "no:cacheprovider")
    quiet.assert_outcomes(passed=1)
    quiet.stdout.fnmatch_lines([fallback])
    assert f"tapedeck: {local} (" not in quiet.stdout.str()
    verbose = pytester.runpytest_inprocess("-v", "-p", "pytest_tapedeck.plugin", "-p", "no:cacheprovider")
    verbose.assert_outcomes(passed=1)
    verbose.stdout.fnmatch_lines([fallback, f"tapedeck: {local} (node_modules/.bin in the project)"])
    monkeypatch.setenv("TAPEDECK_COMMAND", "node /opt/tapedeck/main.js")
    given = pytester.runpytest_inprocess("-v", "-p", "pytest_tapedeck.plugin", "-p", "no:cacheprovider")
    given.stdout.fnmatch_lines(["tapedeck: node /opt/tapedeck/main.js (TAPEDECK_COMMAND)"])
    assert "pure wheel" not in given.stdout.str()


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


def _backend():
    sys.path.insert(0, str(PLUGIN / "_build"))
    try:
        import backend
    finally:
        sys.path.remove(str(PLUGIN / "_build"))
    return backend


def test_the_platform_wheel_carries_an_executable_pip_installs_with_its_execute_bit(tmp_path):
    # A zip entry's execute bit is in its mode bits (external_attr >> 16, a regular file's S_IFREG): without them pip
    # installs the executable as a plain file, and the plugin cannot run it.
    exe = tmp_path / "tapedeck-here"
    exe.write_bytes(b"#!/bin/sh\necho tapedeck 0.1.0\n")
    tag = "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")
    name = _backend().build_platform_wheel(str(tmp_path), str(exe), tag)
    assert name == f"pytest_tapedeck-{TAPEDECK_VERSION}-{tag}.whl"
    with zipfile.ZipFile(tmp_path / name) as whl:
        info = whl.getinfo("pytest_tapedeck/bin/tapedeck")
        assert info.external_attr >> 16 == stat.S_IFREG | 0o755
        assert whl.getinfo("pytest_tapedeck/plugin.py").external_attr >> 16 == stat.S_IFREG | 0o644
        dist = f"pytest_tapedeck-{TAPEDECK_VERSION}.dist-info"
        assert f"Root-Is-Purelib: false\nTag: {tag}\n" in whl.read(f"{dist}/WHEEL").decode()
        assert "[console_scripts]\ntapedeck = pytest_tapedeck.console:main" in whl.read(f"{dist}/entry_points.txt").decode()
    target = tmp_path / "site"
    run = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--target", str(target), str(tmp_path / name)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if run.returncode != 0 and "No module named pip" in run.stderr:
        pytest.skip("no pip for this Python")
    assert run.returncode == 0, run.stdout + run.stderr
    installed = target / "pytest_tapedeck" / "bin" / "tapedeck"
    assert installed.read_bytes() == exe.read_bytes()
    if os.name == "posix":
        assert os.access(installed, os.X_OK)


def test_the_metadata_a_package_index_shows(tmp_path):
    backend = _backend()
    fields = [k for k, _ in backend.METADATA]
    for field in ("License", "Requires-Python", "Project-URL", "Description-Content-Type"):
        assert field in fields
    classifiers = [v for k, v in backend.METADATA if k == "Classifier"]
    assert "License :: OSI Approved :: MIT License" in classifiers and "Framework :: Pytest" in classifiers


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

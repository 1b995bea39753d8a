"""
How the plugin (and the ``tapedeck`` console command this package installs) runs tapedeck. In this order:

1. the tapedeck executable this package carries (``pytest_tapedeck/bin/tapedeck``): the wheel for a platform has one
   (Linux x64/arm64, macOS, Windows x64), built from the tapedeck release this plugin goes with; it needs no Node.js;
2. ``TAPEDECK_COMMAND``, as given (split like a shell would);
3. ``node_modules/.bin/tapedeck`` in the project: the folder pytest was started from, or one above it up to the
   project's root (the nearest folder with ``pyproject.toml``, ``setup.cfg``, ``pytest.ini``, ``tox.ini`` or
   ``.git``; none: the start folder only), owned by you or root and not writable by others. One elsewhere (planted
   in a shared folder above the project, or by another user) is not run: the header says so;
4. ``tapedeck`` on the ``PATH`` (``npm install -g tapedeck-proxy``, or a downloaded executable), not this package's
   own console command;
5. ``npx --yes tapedeck-proxy@VERSION``: the release that goes with this plugin, installed into npm's cache on first
   use (``--yes``: npx asks nothing, where no one would see the question);
6. none of these (no Node.js): ``TapedeckUnavailable``, one line saying what to install.

Without an executable of its own (the pure wheel, for a platform no executable is built for), the plugin says so in
one line when it falls back to 3-5. The plugin shows a ``TapedeckUnavailable`` (also raised when the command cannot
be run, or exits before it listens) as each test's error, without a traceback: one line, followed by what the command
printed where it exited.
"""

from __future__ import annotations

import os
import platform
import shlex
import shutil
import stat
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Mapping, Optional

PACKAGE = "tapedeck-proxy"
# The tapedeck release this plugin goes with (package.json's version; the tests check they agree).
TAPEDECK_VERSION = "0.1.0"
INSTALL = f"npm install --save-dev {PACKAGE}"
NPX_HINT = f"npx --yes {PACKAGE}@{TAPEDECK_VERSION}"
# What marks a project's root folder: node_modules/.bin is looked for up to it, not above.
PROJECT_ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini", ".git")
# Found in this package's own console command (pip's wrapper script imports it): never run as "tapedeck on the PATH".
_OWN_CONSOLE_MARK = b"pytest_tapedeck.console"


class TapedeckUnavailable(Exception):
    """tapedeck cannot run here, or did not start; the message says why (and what to install) in one line."""


@dataclass(frozen=True)
class Found:
    """The command that runs tapedeck, where it was found, and lines to show the user (a fallback, a refusal)."""

    command: List[str]
    source: str
    notes: List[str] = field(default_factory=list)


def _bin_name() -> str:
    return "tapedeck.cmd" if os.name == "nt" else "tapedeck"


def bundled_executable() -> Optional[Path]:
    """The tapedeck executable this package carries (the platform wheel's), if any."""
    exe = Path(__file__).resolve().parent / "bin" / ("tapedeck.exe" if os.name == "nt" else "tapedeck")
    return exe if exe.is_file() and os.access(exe, os.X_OK) else None


def project_root(start: Path) -> Optional[Path]:
    """The nearest folder from ``start`` up that has a project root marker; None if there is none."""
    for folder in (start, *start.parents):
        if any((folder / marker).exists() for marker in PROJECT_ROOT_MARKERS):
            return folder
    return None


def _untrusted(path: Path) -> Optional[str]:
    """Why a found ``tapedeck`` must not run (another user's, writable by others), or None. POSIX only."""
    if not hasattr(os, "getuid"):
        return None
    me = os.getuid()
    target = path.resolve()
    for what, st in ((path, path.lstat()), (target, target.stat())):
        if st.st_uid not in (me, 0):
            return f"{what} belongs to another user (uid {st.st_uid})"
        if not stat.S_ISLNK(st.st_mode) and st.st_mode & stat.S_IWOTH:
            return f"{what} is writable by others"
    return None


def _project_bin(start: Path, notes: List[str]) -> Optional[Path]:
    """``node_modules/.bin/tapedeck`` from ``start`` up to the project's root, one that is safe to run."""
    root = project_root(start) or start
    for folder in (start, *start.parents):
        local = folder / "node_modules" / ".bin" / _bin_name()
        if local.is_file():
            why = _untrusted(local)
            if why is None:
                return local
            notes.append(f"pytest-tapedeck: not running {local}: {why}")
        if folder == root:
            break
    return None


def _scripts_folders() -> List[Path]:
    """Where pip puts console commands for this Python (the environment's, the user's)."""
    out = []
    for scheme in (None, f"{os.name}_user"):
        try:
            out.append(Path(sysconfig.get_path("scripts", scheme) if scheme else sysconfig.get_path("scripts")).resolve())
        except (KeyError, OSError, ValueError):
            continue
    return out


def _own_console(path: str) -> bool:
    """Whether ``path`` is this package's ``tapedeck`` console command (running it would run this again)."""
    if Path(path).resolve().parent in _scripts_folders() and _has_console_entry():
        return True
    try:
        with open(path, "rb") as f:
            return _OWN_CONSOLE_MARK in f.read(1 << 20)
    except OSError:
        return False


def _has_console_entry() -> bool:
    """Whether this package is installed with its console command (not run from a source folder)."""
    try:
        from importlib.metadata import entry_points

        return any(e.value.startswith("pytest_tapedeck.") for e in entry_points(group="console_scripts", name="tapedeck"))
    except Exception:  # noqa: BLE001 (metadata of other packages can be broken; then rely on the file's content)
        return False


def _on_path(path: str) -> Optional[str]:
    for folder in path.split(os.pathsep):
        found = shutil.which("tapedeck", path=folder) if folder else None
        if found and not _own_console(found):
            return found
    return None


def _platform() -> str:
    return f"{sys.platform}-{platform.machine().lower()}"


def locate(env: Mapping[str, str], start: Path) -> Found:
    """The command that runs tapedeck (arguments follow it), found as the module says."""
    exe = bundled_executable()
    if exe is not None:
        return Found([str(exe)], "the executable in this package")
    given = env.get("TAPEDECK_COMMAND")
    if given:
        return Found(shlex.split(given), "TAPEDECK_COMMAND")
    notes: List[str] = []
    fallback = f"pytest-tapedeck: this install has no tapedeck executable for {_platform()} (the pure wheel): running "
    local = _project_bin(start, notes)
    if local is not None:
        return Found([str(local)], "node_modules/.bin in the project", notes + [fallback + "the project's node_modules/.bin/tapedeck"])
    path = env.get("PATH", os.defpath)
    on_path = _on_path(path)
    if on_path:
        return Found([on_path], "the PATH", notes + [fallback + f"{on_path} from the PATH"])
    npx = shutil.which("npx", path=path)
    if npx:
        return Found([npx, "--yes", f"{PACKAGE}@{TAPEDECK_VERSION}"], "npx", notes + [fallback + f"`{NPX_HINT}` on Node.js"])
    raise TapedeckUnavailable(
        "pytest-tapedeck: tapedeck runs on Node.js, and there is none here (no npx on the PATH, no tapedeck installed): "
        f"install Node.js 20.18 or later (the plugin then runs `{NPX_HINT}`; or pin it in the project: `{INSTALL}`), "
        "or set TAPEDECK_COMMAND, or TAPEDECK_URL to a running tapedeck serve"
        + "".join(f"; {n.split(': ', 1)[1]}" for n in notes)
    )


def find_command(env: Mapping[str, str], start: Path) -> List[str]:
    """The command that runs tapedeck (arguments follow it): ``locate``'s."""
    return locate(env, start).command


def describe(command: List[str]) -> str:
    """The command as a shell would show it (for messages)."""
    return shlex.join(command)

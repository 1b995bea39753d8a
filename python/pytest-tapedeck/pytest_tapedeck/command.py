"""
How the plugin runs tapedeck when it starts a ``tapedeck serve`` for the session. tapedeck is an npm package
(``tapedeck-proxy``; the registry's ``tapedeck`` is someone else's), so a Python project usually has no
``node_modules``: a bare ``npx tapedeck`` would fetch that other package. In this order:

1. ``TAPEDECK_COMMAND``, as given (split like a shell would);
2. ``node_modules/.bin/tapedeck`` in the folder pytest was started from or one above it (a project, or a monorepo,
   with tapedeck installed);
3. ``tapedeck`` on the ``PATH`` (``npm install -g tapedeck-proxy``);
4. ``npx --yes tapedeck-proxy@VERSION``: the release that goes with this plugin, installed into npm's cache on first
   use (``--yes``: npx asks nothing, where no one would see the question);
5. none of these (no Node.js): ``TapedeckUnavailable``, one line saying what to install.

The plugin shows a ``TapedeckUnavailable`` (also raised when the command cannot be run, or exits before it listens)
as each test's error, without a traceback: one line, followed by what the command printed where it exited.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path
from typing import List, Mapping

PACKAGE = "tapedeck-proxy"
# The tapedeck release this plugin goes with (package.json's version; the tests check they agree).
TAPEDECK_VERSION = "0.1.0"
INSTALL = f"npm install --save-dev {PACKAGE}"
NPX_HINT = f"npx --yes {PACKAGE}@{TAPEDECK_VERSION}"


class TapedeckUnavailable(Exception):
    """tapedeck cannot run here, or did not start; the message says why (and what to install) in one line."""


def _bin_name() -> str:
    return "tapedeck.cmd" if os.name == "nt" else "tapedeck"


def find_command(env: Mapping[str, str], start: Path) -> List[str]:
    """The command that runs tapedeck (arguments follow it), found as the module says."""
    given = env.get("TAPEDECK_COMMAND")
    if given:
        return shlex.split(given)
    for folder in (start, *start.parents):
        local = folder / "node_modules" / ".bin" / _bin_name()
        if local.is_file():
            return [str(local)]
    path = env.get("PATH", os.defpath)
    on_path = shutil.which("tapedeck", path=path)
    if on_path:
        return [on_path]
    npx = shutil.which("npx", path=path)
    if npx:
        return [npx, "--yes", f"{PACKAGE}@{TAPEDECK_VERSION}"]
    raise TapedeckUnavailable(
        "pytest-tapedeck: tapedeck runs on Node.js, and there is none here (no npx on the PATH, no tapedeck installed): "
        f"install Node.js 20.18 or later (the plugin then runs `{NPX_HINT}`; or pin it in the project: `{INSTALL}`), "
        "or set TAPEDECK_COMMAND, or TAPEDECK_URL to a running tapedeck serve"
    )


def describe(command: List[str]) -> str:
    """The command as a shell would show it (for messages)."""
    return shlex.join(command)

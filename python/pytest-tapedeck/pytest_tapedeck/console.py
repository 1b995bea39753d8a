"""
The ``tapedeck`` console command this package installs (``pip install pytest-tapedeck``): tapedeck itself, as the
plugin runs it (``command.locate``): the executable the platform wheel carries, else the command the plugin would
find (``TAPEDECK_COMMAND``, the project's ``node_modules/.bin``, the ``PATH``, ``npx``). ``tapedeck --version``,
``tapedeck record NAME -- python agent.py``, ... as with the npm package. Also ``python -m pytest_tapedeck``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

from .command import TapedeckUnavailable, locate


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        found = locate(os.environ, Path.cwd())
    except TapedeckUnavailable as err:
        print(str(err), file=sys.stderr)
        return 2
    for note in found.notes:
        print(note, file=sys.stderr)
    command = found.command + args
    if os.name == "posix":
        # tapedeck in this process's place: signals, exit codes and the terminal are its own.
        try:
            os.execvp(command[0], command)
        except OSError as err:
            print(f"pytest-tapedeck: cannot run {command[0]}: {err.strerror or err}", file=sys.stderr)
            return 127
    try:
        return subprocess.call(command)
    except KeyboardInterrupt:
        return 130
    except OSError as err:
        print(f"pytest-tapedeck: cannot run {command[0]}: {err.strerror or err}", file=sys.stderr)
        return 127

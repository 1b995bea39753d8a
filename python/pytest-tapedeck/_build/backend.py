"""
The build backend of pytest-tapedeck (PEP 517, with PEP 660 editable installs), from the standard library alone.

``pip install ./python/pytest-tapedeck`` then needs nothing that is not already there: no setuptools or wheel to
download into pip's build environment (offline, or with no index at all: ``--no-index``), none preinstalled (a
Python 3.12 venv has neither; an older one has a setuptools that cannot make a wheel without the ``wheel``
package). The package is a few pure-Python files: the wheel is a zip of them and of its ``.dist-info``.

The package's metadata is here (``METADATA``); the version goes with tapedeck's own (package.json's ``version``,
``pytest_tapedeck.command.TAPEDECK_VERSION``: the tests check the three agree).

Release wheels (``npm run build:python``, scripts/build-python.ts, runs ``python3 _build/backend.py release``): the
pure wheel (``py3-none-any``, what pip builds from this folder), and, given tapedeck's single executable
(``npm run build:exe``) and the platform's tag, a platform wheel (``py3-none-manylinux_2_28_x86_64``, ...) that also
carries the executable as ``pytest_tapedeck/bin/tapedeck``, its zip entry a regular file with mode 0755 (pip gives an
entry the execute bit only from those mode bits). Both are reproducible: fixed entry times and order.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import stat
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
NAME = "pytest-tapedeck"
DIST = "pytest_tapedeck"
VERSION = "0.1.0"
PACKAGE = "pytest_tapedeck"
# (field, value) in order; a field may repeat (Classifier, Project-URL).
METADATA: List[Tuple[str, str]] = [
    ("Metadata-Version", "2.1"),
    ("Name", NAME),
    ("Version", VERSION),
    ("Summary", "pytest fixture for tapedeck: each test gets its own tape in one `tapedeck serve`"),
    ("Keywords", "pytest,llm,mcp,record,replay,testing,agents"),
    ("License", "MIT"),
    ("Project-URL", "npm package, https://www.npmjs.com/package/tapedeck-proxy"),
    ("Requires-Python", ">=3.9"),
    ("Requires-Dist", "pytest>=7"),
    ("Classifier", "Framework :: Pytest"),
    ("Classifier", "License :: OSI Approved :: MIT License"),
    ("Classifier", "Programming Language :: Python :: 3"),
    ("Classifier", "Programming Language :: Python :: 3 :: Only"),
    ("Classifier", "Topic :: Software Development :: Testing"),
    ("Description-Content-Type", "text/markdown"),
]
ENTRY_POINTS = "[console_scripts]\ntapedeck = pytest_tapedeck.console:main\n\n[pytest11]\ntapedeck = pytest_tapedeck.plugin\n"
TAG = "py3-none-any"
# Zip entries get this time (a wheel's contents, not its build time, say what it is): 1980-01-01, the zip epoch.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def _metadata_text() -> str:
    head = "".join(f"{key}: {value}\n" for key, value in METADATA)
    return head + "\n" + (ROOT / "README.md").read_text(encoding="utf-8")


def _sources() -> List[Path]:
    return sorted(p for p in (ROOT / PACKAGE).rglob("*.py") if "__pycache__" not in p.parts)


def _dist_info(tag: str = TAG) -> Dict[str, bytes]:
    purelib = "true" if tag == TAG else "false"
    wheel = f"Wheel-Version: 1.0\nGenerator: {NAME} _build/backend.py\nRoot-Is-Purelib: {purelib}\nTag: {tag}\n"
    return {
        "METADATA": _metadata_text().encode(),
        "WHEEL": wheel.encode(),
        "entry_points.txt": ENTRY_POINTS.encode(),
    }


# A zip entry's mode: a regular file (S_IFREG), read-only for others, or executable (pip keeps the execute bit only
# when the entry's mode has it).
FILE_MODE = (stat.S_IFREG | 0o644) << 16
EXECUTABLE_MODE = (stat.S_IFREG | 0o755) << 16


def _write_wheel(directory: str, files: List[Tuple[str, bytes]], tag: str = TAG, executables: Tuple[str, ...] = ()) -> str:
    name = f"{DIST}-{VERSION}-{tag}.whl"
    record_path = f"{DIST}-{VERSION}.dist-info/RECORD"
    record = io.StringIO()
    with zipfile.ZipFile(Path(directory) / name, "w", zipfile.ZIP_DEFLATED) as whl:
        for path, data in files:
            info = zipfile.ZipInfo(path, ZIP_TIME)
            info.external_attr = EXECUTABLE_MODE if path in executables else FILE_MODE
            info.compress_type = zipfile.ZIP_DEFLATED
            whl.writestr(info, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.write(f"{path},sha256={digest},{len(data)}\n")
        record.write(f"{record_path},,\n")
        info = zipfile.ZipInfo(record_path, ZIP_TIME)
        info.external_attr = FILE_MODE
        info.compress_type = zipfile.ZIP_DEFLATED
        whl.writestr(info, record.getvalue())
    return name


def _dist_info_files(tag: str = TAG) -> List[Tuple[str, bytes]]:
    return [(f"{DIST}-{VERSION}.dist-info/{name}", data) for name, data in _dist_info(tag).items()]


# PEP 517 hooks


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[dict] = None) -> str:
    info = Path(metadata_directory) / f"{DIST}-{VERSION}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    for name, data in _dist_info().items():
        (info / name).write_bytes(data)
    return info.name


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    files = [(p.relative_to(ROOT).as_posix(), p.read_bytes()) for p in _sources()]
    return _write_wheel(wheel_directory, files + _dist_info_files())


def build_editable(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    # A .pth file puts this folder on sys.path: the installed package is the source itself.
    pth = (f"{DIST}.pth", (str(ROOT) + os.linesep).encode())
    return _write_wheel(wheel_directory, [pth] + _dist_info_files())


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    base = f"{DIST}-{VERSION}"
    name = f"{base}.tar.gz"
    members = [ROOT / "pyproject.toml", ROOT / "README.md", Path(__file__).resolve(), *_sources()]
    with tarfile.open(Path(sdist_directory) / name, "w:gz", format=tarfile.PAX_FORMAT) as tar:

        def add(path: str, data: bytes) -> None:
            info = tarfile.TarInfo(f"{base}/{path}")
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))

        for p in members:
            add(p.relative_to(ROOT).as_posix(), p.read_bytes())
        add("PKG-INFO", _metadata_text().encode())
    return name


# Release wheels


def build_platform_wheel(wheel_directory: str, executable: str, tag: str) -> str:
    """The wheel for one platform: the package, and tapedeck's executable as ``pytest_tapedeck/bin/tapedeck``."""
    exe = Path(executable)
    inside = f"{PACKAGE}/bin/tapedeck{'.exe' if exe.suffix == '.exe' else ''}"
    files = [(p.relative_to(ROOT).as_posix(), p.read_bytes()) for p in _sources()]
    files.append((inside, exe.read_bytes()))
    return _write_wheel(wheel_directory, files + _dist_info_files(tag), tag, executables=(inside,))


def release(argv: List[str]) -> int:
    """``backend.py release --out DIR [--executable FILE --tag TAG]``: the pure wheel, and the platform's if given."""
    import argparse

    parser = argparse.ArgumentParser(prog="backend.py release")
    parser.add_argument("--out", required=True)
    parser.add_argument("--executable")
    parser.add_argument("--tag", help="the platform wheel's tag, e.g. py3-none-manylinux_2_28_x86_64")
    args = parser.parse_args(argv)
    if (args.executable is None) != (args.tag is None):
        parser.error("--executable and --tag go together")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    built = [build_wheel(str(out))]
    if args.executable is not None:
        built.append(build_platform_wheel(str(out), args.executable, args.tag))
    for name in built:
        print(f"{out / name}: {(out / name).stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] != ["release"]:
        sys.exit("usage: backend.py release --out DIR [--executable FILE --tag TAG]")
    sys.exit(release(sys.argv[2:]))

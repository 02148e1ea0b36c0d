"""Release hygiene: one version everywhere, and artifacts free of absolute paths, secrets, test data.

Builds the sdist and the wheel with uv (as ``.ci/run`` does) into a temporary directory, then reads
them back: the version in ``pyproject.toml``, ``helix/_version.py``, the installed metadata and both
built artifacts is one string; neither artifact holds a file outside the package and its docs (no
tests, fixtures, benchmarks, CI scripts, caches), an absolute path of the build machine, or
anything shaped like a credential.
"""

from __future__ import annotations

import email.parser
import importlib.metadata
import os
import re
import shutil
import subprocess
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

import helix
from helix._version import __version__

PROJECT = Path(__file__).resolve().parents[1]
DISTRIBUTION = "helix-evals"

SECRET_SHAPES = re.compile(
    rb"sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}"  # OpenAI / Anthropic API keys
    rb"|AKIA[0-9A-Z]{16}"  # AWS access key ids
    rb"|gh[pousr]_[A-Za-z0-9]{36}"  # GitHub tokens
    rb"|xox[baprs]-[A-Za-z0-9\-]{10,}"  # Slack tokens
    rb"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
)
SDIST_TOP = {"src", "docs", "README.md", "pyproject.toml", "PKG-INFO", ".gitignore"}


def _uv() -> str:
    found = os.environ.get("UV") or shutil.which("uv")
    if not found:
        pytest.skip("uv is not on PATH (./run puts it there); it builds the artifacts")
    return found


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, bytes]]:
    """{"sdist": {name: bytes}, "wheel": {name: bytes}} of freshly built artifacts."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [_uv(), "build", "--sdist", "--wheel", "--out-dir", str(out), str(PROJECT)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    with tarfile.open(sdist) as tar:
        sdist_files = {
            m.name.split("/", 1)[1]: tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }
    with zipfile.ZipFile(wheel) as zf:
        wheel_files = {name: zf.read(name) for name in zf.namelist() if not name.endswith("/")}
    return {"sdist": sdist_files, "wheel": wheel_files}


def test_one_version_in_pyproject_version_module_and_installed_metadata() -> None:
    pyproject = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["version"] == __version__ == helix.__version__
    assert importlib.metadata.version(DISTRIBUTION) == __version__


def test_the_built_artifacts_carry_the_same_version(artifacts: dict[str, dict[str, bytes]]) -> None:
    parse = email.parser.BytesParser().parsebytes
    (wheel_meta,) = [v for k, v in artifacts["wheel"].items() if k.endswith(".dist-info/METADATA")]
    assert parse(wheel_meta)["Version"] == __version__
    assert parse(artifacts["sdist"]["PKG-INFO"])["Version"] == __version__
    assert f'__version__ = "{__version__}"'.encode() in artifacts["wheel"]["helix/_version.py"]


def test_the_artifacts_hold_the_package_and_no_test_data(artifacts: dict[str, dict[str, bytes]]) -> None:
    wheel_top = {name.split("/", 1)[0] for name in artifacts["wheel"]}
    assert wheel_top == {"helix", f"helix_evals-{__version__}.dist-info"}, wheel_top
    sdist_top = {name.split("/", 1)[0] for name in artifacts["sdist"]}
    assert sdist_top <= SDIST_TOP, (
        f"the sdist holds more than the package and its docs: {sdist_top - SDIST_TOP}"
    )
    for kind, files in artifacts.items():
        junk = [n for n in files if "__pycache__" in n or n.endswith((".pyc", ".sqlite")) or "/.env" in n]
        assert not junk, f"{kind}: {junk[:5]}"
    assert "helix/examples/support_shop/campaign.yaml" in artifacts["wheel"]  # package data ships
    assert "helix/py.typed" in artifacts["wheel"]


def test_the_artifacts_hold_no_absolute_path_and_no_secret(artifacts: dict[str, dict[str, bytes]]) -> None:
    machine = {str(PROJECT), str(PROJECT.resolve()), str(Path.home()), "/tmp/pytest-of-"}
    keys = [os.environ[k] for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY") if len(os.environ.get(k, "")) >= 8]
    problems = []
    for kind, files in artifacts.items():
        for name, data in files.items():
            problems += [f"{kind}:{name}: holds {p!r}" for p in machine if p.encode() in data]
            problems += [
                f"{kind}:{name}: holds an API key from the environment" for k in keys if k.encode() in data
            ]
            problems += [
                f"{kind}:{name}: looks like a credential: {m[:12]!r}..." for m in SECRET_SHAPES.findall(data)
            ]
    assert not problems, "\n".join(problems[:20])

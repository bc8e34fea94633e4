"""The wheel ships the code and the runbook templates: build it offline, install it into a fresh
venv, and render a plan with the installed `imsdr` (not the checkout)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = ROOT / "inventories" / "province.yaml"


def _copy_source(dest: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")
    for name in ("pyproject.toml", "README.md", "MANIFEST.in"):
        shutil.copy2(ROOT / name, dest / name)
    for name in ("imsdr", "templates", "docs"):
        shutil.copytree(ROOT / name, dest / name, symlinks=True, ignore=ignore)


def _build(tmp_path_factory: pytest.TempPathFactory, *flags: str) -> Path:
    src = tmp_path_factory.mktemp("src")
    _copy_source(src)
    dist = tmp_path_factory.mktemp("dist")
    result = subprocess.run(
        [sys.executable, "-m", "build", *flags, "--no-isolation", "--outdir", str(dist), str(src)],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    wheels = list(dist.glob("imsdr-*.whl"))
    assert len(wheels) == 1
    return wheels[0]


@pytest.fixture(scope="module")
def release_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``python -m build``: the sdist, then the wheel built from the sdist (the release path)."""
    return _build(tmp_path_factory)


@pytest.fixture(scope="module")
def tree_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``python -m build --wheel``: straight from the source tree, like ``pip install .``."""
    return _build(tmp_path_factory, "--wheel")


@pytest.mark.parametrize("which", ["release_wheel", "tree_wheel"])
def test_wheel_contains_every_module_and_template(which: str, request: pytest.FixtureRequest) -> None:
    wheel = request.getfixturevalue(which)
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "imsdr").rglob("*.py")
               if "__pycache__" not in p.parts and "templates" not in p.parts}
    assert modules <= names, sorted(modules - names)
    templates = {f"imsdr/templates/{p.name}" for p in (ROOT / "templates").glob("*.j2")}
    assert templates and templates <= names, sorted(templates - names)
    assert "imsdr/reference/domain.md" in names, "the domain reference the rules cite must ship"


def test_installed_wheel_renders_the_same_plan(release_wheel: Path, tmp_path: Path) -> None:
    wheel = release_wheel
    env_dir = tmp_path / "venv"
    # the dependencies come from the test environment's site-packages (appended to sys.path by a
    # plain .pth line, which does not run the editable install's finder); imsdr only from the wheel
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    own = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    Path(own, "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)],
                             capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr
    where = subprocess.run([str(py), "-c", "import imsdr, importlib.resources as r; print(imsdr.__file__); "
                            "print(r.files('imsdr.templates').joinpath('README.md.j2').is_file())"],
                           capture_output=True, text=True, cwd=tmp_path, timeout=60)
    module_file, has_templates = where.stdout.split()
    assert Path(module_file).is_relative_to(env_dir), module_file
    assert has_templates == "True"

    out = tmp_path / "out"
    result = subprocess.run([str(env_dir / "bin" / "imsdr"), "plan", str(PROVINCE), "--out", str(out)],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    from imsdr.plan import analyse, runbook_pages_text

    expected = runbook_pages_text(analyse(PROVINCE))
    installed = {p.name: p.read_text() for p in (out / "runbooks").iterdir() if p.name != ".imsdr-output"}
    assert installed == expected

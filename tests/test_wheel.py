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
    from imsdr.monitoring.render import monitoring_files
    from imsdr.plan import analyse, availability_pages, runbook_pages_text

    pipe = analyse(PROVINCE)
    expected = {**runbook_pages_text(pipe), **availability_pages(pipe)}
    assert {"availability.md", "availability.svg"} <= set(expected)
    installed = {p.name: p.read_text() for p in (out / "runbooks").iterdir() if p.name != ".imsdr-output"}
    assert installed == expected
    monitoring = {p.name: p.read_text() for p in (out / "monitoring").iterdir() if p.name != ".imsdr-output"}
    assert monitoring == monitoring_files(pipe.analysis)


def _scratch_venv(env_dir: Path) -> Path:
    """A fresh venv whose dependencies come from the test environment (a plain .pth line), so that
    installing imsdr into it needs no index; imsdr itself is not importable there until installed."""
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    own = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    Path(own, "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return env_dir / "bin"


def _install_step() -> str:
    import yaml

    from imsdr.starter import CI, INSTALL_STEP, starter_files

    workflow = yaml.safe_load(next(f.text for f in starter_files() if f.path == CI))
    (step,) = [s for s in workflow["jobs"]["check"]["steps"] if s.get("name") == INSTALL_STEP]
    assert workflow["jobs"]["check"]["env"]["IMSDR_PACKAGE"] == "${{ vars.IMSDR_PACKAGE }}"
    return step["run"]


def test_the_init_workflows_install_step_installs_imsdr_from_a_wheel(release_wheel: Path, tmp_path: Path) -> None:
    """The CI example `imsdr init` writes installs what the user has (here: a wheel by its local
    path, as committed to a repository of inventories), not a PyPI name imsdr does not have."""
    script = _install_step()
    assert "pipx install imsdr" not in script and 'pip install "${IMSDR_PACKAGE:-' in script
    bin_dir = _scratch_venv(tmp_path / "venv")
    checkout = tmp_path / "inventories-repo" / "tools"
    checkout.mkdir(parents=True)
    shutil.copy2(release_wheel, checkout / release_wheel.name)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "PIP_NO_INDEX": "1",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "IMSDR_PACKAGE": f"tools/{release_wheel.name}"}
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=checkout.parent, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith(f"imsdr {_version()}"), done.stdout
    assert Path(bin_dir / "imsdr").is_file()


def test_the_init_workflows_install_step_installs_the_pinned_release_when_nothing_is_set(tmp_path: Path) -> None:
    """With IMSDR_PACKAGE unset the step installs the release that wrote the workflow
    (``imsdr==VERSION``) from the index; with no index reachable it fails with pip's error."""
    script = _install_step()
    assert f'"${{IMSDR_PACKAGE:-imsdr=={_version()}}}"' in script
    # a bare venv: not _scratch_venv, whose .pth would show pip the test environment's imsdr as
    # already installed
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bin_dir = env_dir / "bin"
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "PIP_NO_INDEX": "1",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "IMSDR_PACKAGE": ""}
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr  # pip's exit status; `imsdr --version` never ran
    assert f"imsdr=={_version()}" in done.stderr and "ERROR:" in done.stderr, done.stderr
    assert "command not found" not in done.stderr, done.stderr
    assert not Path(bin_dir / "imsdr").exists()


def _version() -> str:
    from imsdr import __version__

    return __version__

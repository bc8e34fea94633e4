"""The shipped pre-commit hooks, run by the real `pre-commit` in a throwaway repository.

The hooks repository is this checkout (a local path at its current commit), so pre-commit builds
the hook environment from it as it would from a published tag. Hook options go in `args`
(the issue this fixes: `args: [--rules-config, ci-rules.yaml]` used to break every run).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = ROOT / "inventories" / "province.yaml"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture(scope="module")
def hooks_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """This checkout as committed, plus the working tree's hook definitions (so that a change to
    them is tested before it is committed): a snapshot repository pre-commit can clone."""
    snapshot = tmp_path_factory.mktemp("hooks-repo")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_symlink():
            (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
            (snapshot / name).symlink_to(os.readlink(source))
        elif source.is_file():
            (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, snapshot / name)
    git(snapshot, "init", "-q")
    git(snapshot, "add", "-A")
    git(snapshot, "commit", "-q", "-m", "snapshot")
    return str(snapshot), git(snapshot, "rev-parse", "HEAD")


def pre_commit(repo: Path, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "COLUMNS": "200", "NO_COLOR": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=repo, capture_output=True, text=True,
                          env=env, timeout=900)


def test_shipped_hooks_with_args_in_a_throwaway_repository(hooks_repo: tuple[str, str], tmp_path: Path) -> None:
    url, rev = hooks_repo
    repo = tmp_path / "network"
    (repo / "inventories").mkdir(parents=True)
    shutil.copy(PROVINCE, repo / "inventories" / "province.yaml")
    # a rules config that is YAML but not an inventory, under inventories/ too: excluded by the user
    (repo / "inventories" / "ci-rules.yaml").write_text("rules:\n  DEP-002: off\n  MGCF-004: off\n")
    config = {"repos": [{"repo": url, "rev": rev, "hooks": [
        {"id": "imsdr-validate", "exclude": "ci-rules"},
        {"id": "imsdr-check", "exclude": "ci-rules",
         "args": ["--fail-on", "warning", "--rules-config", "inventories/ci-rules.yaml"]},
        {"id": "imsdr-plan-check", "args": ["inventories/province.yaml", "--out", "plan"]},
    ]}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    git(repo, "init", "-q")
    home = tmp_path / "pre-commit-home"

    # the committed plan does not exist yet: plan --check fails, validate and check pass
    git(repo, "add", "-A")
    first = pre_commit(repo, "run", "--all-files", home=home)
    out = first.stdout + first.stderr
    assert "imsdr validate" in out and "imsdr check" in out and "imsdr plan --check" in out, out
    assert first.returncode == 1, out
    assert out.count("Passed") == 2 and out.count("Failed") == 1, out
    assert "Missing argument" not in out

    # render and commit the plan: every hook passes (the sample's warnings, DEP-002 and MGCF-004, are off
    # in ci-rules.yaml)
    done = subprocess.run([sys.executable, "-m", "imsdr", "plan", "inventories/province.yaml", "--out", "plan"],
                          cwd=repo, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    git(repo, "add", "-A")
    second = pre_commit(repo, "run", "--all-files", home=home)
    assert second.returncode == 0, second.stdout + second.stderr

    # a broken inventory fails validate and check with its location; the plan is out of date
    inventory = repo / "inventories" / "province.yaml"
    inventory.write_text(inventory.read_text().replace("diameter_watchdog: 8", "diameter_watchdog: eight"))
    git(repo, "add", "-A")
    third = pre_commit(repo, "run", "--all-files", home=home)
    out = third.stdout + third.stderr
    assert third.returncode == 1 and out.count("Failed") == 3, out
    assert "inventories/province.yaml:" in out and "diameter_watchdog" in out


def test_the_pre_commit_config_init_writes_runs_with_real_pre_commit(tmp_path: Path) -> None:
    """`imsdr init`'s .pre-commit-config.yaml (local hooks, imsdr on PATH) passes a fresh project
    and fails a typo with its location."""
    repo = tmp_path / "mynet"
    init = subprocess.run([sys.executable, "-m", "imsdr", "init", str(repo)], capture_output=True, text=True,
                          timeout=120)
    assert init.returncode == 0, init.stderr
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    home = tmp_path / "pre-commit-home"
    clean = pre_commit(repo, "run", "--all-files", home=home)
    out = clean.stdout + clean.stderr
    assert clean.returncode == 0 and out.count("Passed") == 2, out
    inventory = repo / "inventory.yaml"
    inventory.write_text(inventory.read_text().replace("transmission: [ring-1]", "transmision: [ring-1]"))
    git(repo, "add", "-A")
    broken = pre_commit(repo, "run", "--all-files", home=home)
    out = broken.stdout + broken.stderr
    assert broken.returncode == 1 and out.count("Failed") == 2, out
    assert "inventory.yaml:" in out and "did you mean 'transmission'?" in out


def test_init_hooks_run_the_imsdr_on_path_and_say_so_when_it_is_missing(tmp_path: Path) -> None:
    """`imsdr init`'s hooks are `language: system`: they run the imsdr on PATH, as its comment says."""
    repo = tmp_path / "mynet"
    done = subprocess.run([sys.executable, "-m", "imsdr", "init", str(repo)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    config = (repo / ".pre-commit-config.yaml").read_text()
    assert "runs the imsdr found on PATH" in config
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    home = tmp_path / "pre-commit-home"
    with_imsdr = pre_commit(repo, "run", "--all-files", home=home)
    assert with_imsdr.returncode == 0, with_imsdr.stdout + with_imsdr.stderr
    assert "imsdr validate" in with_imsdr.stdout and "imsdr check" in with_imsdr.stdout

    # without imsdr on PATH (git and the system tools only): the failure the comment names
    system_path = os.pathsep.join(p for p in ("/usr/local/bin", "/usr/bin", "/bin")
                                  if not (Path(p) / "imsdr").exists())
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1", "PATH": system_path}
    without = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=repo,
                             capture_output=True, text=True, env=env, timeout=300)
    assert without.returncode == 1
    assert "Executable `imsdr` not found" in without.stdout + without.stderr

"""A MarinSkyRL-shaped checkout built on this machine from the installed ``skyrl_gym`` package, and
prepared gsm8k rows for it: what ``make demo``, the tests and ``scripts/real_server_check.py`` run
the real native verifiers on, without downloading anything.

The checkout has MarinSkyRL's layout (the Gym library, the trajectory runners, the source
registries) in a fresh git repository, so ``make_review`` records a real commit and tree digest.
``add_separator_defect`` gives its gsm8k environment a real, deliberate bug at one commit (it no
longer strips thousands separators, so a correct ``#### 2,006`` is rejected) and the fix at the
next: the example verifier defect of the demo and of the curators' lifecycle test.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from reviews.production.git_commands import run_git

VERIFYIT_PIN = "0123456789abcdef0123456789abcdef01234567"
SOURCE_ID = "MarinSkyRL:gsm8k"
REPOSITORY = "openai/gsm8k"
DATASET_REVISION = "740312add88f781978c0658806c59bc2815b9866"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Atlas Tests",
    "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "Atlas Tests",
    "GIT_COMMITTER_EMAIL": "tests@example.invalid",
}
GSM8K_UTILS = Path("skyrl-gym/skyrl_gym/envs/gsm8k/utils.py")
# The one line of the gsm8k answer extraction the separator defect changes.
STRIPPED = '.replace(",", "").replace("$", "")'
BUGGY = '.replace("$", "")'


def git(checkout: Path, *args: str) -> str:
    done = run_git(checkout=checkout, args=list(args), env=GIT_ENV)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {done.stderr.decode(errors='replace')}")
    return done.stdout.decode("utf-8")


def commit_all(checkout: Path, message: str) -> str:
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", message)
    return git(checkout, "rev-parse", "HEAD").strip()


def installed_gym() -> Path:
    """The installed ``skyrl_gym`` package's folder (a development dependency of the project)."""
    try:
        import skyrl_gym
    except ImportError as exc:  # pragma: no cover - the environment of `make install` has it
        raise RuntimeError("skyrl_gym is not installed: run `make install`") from exc
    return Path(skyrl_gym.__file__).resolve().parent


def build_checkout(root: Path) -> Path:
    """MarinSkyRL's layout: the Gym library (the real installed package), the trajectory runners
    and the source registry, committed in a fresh git repository."""
    shutil.copytree(
        installed_gym(),
        root / "skyrl-gym" / "skyrl_gym",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (root / "skyrl-gym" / "pyproject.toml").write_text(
        '[project]\nname = "skyrl-gym"\nversion = "0.4.0"\ndependencies = [\n'
        f'    "verifyit @ git+https://github.com/marin-community/verifyit@{VERIFYIT_PIN}",\n]\n',
        encoding="utf-8",
    )
    runners = root / "skyrl-train" / "skyrl_train" / "trajectory_runners"
    runners.mkdir(parents=True)
    (root / "skyrl-train" / "skyrl_train" / "__init__.py").write_text("", encoding="utf-8")
    (runners / "__init__.py").write_text(
        '"""Trajectory runners."""\n\nRUNNER_NAMES = ("single_turn",)\n', encoding="utf-8"
    )
    (root / "marinskyrl").mkdir()
    (root / "marinskyrl" / "__init__.py").write_text("", encoding="utf-8")
    (root / "marinskyrl" / "registry.py").write_text(
        f'SOURCES = {{"{SOURCE_ID}": "gsm8k"}}\n', encoding="utf-8"
    )
    # The registry of sources and their transforms, a file the native attestation compares.
    (root / "infra" / "rl_data").mkdir(parents=True)
    (root / "infra" / "__init__.py").write_text("", encoding="utf-8")
    (root / "infra" / "rl_data" / "__init__.py").write_text("", encoding="utf-8")
    (root / "infra" / "rl_data" / "sources.py").write_text(
        f'GSM8K_DATASET = "{REPOSITORY}"\nSOURCES = {{"gsm8k": GSM8K_DATASET}}\n', encoding="utf-8"
    )
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "MarinSkyRL test checkout")
    return root


@dataclass(frozen=True)
class DefectCommits:
    """A checkout's good commit, the commit with the separator defect and the fix after it."""

    path: Path
    good: str
    buggy: str
    fixed: str

    def at(self, commit: str) -> None:
        git(self.path, "checkout", "-q", commit)


def add_separator_defect(checkout: Path) -> DefectCommits:
    """Commit the separator defect, then its fix, on top of ``checkout``'s HEAD; leaves the
    checkout at the buggy commit."""
    good = git(checkout, "rev-parse", "HEAD").strip()
    utils = checkout / GSM8K_UTILS
    source = utils.read_text(encoding="utf-8")
    if source.count(STRIPPED) != 1:
        raise RuntimeError(f"{GSM8K_UTILS} no longer has the line the example defect changes")
    utils.write_text(source.replace(STRIPPED, BUGGY), encoding="utf-8")
    buggy = commit_all(checkout, "gsm8k: keep the answer as written")
    utils.write_text(source, encoding="utf-8")
    fixed = commit_all(checkout, "gsm8k: strip thousands separators again")
    commits = DefectCommits(path=checkout, good=good, buggy=buggy, fixed=fixed)
    commits.at(buggy)
    return commits


def sum_rows(
    count: int, *, offset: int = 0, env_class: str, data_source: str, instruction: str
) -> list[dict[str, Any]]:
    """Prepared rows for a SkyRL math environment: ``Compute a + b`` with a = 3·index + 1 and
    b = 2·index + 5 (a made-up task, labelled so by its numbers). The reference answer is under
    ``reward_spec`` (gsm8k's key, and where the curators' tools read it) and ``reward_model``
    (the aime environment's)."""
    rows = []
    for index in range(offset, offset + count):
        a, b = 3 * index + 1, 2 * index + 5
        reference = {"method": "rule", "ground_truth": str(a + b)}
        row: dict[str, Any] = {
            "data_source": data_source,
            "prompt": [{"role": "user", "content": f"Compute {a} + {b}. {instruction}"}],
            "env_class": env_class,
            "reward_spec": reference,
            "extra_info": {"split": "train", "index": index},
        }
        if env_class == "aime":
            row["reward_model"] = dict(reference)
        rows.append(row)
    return rows


def gsm8k_rows(count: int, *, offset: int = 0) -> list[dict[str, Any]]:
    """Prepared rows in the shape SkyRL's gsm8k environment expects."""
    return sum_rows(
        count,
        offset=offset,
        env_class="gsm8k",
        data_source=REPOSITORY,
        instruction='Let\'s think step by step and output the final answer after "####".',
    )


def aime_rows(count: int, *, data_source: str, offset: int = 0) -> list[dict[str, Any]]:
    """Prepared rows for SkyRL's aime environment (MATH-style answers: ``Answer: <n>``)."""
    return sum_rows(
        count,
        offset=offset,
        env_class="aime",
        data_source=data_source,
        instruction="Give the final answer on its own line as 'Answer: <number>'.",
    )


def write_parquet(path: Path, rows: list[dict[str, Any]], *, row_group_size: int = 4) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=row_group_size)
    return path


def route_blocks(
    *,
    checkout: Path,
    tasks: Path,
    source_id: str,
    repository: str,
    revision: str | None,
    env_class: str,
    **runtime: Any,
) -> dict[str, dict[str, Any]]:
    """The ``runtime`` and ``source`` blocks of a config for a real skyrl_gym route, run by this
    interpreter (whose environment has ``skyrl_gym``)."""
    # The demo and the tests run gsm8k without VerifyIt (a separate service).
    gym_config: dict[str, Any] = {"verifyit_enabled": False} if env_class == "gsm8k" else {}
    return {
        "runtime": {
            "marinskyrl_checkout": str(checkout),
            "gym_python": sys.executable,
            "max_turns": 1,
            "gym_config": {env_class: gym_config},
            **runtime,
        },
        "source": {
            "source_id": source_id,
            "repository": repository,
            "revision": revision,
            "tasks_path": str(tasks),
            "format": "skyrl_prepared",
        },
    }


def gsm8k_blocks(
    *, checkout: Path, tasks: Path, revision: str = DATASET_REVISION, **runtime: Any
) -> dict[str, dict[str, Any]]:
    """The config blocks for the real gsm8k route."""
    return route_blocks(
        checkout=checkout,
        tasks=tasks,
        source_id=SOURCE_ID,
        repository=REPOSITORY,
        revision=revision,
        env_class="gsm8k",
        **runtime,
    )

"""Provenance checks made during production: grading identity, the verifyit pin and the
attestations for reuse at a later revision."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import shutil
import sys
from pathlib import Path

import pytest

from reviews.production.runtime.errors import ReviewProductionError
from reviews.production.runtime.grading import (
    build_grading_manifest,
    grading_identity,
    manifest_revision,
    single_verifyit,
)
from reviews.production.runtime.identity import MARINSKYRL_TREES, checkout_identity
from tests.production.conftest import (
    DATASET_REVISION,
    SOURCE_ID,
    VERIFYIT_PIN,
    commit_all,
    git,
    gsm8k_rows,
    write_parquet,
)
from tests.production.helpers import assert_intact, load, make_review, review_fails, snapshot_files

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
GYM_WORKER = ROOT / "reviews" / "production" / "workers" / "gym_worker.py"


def run_args(config: Path, output: Path, n: int = 1) -> list[str]:
    return ["--config", str(config), "--n", str(n), "--output", str(output)]


# --- grading identity ---


def snapshot(tmp_path: Path, checkout: Path, **overrides) -> Path:
    manifest = build_grading_manifest(
        checkout=checkout,
        mode=overrides.pop("mode", "legacy"),
        environment="gsm8k",
        routes={"gsm8k": ["skyrl_gym.envs.gsm8k.env"]},
        resources=["skyrl-gym/pyproject.toml"],
        dependencies=overrides.pop(
            "dependencies", {"pandas": [importlib.metadata.version("pandas")]}
        ),
    )
    row = {
        "id": SOURCE_ID,
        "dataset_revision": DATASET_REVISION,
        "grading_revision": manifest_revision(manifest),
        "grading_manifest": manifest,
        **overrides,
    }
    path = tmp_path / "atlas-row.json"
    path.write_text(json.dumps(row), encoding="utf-8")
    return path


def test_grading_identity_is_verified_and_recorded(tmp_path, write_config, checkout):
    row = snapshot(tmp_path, checkout)
    output = tmp_path / "run"
    make_review(*run_args(write_config(source={"grading_snapshot": str(row)}), output))
    grading = load(output / "run.json")["grading"]
    expected = load(row)
    assert grading == {
        "source_id": SOURCE_ID,
        "source_revision": DATASET_REVISION,
        "grading_revision": expected["grading_revision"],
        "grading_manifest": expected["grading_manifest"],
        "selected_code_verified": True,
        "installed_dependency_versions": {"pandas": importlib.metadata.version("pandas")},
    }
    provenance = load(output / "quality-reviews.json")["execution_provenance"]
    assert provenance["grading_revision"] == expected["grading_revision"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"id": "MarinSkyRL:other"},
         "The grading snapshot identifies a different source selection"),
        ({"dataset_revision": "f" * 40},
         "The grading snapshot identifies a different dataset revision"),
        ({"grading_revision": "0" * 64},
         "The grading snapshot manifest does not match its revision"),
        ({"mode": "verifyit"},
         "The effective Gym verifyit mode differs from the captured grading route"),
        ({"dependencies": {"pandas": ["0.0.1"]}},
         f"Executed grading dependency pandas=={importlib.metadata.version('pandas')} differs "
         "from its captured runtime lock"),
    ],
)  # fmt: skip
def test_grading_identity_errors(tmp_path, write_config, checkout, change, message):
    row = snapshot(tmp_path, checkout, **change)
    output = tmp_path / "run"
    assert review_fails(*run_args(write_config(source={"grading_snapshot": str(row)}), output)) == (
        message
    )
    assert not (output / "run.json").exists()


def test_executed_grading_code_and_resources(tmp_path, write_config, checkout):
    row = snapshot(tmp_path, checkout)
    config = write_config(source={"grading_snapshot": str(row)})
    utils = checkout / "skyrl-gym/skyrl_gym/envs/gsm8k/utils.py"
    original = utils.read_text()
    # Comments, formatting and docstrings do not change the fingerprint...
    utils.write_text(
        "# reviewed\n" + original.replace("    return final_answer", "    return (final_answer)")
    )
    make_review(*run_args(config, tmp_path / "ok"))
    # ...a literal does.
    utils.write_text(original.replace('"#### ', '"### '))
    assert review_fails(*run_args(config, tmp_path / "code")) == (
        "Executed grading code differs from the Atlas snapshot for gsm8k"
    )
    utils.write_text(original)
    pyproject = checkout / "skyrl-gym/pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n")
    assert review_fails(*run_args(config, tmp_path / "resource")) == (
        "Executed grading resource differs at skyrl-gym/pyproject.toml"
    )


def reference_row(tmp_path: Path, checkout: Path, **route_changes) -> Path:
    """A row in the reference Atlas's format: mode and environment on the row, only ``revision``,
    routes pinned by ``program_revision`` with ``locked_packages`` and per-route resources."""
    pyproject = checkout / "skyrl-gym/pyproject.toml"
    route = {
        "modules": ["skyrl_gym.envs.gsm8k.env"],
        "program_revision": "ab" * 32,
        "locked_packages": {"pandas": [{"version": importlib.metadata.version("pandas")}]},
        "resources": {
            "skyrl-gym/pyproject.toml": hashlib.sha256(pyproject.read_bytes()).hexdigest()
        },
        **route_changes,
    }
    manifest = {"routes": {"gsm8k": route}}
    row = {"id": SOURCE_ID, "revision": DATASET_REVISION, "verifier_mode": "legacy",
           "environment": "gsm8k", "grading_scope": {"agents": []},
           "grading_manifest": manifest,
           "grading_revision": manifest_revision(manifest)}  # fmt: skip
    path = tmp_path / "reference-row.json"
    path.write_text(json.dumps(row), encoding="utf-8")
    return path


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_grading(row: Path, checkout: Path, **runtime) -> dict:
    return grading_identity(
        snapshot_path=row,
        source={"source_id": SOURCE_ID, "revision": DATASET_REVISION},
        runtime={"marinskyrl_checkout": str(checkout), "gym_python": sys.executable,
                 "gym_config": {"gsm8k": {"verifyit_enabled": False}}, **runtime},
        tasks=[],
    )  # fmt: skip


def test_a_reference_atlas_snapshot_is_read_then_refused_in_one_line(tmp_path, checkout):
    # Everything it pins is checked: the locked packages...
    wrong = reference_row(tmp_path, checkout, locked_packages={"pandas": [{"version": "0.0.1"}]})
    with pytest.raises(ReviewProductionError) as failure:
        check_grading(wrong, checkout)
    assert str(failure.value) == (
        f"Executed grading dependency pandas=={importlib.metadata.version('pandas')} differs "
        "from its captured runtime lock"
    )
    # ...its resources...
    with pytest.raises(ReviewProductionError, match="resource differs at skyrl-gym/pyproject"):
        check_grading(reference_row(tmp_path, checkout, resources={
            "skyrl-gym/pyproject.toml": "0" * 64}), checkout)  # fmt: skip
    # ...its verifier mode against the executed Gym configuration...
    with pytest.raises(ReviewProductionError, match="effective Gym verifyit mode differs"):
        check_grading(reference_row(tmp_path, checkout), checkout,
                      gym_config={"gsm8k": {"verifyit_enabled": True}})  # fmt: skip
    # ...and the program revision, which only the reference's normaliser computes, is refused.
    with pytest.raises(ReviewProductionError) as failure:
        check_grading(reference_row(tmp_path, checkout), checkout)
    message = str(failure.value)
    assert message.startswith("The grading snapshot pins gsm8k by the reference Atlas's program")
    assert "\n" not in message


@pytest.mark.parametrize(
    ("manifest_change", "message"),
    [
        ({"routes": {"gsm8k": {"modules": ["skyrl_gym.envs.gsm8k.env"]}}},
         "The grading snapshot route gsm8k needs its roots and fingerprint"),
        ({"routes": ["gsm8k"]},
         "The grading snapshot manifest's routes must be an object of route objects"),
        ({"mode": "native"},
         "The grading snapshot manifest names no grading mode (verifyit, legacy or harbor)"),
        ({"resources": ["skyrl-gym/pyproject.toml"]},
         "The grading snapshot resources must map each path to its SHA-256"),
        ({"dependencies": {"pandas": "2.2"}},
         "The grading snapshot dependencies must map each distribution to its allowed versions"),
    ],
)  # fmt: skip
def test_an_unreadable_manifest_is_refused_in_one_line(tmp_path, checkout, manifest_change,
                                                       message):  # fmt: skip
    manifest = {**load(snapshot(tmp_path, checkout))["grading_manifest"], **manifest_change}
    row = tmp_path / "bad-row.json"
    row.write_text(json.dumps({"id": SOURCE_ID, "dataset_revision": DATASET_REVISION,
                               "grading_manifest": manifest,
                               "grading_revision": manifest_revision(manifest)}))  # fmt: skip
    with pytest.raises(ReviewProductionError) as failure:
        check_grading(row, checkout)
    assert str(failure.value) == message


def test_a_row_carrying_only_revision_is_accepted(tmp_path, checkout):
    row = load(snapshot(tmp_path, checkout))
    row["revision"] = row.pop("dataset_revision")
    path = tmp_path / "revision-only.json"
    path.write_text(json.dumps(row))
    assert check_grading(path, checkout)["source_revision"] == DATASET_REVISION
    row["revision"] = "f" * 40
    path.write_text(json.dumps(row))
    with pytest.raises(ReviewProductionError, match="different dataset revision"):
        check_grading(path, checkout)


CHANGING_WORKER = """
import runpy, sys
from pathlib import Path
utils = Path({utils!r})
utils.write_text(utils.read_text().replace('format_score=0.0', 'format_score=0.5'))
sys.path.insert(0, {workers!r})
sys.argv = [{gym!r}, *sys.argv[1:]]
runpy.run_path({gym!r}, run_name="__main__")
"""


def test_grading_code_changed_during_the_review(tmp_path, write_config, checkout):
    row = snapshot(tmp_path, checkout)
    script = tmp_path / "changing_worker.py"
    script.write_text(
        CHANGING_WORKER.format(
            utils=str(checkout / "skyrl-gym/skyrl_gym/envs/gsm8k/utils.py"),
            workers=str(GYM_WORKER.parent),
            gym=str(GYM_WORKER),
        )
    )
    paths = [str(checkout / "skyrl-gym"), str(checkout / "skyrl-train"), str(checkout)]
    config = write_config(
        source={"grading_snapshot": str(row)},
        runtime={"workers": {"skyrl_gym": {"python": sys.executable, "script": str(script),
                                           "pythonpath": paths}}},
    )  # fmt: skip
    output = tmp_path / "run"
    assert review_fails(*run_args(config, output)) == (
        "Native grading code or dependency versions changed during the review"
    )
    assert (output / "tasks/0000/judges/3/parsed.json").is_file()
    assert not (output / "quality-reviews.json").exists()


# --- verifyit ---

VERIFIED_ENV = """
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput
from skyrl_gym.envs.gsm8k.utils import extract_solution
import verifyit


class VerifiedMathEnv(BaseTextEnv):
    def __init__(self, env_config=None, extras={}):
        super().__init__()
        self.ground_truth = extras["reward_spec"]["ground_truth"]

    def step(self, action):
        reward = verifyit.score(extract_solution(action), self.ground_truth)
        return BaseTextEnvStepOutput(observations=[], reward=reward, done=True, metadata={})
"""


def verifyit_site(root: Path, commit: str | None) -> Path:
    """An installed verifyit distribution with its PEP 610 VCS record."""
    (root / "verifyit").mkdir(parents=True)
    (root / "verifyit/__init__.py").write_text(
        "def score(answer, truth):\n    return 1.0 if answer == truth else 0.0\n"
    )
    info = root / "verifyit-0.3.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: verifyit\nVersion: 0.3.1\n")
    vcs = {"vcs": "git", "commit_id": commit} if commit else {"vcs": "git"}
    (info / "direct_url.json").write_text(
        json.dumps({"url": "https://github.com/marin-community/verifyit", "vcs_info": vcs})
    )
    return root


def verifyit_config(tmp_path, write_config, checkout, *, commit, env="verified_math"):
    envs = checkout / "skyrl-gym/skyrl_gym/envs"
    (envs / "verified_math").mkdir(exist_ok=True)
    (envs / "verified_math/__init__.py").write_text("")
    (envs / "verified_math/env.py").write_text(VERIFIED_ENV)
    registrations = (envs / "__init__.py").read_text()
    if "verified_math" not in registrations:
        (envs / "__init__.py").write_text(
            registrations + '\nregister(id="verified_math", '
            'entry_point="skyrl_gym.envs.verified_math.env:VerifiedMathEnv")\n'
        )
        commit_all(checkout, "verified_math environment")
    site = verifyit_site(tmp_path / "site", commit)
    rows = [{**row, "env_class": env} for row in gsm8k_rows(2)]
    paths = [str(checkout / "skyrl-gym"), str(checkout / "skyrl-train"), str(checkout), str(site)]
    return write_config(
        tasks_path=write_parquet(tmp_path / "verified.parquet", rows),
        runtime={
            "gym_config": {env: {"verifyit_enabled": True}},
            "workers": {"skyrl_gym": {"python": sys.executable, "script": str(GYM_WORKER),
                                      "pythonpath": paths}},
        },
    )  # fmt: skip


def test_verifyit_package_is_captured_and_recorded(tmp_path, write_config, checkout):
    config = verifyit_config(tmp_path, write_config, checkout, commit=VERIFYIT_PIN)
    output = tmp_path / "run"
    make_review(*run_args(config, output, n=2))
    collection = load(output / "quality-reviews.json")
    assert collection["execution_provenance"]["verifyit"] == {
        "version": "0.3.1",
        "source_url": "https://github.com/marin-community/verifyit",
        "source_commit": VERIFYIT_PIN,
    }
    index = load(output / "tasks/0000/execution-000/native-code-index.json")
    entry = next(e for e in index if e["module"] == "verifyit")
    assert entry["called_in_attempt"] and entry["package"]["source_commit"] == VERIFYIT_PIN
    assert (output / "tasks/0000/execution-000/native-code/verifyit/__init__.py").is_file()
    runtime = [r for r in collection["reviews"] if r["method"] == "runtime_execution"]
    assert all(r["attributes"]["verifyit_enabled"] is True for r in runtime)
    assert all(r["attributes"]["verification"]["status"] == "verified" for r in runtime)


def test_verifyit_revision_must_equal_the_pin(tmp_path, write_config, checkout):
    config = verifyit_config(tmp_path, write_config, checkout, commit="e" * 40)
    assert review_fails(*run_args(config, tmp_path / "run")) == (
        "Executed verifyit revision differs from the selected MarinSkyRL pin"
    )


def test_enabled_verifyit_must_be_captured(tmp_path, write_config, checkout):
    config = write_config(runtime={"gym_config": {"gsm8k": {"verifyit_enabled": True}}})
    output = tmp_path / "run"
    message = review_fails(*run_args(config, output))
    task_id = load(output / "run.json")["tasks"][0]["id"]
    assert message == f"verifyit was enabled but no package code was captured for {task_id}"
    assert (output / "tasks/0000/attempt.json").is_file()


def test_verifyit_without_a_vcs_commit_is_an_execution_error(tmp_path, write_config, checkout):
    config = verifyit_config(tmp_path, write_config, checkout, commit=None)
    output = tmp_path / "run"
    review_fails(*run_args(config, output))
    attempt = load(output / "tasks/0000/attempt.json")
    assert attempt["verification"]["status"] == "error"
    assert "40-hex source commit" in attempt["verification"]["reason"]
    events = (output / "tasks/0000/execution-000/verifier-trace.jsonl").read_text()
    assert '"event": "execution_error"' in events


def test_one_verifyit_revision_per_review():
    a = {"version": "1", "source_url": "u", "source_commit": "a" * 40}
    assert single_verifyit(packages=[a, dict(a)]) == a
    with pytest.raises(ReviewProductionError, match=r"^Review tasks used different verifyit"):
        single_verifyit(packages=[a, {**a, "source_commit": "b" * 40}])


# --- attestations ---


@pytest.fixture
def finished(tmp_path, write_config, checkout):
    output = tmp_path / "run"
    make_review(*run_args(write_config(), output))
    return output, checkout


def attest(output: Path, *extra: str) -> tuple[str, str]:
    return make_review("--output", str(output), *extra)


def test_native_revision_attestation(finished, tmp_path):
    output, checkout = finished
    reviewed = load(output / "run.json")["marinskyrl"]["commit"]
    (checkout / "README.md").write_text("unrelated\n")
    registry = commit_all(checkout, "unrelated change")
    row = tmp_path / "row.json"
    row.write_text(json.dumps({"verifier_url": "https://github.com/marin-community/MarinSkyRL/"
                               f"tree/{'c' * 40}/skyrl-gym/skyrl_gym/envs/gsm8k"}))  # fmt: skip
    stdout, _ = attest(output, "--attest-native-revision", registry, "--atlas-row", str(row))
    target = output / "publication" / f"native-revision-attestation-{registry}.json"
    assert stdout.strip() == f"Saved native revision attestation to {target}"
    document = load(target)
    assert document["reviewed_commit"] == reviewed and document["registry_commit"] == registry
    paths = [item["path"] for item in document["objects"]]
    assert paths[:5] == [
        "infra/rl_data/sources.py", "marinskyrl", "skyrl-gym/skyrl_gym",
        "skyrl-train/skyrl_train/trajectory_runners", "skyrl-gym/skyrl_gym/envs/gsm8k",
    ]  # fmt: skip
    registry_file = document["objects"][0]
    assert registry_file["reviewed_object"] == (
        git(checkout, "rev-parse", f"{reviewed}:{paths[0]}").strip()
    )
    assert "skyrl-gym/skyrl_gym/envs/gsm8k/utils.py" in paths
    assert all(i["reviewed_object"] == i["registry_object"] for i in document["objects"])
    assert document["scope"].startswith("Full Gym library, native bindings")


def test_native_revision_attestation_errors(finished):
    output, checkout = finished
    saved = snapshot_files(output)
    registry_file = checkout / "infra/rl_data/sources.py"
    original = registry_file.read_text()
    registry_file.write_text(original + 'SOURCES["svamp"] = "ChilleD/SVAMP"\n')
    registry = commit_all(checkout, "registry change")
    assert review_fails("--output", str(output), "--attest-native-revision", registry) == (
        "Native code changed at infra/rl_data/sources.py; review must execute the new revision"
    )
    registry_file.write_text(original)
    utils = checkout / "skyrl-gym/skyrl_gym/envs/gsm8k/utils.py"
    utils.write_text(utils.read_text() + "\n# changed\n")
    changed = commit_all(checkout, "verifier change")
    assert review_fails("--output", str(output), "--attest-native-revision", changed) == (
        "Native code changed at skyrl-gym/skyrl_gym; review must execute the new revision"
    )
    index_path = output / "tasks/0000/execution-000/native-code-index.json"
    index = load(index_path)
    index[0]["sha256"] = "0" * 64
    index_path.write_text(json.dumps(index))
    message = review_fails("--output", str(output), "--attest-native-revision", changed)
    assert message.startswith("Captured native code differs from its recorded commit at skyrl-gym/")
    run = load(output / "run.json")
    run["marinskyrl"]["dirty"] = True
    (output / "run.json").write_text(json.dumps(run))
    assert review_fails("--output", str(output), "--attest-native-revision", changed) == (
        "Cannot attest a dirty native checkout"
    )
    assert not (output / "publication").exists()
    saved.pop("run.json")
    saved.pop("tasks/0000/execution-000/native-code-index.json")
    assert_intact(saved, output)


def hf_snapshot(root: Path, name: str, revision: str, data: bytes) -> Path:
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_bytes(data)
    metadata = root / ".cache/huggingface/download" / f"{name}.metadata"
    metadata.parent.mkdir(parents=True, exist_ok=True)
    metadata.write_text(f"{revision}\netag\n1700000000.0\n")
    return root


def test_dataset_revision_attestation(finished, tmp_path):
    output, _ = finished
    name = "main/train-00000-of-00001.parquet"
    current = "d" * 40
    executed_dir = hf_snapshot(tmp_path / "executed", name, DATASET_REVISION, b"PAR1 rows")
    current_dir = hf_snapshot(tmp_path / "current", name, current, b"PAR1 rows")
    options = ["--dataset-file", name, "--executed-snapshot", str(executed_dir),
               "--current-snapshot", str(current_dir)]  # fmt: skip
    attest(output, "--attest-dataset-revision", current, *options, "--component-selector", "main")
    document = load(output / "publication" / f"dataset-revision-attestation-{current}.json")
    assert document == {
        "file_path": name,
        "executed_revision": DATASET_REVISION,
        "current_revision": current,
        "component_selector": "main",
        "population_count": 6,
        "file_sha256": hashlib.sha256(b"PAR1 rows").hexdigest(),
    }
    (current_dir / name).write_bytes(b"PAR1 other rows")
    assert (
        review_fails("--output", str(output), "--attest-dataset-revision", current, *options)
        == f"Dataset file differs between the executed and current revisions: {name}"
    )
    assert (
        review_fails("--output", str(output), "--attest-dataset-revision", "e" * 40, *options)
        == f"{name}: expected revision {'e' * 40}, found {current}"
    )
    shutil.rmtree(current_dir / ".cache")
    assert (
        review_fails("--output", str(output), "--attest-dataset-revision", current, *options)
        == f"{name}: download metadata not found"
    )


def test_harbor_grading_checks_the_selected_task_assets(tmp_path, write_config):
    tasks = tmp_path / "harbor-tasks"
    (tasks / "hello/tests").mkdir(parents=True)
    (tasks / "hello/instruction.md").write_text("Say hello.")
    (tasks / "hello/tests/test.sh").write_text("exit 0\n")
    (tasks / "hello/task.toml").write_text("")
    manifest = {
        "mode": "harbor",
        "routes": {},
        "resources": {},
        "dependencies": {},
        "task_assets": {"hello/tests/test.sh": hashlib.sha256(b"exit 1\n").hexdigest()},
    }
    row = tmp_path / "row.json"
    row.write_text(json.dumps({"id": SOURCE_ID, "dataset_revision": DATASET_REVISION,
                               "grading_revision": manifest_revision(manifest),
                               "grading_manifest": manifest}))  # fmt: skip
    config = write_config(
        tasks_path=tasks,
        source={"format": "harbor_directory", "grading_snapshot": str(row)},
    )
    assert review_fails(*run_args(config, tmp_path / "run")) == (
        "Selected native task verifier assets differ from the grading snapshot"
    )


# --- checkout identity ---


def test_an_untracked_module_makes_the_checkout_dirty(tmp_path, checkout, write_config):
    assert checkout_identity(checkout=checkout, trees=MARINSKYRL_TREES)["dirty"] is False
    # An importable module nobody committed changes what runs: the checkout is dirty.
    (checkout / "skyrl-gym/skyrl_gym/envs/shadow.py").write_text("GROUND_TRUTH = 'anything'\n")
    output = tmp_path / "run"
    make_review(*run_args(write_config(), output))
    assert load(output / "run.json")["marinskyrl"]["dirty"] is True
    assert load(output / "quality-reviews.json")["execution_provenance"]["marinskyrl_dirty"]
    commit = load(output / "run.json")["marinskyrl"]["commit"]
    assert review_fails("--output", str(output), "--attest-native-revision", commit) == (
        "Cannot attest a dirty native checkout"
    )


def test_python_tree_hash_orders_paths_component_by_component(checkout):
    library = checkout / "skyrl-gym/skyrl_gym"
    for relative in ("a/x.py", "a-c/y.py", "a/b/z.py"):
        (library / relative).parent.mkdir(parents=True, exist_ok=True)
        (library / relative).write_text(f"NAME = {relative!r}\n")
    identity = checkout_identity(checkout=checkout, trees=("skyrl-gym/skyrl_gym",))
    files = [p.relative_to(checkout).as_posix() for p in library.rglob("*.py")]
    ordered = sorted(files, key=lambda path: path.split("/"))
    # Component order puts a/... before a-c/...; whole-string order would not.
    assert ordered.index("skyrl-gym/skyrl_gym/a/x.py") < ordered.index(
        "skyrl-gym/skyrl_gym/a-c/y.py"
    )
    assert sorted(files) != ordered
    digest = hashlib.sha256()
    for relative in ordered:
        digest.update(relative.encode())
        digest.update(hashlib.sha256((checkout / relative).read_bytes()).digest())
    assert identity["python_tree_sha256"] == digest.hexdigest()

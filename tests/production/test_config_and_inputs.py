"""Configuration, task inputs, sampling and run identity."""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from reviews.production.runtime.config import load_config, resumable_view
from reviews.production.runtime.errors import ReviewProductionError
from reviews.production.runtime.identity import (
    MARINSKYRL_TREES,
    checkout_identity,
    implementation_hashes,
    snapshot_id,
)
from reviews.production.runtime.sampling import sample_tasks
from reviews.production.runtime.tasks import Task, read_rows, read_tasks
from tests.production.conftest import gsm8k_rows, write_parquet


def config_file(tmp_path: Path, **sections) -> Path:
    base = {
        "model": {"name": "m", "base_url": "http://127.0.0.1:1/v1", "timeout": 5,
                  "parameters": {}},
        "runtime": {"marinskyrl_checkout": "native/MarinSkyRL", "gym_python": "venv/bin/python"},
        "source": {"source_id": "MarinSkyRL:gsm8k", "repository": "openai/gsm8k",
                   "revision": None, "tasks_path": "data/train.jsonl", "format": "skyrl_prepared"},
    }  # fmt: skip
    for name, value in sections.items():
        base[name] = {**base[name], **value} if isinstance(value, dict) else value
    path = tmp_path / "configs" / "review.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(base), encoding="utf-8")
    return path


def refused(path: Path) -> str:
    with pytest.raises(ReviewProductionError) as failure:
        load_config(path=path)
    return str(failure.value)


@pytest.mark.parametrize(
    "model",
    [{"name": ""}, {"base_url": " "}, {"timeout": 0}, {"timeout": -1}, {"timeout": True}],
)
def test_model_identity_is_explicit(tmp_path, model):
    assert refused(config_file(tmp_path, model=model)) == (
        "Provide an explicit model name, base_url, and positive timeout"
    )


@pytest.mark.parametrize("key", ["model", "messages", "api_key", "stream", "n"])
def test_parameters_cannot_override_identity(tmp_path, key):
    for section in ("parameters", "review_parameters"):
        path = config_file(tmp_path, model={section: {key: 1}})
        message = refused(path)
        if key == "api_key":
            assert message == (
                "Put credentials in environment variables, not the review config: "
                f"model.{section}.api_key is named like a credential"
            )
        else:
            assert message == (
                "Model parameters must not override identity, conversation, or credentials"
            )


@pytest.mark.parametrize(
    ("where", "field"),
    [
        ({"model": {"Authorization": "Bearer x"}}, "model.Authorization"),
        (
            {"runtime": {"harbor_environment": {"kwargs": [{"nested": {"TOKEN": "x"}}]}}},
            "runtime.harbor_environment.kwargs[0].nested.TOKEN",
        ),
        ({"source": {"extra": [[{"Password": "x"}]]}}, "source.extra[0][0].Password"),
    ],
)
def test_credential_guard_at_any_depth(tmp_path, where, field):
    assert refused(config_file(tmp_path, **where)) == (
        "Put credentials in environment variables, not the review config: "
        f"{field} is named like a credential"
    )


def test_api_key_env_must_exist(tmp_path, monkeypatch):
    monkeypatch.delenv("ATLAS_UNSET_KEY", raising=False)
    path = config_file(tmp_path, model={"api_key_env": "ATLAS_UNSET_KEY"})
    assert refused(path) == (
        "Environment variable ATLAS_UNSET_KEY named by model.api_key_env is not set"
    )
    monkeypatch.setenv("ATLAS_UNSET_KEY", "secret")
    config = load_config(path=path)
    assert config.model.api_key() == "secret"
    assert "secret" not in json.dumps(config.resolved)


@pytest.mark.parametrize("key", ["max_turns", "agent_timeout", "worker_timeout"])
def test_runtime_limits_are_positive(tmp_path, key):
    assert refused(config_file(tmp_path, runtime={key: 0})) == f"{key} must be positive"


def test_runtime_rules(tmp_path):
    assert refused(config_file(tmp_path, runtime={"harbor_agent": {"name": "claude-code"}})) == (
        "Harbor reviews use terminus-2 so solver and judges share the configured model, "
        "or the model-free oracle or nop agent"
    )
    for verifier in ({"disable": True}, {"import_path": "x:y"}):
        path = config_file(tmp_path, runtime={"harbor_verifier": verifier})
        assert refused(path) == "Review must use the task native verifier, enabled"
    assert refused(config_file(tmp_path, source={"format": "csv"})) == (
        "format must be skyrl_prepared, harbor_directory, or task_manifest"
    )
    for agent in ("oracle", "nop"):  # model-free: they test the task itself
        load_config(path=config_file(tmp_path, runtime={"harbor_agent": {"name": agent}}))
    config = load_config(
        path=config_file(
            tmp_path, runtime={"harbor_agent": {"name": "offline_terminus:OfflineTerminus2"}}
        )
    )
    assert config.runtime["harbor_reward_mode"] == "scalar"
    assert config.model.response_format == "json_schema"


@pytest.mark.parametrize("block", ["parameters", "review_parameters"])
@pytest.mark.parametrize("key", ["response_format", "guided_json", "structured_outputs"])
def test_structured_output_is_chosen_by_response_format_alone(tmp_path, block, key):
    """A dialect slipped into the parameters would silently override model.response_format."""
    path = config_file(tmp_path, model={block: {key: {"type": "json_object"}}})
    assert refused(path) == (
        f"model.response_format chooses how structured output is requested; remove {key} "
        f"from model.{block}"
    )


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ({"max_response_bytes": 0}, "model.max_response_bytes must be a positive integer"),
        ({"context_tokens": "8k"}, "model.context_tokens must be a positive integer"),
        ({"max_reasks": -1}, "model.max_reasks must be a non-negative integer"),
        ({"response_format": "xml"}, "model.response_format must be one of json_schema, "
         "json_object_schema, guided_json, structured_outputs, json_object, none"),
    ],
)  # fmt: skip
def test_endpoint_settings_are_checked(tmp_path, model, message):
    assert refused(config_file(tmp_path, model=model)) == message


def test_endpoint_settings_and_what_a_resume_may_change(tmp_path):
    config = load_config(path=config_file(tmp_path, model={
        "context_tokens": 8192, "response_format": "json_object_schema", "max_reasks": 0,
    }))  # fmt: skip
    assert config.model.context_tokens == 8192 and config.model.max_reasks == 0
    assert config.model.response_format == "json_object_schema"
    assert config.model.max_response_bytes == 16 * 1024 * 1024
    first = {"config": config.resolved, "n": 1}
    changed = load_config(path=config_file(tmp_path, model={
        "context_tokens": 4096, "review_parameters": {"max_tokens": 2048}, "timeout": 60,
    }))  # fmt: skip
    # How the judges are asked may change between invocations; the solver's model may not.
    assert resumable_view(first) == resumable_view({"config": changed.resolved, "n": 1})
    solver = load_config(path=config_file(tmp_path, model={"parameters": {"max_tokens": 9}}))
    assert resumable_view(first) != resumable_view({"config": solver.resolved, "n": 1})


def test_paths_resolve_against_the_config_folder_without_following_symlinks(tmp_path):
    real = tmp_path / "real-python"
    real.write_text("")
    venv = tmp_path / "configs" / "venv" / "bin"
    venv.mkdir(parents=True)
    os.symlink(real, venv / "python")
    config = load_config(path=config_file(tmp_path))
    assert config.runtime["gym_python"] == str(tmp_path / "configs" / "venv" / "bin" / "python")
    assert config.runtime["marinskyrl_checkout"] == str(tmp_path / "configs/native/MarinSkyRL")
    assert config.source["tasks_path"] == str(tmp_path / "configs/data/train.jsonl")
    home = load_config(path=config_file(tmp_path, source={"tasks_path": "~/t.jsonl"}))
    assert home.source["tasks_path"] == os.path.expanduser("~/t.jsonl")


# --- task inputs ---

SOURCE = {"source_id": "S:x", "repository": "org/x", "revision": "r" * 40}


def prepared(path: Path) -> list[Task]:
    return list(read_tasks(source={**SOURCE, "tasks_path": str(path), "format": "skyrl_prepared"}))


def test_parquet_is_streamed_in_record_batches(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    path = write_parquet(tmp_path / "train.parquet", gsm8k_rows(2500), row_group_size=100)
    batches = []
    original = pq.ParquetFile.iter_batches

    def counting(self, *args, **kwargs):
        for batch in original(self, *args, **kwargs):
            batches.append(batch.num_rows)
            yield batch

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", counting)
    stream = read_rows(path=path)
    first = next(stream)
    assert first["extra_info"]["index"] == 0 and len(batches) == 1  # not read whole
    assert sum(1 for _ in stream) == 2499 and len(batches) > 1


def test_prepared_rows_from_json_and_jsonl(tmp_path):
    rows = gsm8k_rows(3)
    rows[1]["extra_info"]["nemotron_ultra"] = {"uuid": "u-1"}
    del rows[2]["extra_info"]["index"]
    (tmp_path / "rows.json").write_text(json.dumps(rows))
    (tmp_path / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n\n\n")
    for name in ("rows.json", "rows.jsonl"):
        tasks = prepared(tmp_path / name)
        assert [t.id for t in tasks] == ["0", "u-1", "2"]
        assert [t.task_path for t in tasks] == ["0", "u-1", "2"]
        assert tasks[0].env_id == "gsm8k" and tasks[0].route == "skyrl_gym"
        assert "prompt" not in tasks[0].extras and "env_class" not in tasks[0].extras
        assert tasks[0].extras["reward_spec"] == {"method": "rule", "ground_truth": "6"}
        assert (tasks[0].repository, tasks[0].dataset_revision) == ("org/x", "r" * 40)


def test_an_empty_uuid_falls_back_and_a_task_id_is_never_empty(tmp_path):
    rows = gsm8k_rows(4, offset=10)
    rows[0]["extra_info"]["nemotron_ultra"] = {"uuid": ""}  # the index (10) names it
    rows[1]["extra_info"]["nemotron_ultra"] = {"uuid": None}
    rows[2]["extra_info"]["nemotron_ultra"] = {"uuid": ""}
    rows[2]["extra_info"]["index"] = ""  # nothing left but the row index
    rows[3]["extra_info"]["index"] = None
    (tmp_path / "rows.json").write_text(json.dumps(rows))
    assert [t.id for t in prepared(tmp_path / "rows.json")] == ["10", "11", "2", "3"]


def test_prepared_terminal_bench_rows_need_a_task_dir(tmp_path):
    row = {**gsm8k_rows(1)[0], "env_class": "harbor"}
    row["extra_info"]["nemotron_ultra"] = {"route": "terminal_bench", "uuid": "tb-1"}
    (tmp_path / "rows.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(ReviewProductionError) as failure:
        prepared(tmp_path / "rows.jsonl")
    assert str(failure.value) == (
        "Prepared SWE row 0 needs its actual Harbor task_dir; "
        "use a task_manifest for packed_task references"
    )
    (tmp_path / "rows.jsonl").write_text(json.dumps({**row, "task_dir": "tasks/tb-1"}) + "\n")
    [task] = prepared(tmp_path / "rows.jsonl")
    assert (task.route, task.task_dir) == ("harbor", str(tmp_path / "tasks/tb-1"))
    assert "task_dir" not in task.extras


def harbor_task(folder: Path, *, complete: bool = True) -> None:
    (folder / "tests").mkdir(parents=True)
    (folder / "instruction.md").write_text("Do it.")
    (folder / "task.toml").write_text("")
    if complete:
        (folder / "tests/test.sh").write_text("exit 0")


def test_harbor_directory(tmp_path):
    source = {**SOURCE, "format": "harbor_directory"}
    for name in ("b-task", "a-task"):
        harbor_task(tmp_path / "set" / name)
    tasks = list(read_tasks(source={**source, "tasks_path": str(tmp_path / "set")}))
    assert [(t.id, t.row_index, t.route) for t in tasks] == [
        ("a-task", 0, "harbor"), ("b-task", 1, "harbor")
    ]  # fmt: skip
    assert tasks[0].prompt == [{"role": "user", "content": "Do it."}]
    single = list(read_tasks(source={**source, "tasks_path": str(tmp_path / "set/a-task")}))
    assert [t.id for t in single] == ["a-task"]
    harbor_task(tmp_path / "set" / "c-task", complete=False)
    with pytest.raises(ReviewProductionError) as failure:
        list(read_tasks(source={**source, "tasks_path": str(tmp_path / "set")}))
    assert str(failure.value) == f"Incomplete Harbor task: {tmp_path / 'set' / 'c-task'}"


def test_task_manifest_resolves_paths_against_its_folder(tmp_path):
    record = {
        "id": "t1", "route": "custom", "repository": "org/y", "dataset_revision": None,
        "source_id": "S:y", "task_path": "t1", "row_index": 4, "prompt": [], "extras": {},
        "env_id": None, "task_dir": "dirs/t1",
        "packed_task": {"dataset_path": "packed.jsonl", "key": "t1"},
    }  # fmt: skip
    (tmp_path / "m").mkdir()
    (tmp_path / "m/tasks.jsonl").write_text(json.dumps(record) + "\n")
    [task] = read_tasks(
        source={**SOURCE, "tasks_path": str(tmp_path / "m/tasks.jsonl"), "format": "task_manifest"}
    )
    assert task.route == "custom" and task.source_id == "S:y" and task.dataset_revision is None
    assert task.task_dir == str(tmp_path / "m/dirs/t1")
    assert task.packed_task["dataset_path"] == str(tmp_path / "m/packed.jsonl")


# --- sampling ---


def spec_sample(items: list, n: int, seed: int) -> list:
    """The spec's algorithm, written independently of the product's code."""
    rng = random.Random(seed)
    reservoir = []
    for position, item in enumerate(items, start=1):
        if position <= n:
            reservoir.append(item)
        else:
            slot = rng.randrange(position)
            if slot < n:
                reservoir[slot] = item
    return sorted(reservoir, key=lambda task: task.row_index)


@pytest.mark.parametrize(("total", "n", "seed"), [(50, 5, 42), (1000, 24, 7), (10, 10, 1)])
def test_sampling_matches_the_spec(tmp_path, total, n, seed):
    path = write_parquet(tmp_path / "t.parquet", gsm8k_rows(total))
    candidates = prepared(path)
    sample = sample_tasks(candidates=iter(candidates), n=n, seed=seed)
    assert [t.id for t in sample.tasks] == [t.id for t in spec_sample(candidates, n, seed)]
    assert sample.population == total
    assert sample.populations == {("org/x", "r" * 40, "S:x"): total}
    again = sample_tasks(candidates=iter(prepared(path)), n=n, seed=seed)
    assert again.tasks == sample.tasks


def test_sampling_errors(tmp_path):
    tasks = prepared(write_parquet(tmp_path / "t.parquet", gsm8k_rows(3)))
    with pytest.raises(
        ReviewProductionError, match=r"^Requested 4 tasks but source contains only 3$"
    ):
        sample_tasks(candidates=iter(tasks), n=4, seed=42)
    with pytest.raises(ReviewProductionError) as failure:
        sample_tasks(candidates=iter([*tasks, tasks[1]]), n=2, seed=42)
    assert (
        str(failure.value) == 'Duplicate task identity: ["org/x", "' + "r" * 40 + '", "S:x", "1"]'
    )


# --- identity ---


def test_checkout_identity(checkout):
    identity = checkout_identity(checkout=checkout, trees=MARINSKYRL_TREES)
    head = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    digest = hashlib.sha256()
    for tree in MARINSKYRL_TREES:
        for path in sorted((checkout / tree).rglob("*.py"), key=lambda p: p.parts):
            digest.update(path.relative_to(checkout).as_posix().encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    assert identity == {
        "checkout": str(checkout),
        "commit": head,
        "dirty": False,
        "python_tree_sha256": digest.hexdigest(),
    }
    (checkout / "marinskyrl/__pycache__").mkdir()  # an empty folder is nothing git would track
    assert not checkout_identity(checkout=checkout, trees=MARINSKYRL_TREES)["dirty"]
    (checkout / "marinskyrl/registry.py").write_text("SOURCES = {}\n")
    changed = checkout_identity(checkout=checkout, trees=MARINSKYRL_TREES)
    assert changed["dirty"] and changed["python_tree_sha256"] != identity["python_tree_sha256"]


def test_snapshot_id_and_implementation_hashes():
    identity = {"b": "é", "a": [1, 2]}
    expected = hashlib.sha256('{"b": "é", "a": [1, 2]}'.encode()).hexdigest()
    assert snapshot_id(identity=identity) == expected
    hashes = implementation_hashes()
    package = Path(sys.modules["reviews.production"].__file__).parent
    assert (
        hashes["review_runtime/workers/harbor_worker.py"]
        == hashlib.sha256((package / "workers/harbor_worker.py").read_bytes()).hexdigest()
    )


def test_example_config_loads_and_holds_no_credentials(monkeypatch):
    monkeypatch.setenv("REVIEW_MODEL_API_KEY", "x")
    example = Path(__file__).resolve().parents[2] / "fixtures/reviews/review-config.example.json"
    config = load_config(path=example)
    assert config.source["format"] == "skyrl_prepared"
    assert config.source["tasks_path"] == str(example.parent / "data/gsm8k/train.parquet")
    assert config.runtime["gym_python"].startswith(os.path.expanduser("~"))
    # What Terminus needs: the model's limits for a model litellm does not know, and a turn cap
    # that fits agentic tasks (the reference runner allows 50).
    assert config.runtime["max_turns"] == 50
    model_info = config.runtime["harbor_agent"]["kwargs"]["model_info"]
    assert set(model_info) == {"max_input_tokens", "max_output_tokens"}
    assert model_info["max_output_tokens"] == config.model.parameters["max_tokens"]


@pytest.mark.slow
def test_production_needs_no_django_or_database():
    """The package imports and runs its pure parts without Django settings (no Atlas database)."""
    code = (
        "import sys; import reviews.production.make_review.pipeline; "
        "import reviews.production.make_review.attestation_writer; "
        "import reviews.production.curation.validate, reviews.production.curation.synthesise; "
        "from reviews.production.format.collection_checks import check_schema; "
        "assert 'django' not in sys.modules, sorted(m for m in sys.modules if 'django' in m)"
    )
    environment = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[2],
        env=environment,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_progress_redraws_one_line_on_a_terminal():
    from reviews.production.runtime.model_client import CallStats
    from reviews.production.runtime.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    progress = Progress(total=2, stats=CallStats(calls=5, retries=1), stream=stream)
    progress.update("task 0001 judged", task_done=True)
    progress.finish()
    text = stream.getvalue()
    assert text.startswith("\r\033[K") and text.endswith("\n") and text.count("\n") == 1
    assert "tasks 1/2 · calls 5 · retries 1 · " in text


@pytest.mark.slow
def test_help_describes_every_option():
    done = subprocess.run(
        [sys.executable, "manage.py", "make_review", "--help"],
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_test"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0
    for option in (
        "--config", "--n", "--seed", "--output", "--resume", "--max-evidence-bytes", "--jobs",
        "--attest-native-revision", "--atlas-row", "--attest-dataset-revision", "--dataset-file",
        "--executed-snapshot", "--current-snapshot", "--component-selector",
    ):  # fmt: skip
        assert option in done.stdout

"""Harbor for tests: this machine has no container provider, so the Harbor route is
run through the real Harbor worker against a stand-in ``harbor`` library that keeps Harbor's
trial API — ``harbor.models.trial.config`` (``TrialConfig`` and its parts),
``harbor.agents.factory.AgentFactory`` (the agent class, its options model and model connection)
and ``harbor.trial.trial.Trial`` (``create``, ``run``, a result with ``model_dump_json``). As
Harbor 0.25 does, ``create`` refuses an option the agent's options model does not declare.
The real Harbor in a real engine is the tier under ``tests/harbor/``.

The stand-in trial runs the task on this machine: its agent asks the configured endpoint once
with the task's ``instruction.md`` and writes the answer to ``/answer`` of the trial's
workspace, then its verifier (``harbor.verifier.runner``, captured as native code) runs the
task's ``tests/test.sh`` there and rewards its exit status.

``tasktrove_dataset`` writes a TaskTrove-format Parquet dataset (MarinSkyRL's packed-task
reference format: ``source, tags, mode, path, dockerfile_id, task_binary``).
"""

from __future__ import annotations

import io
import tarfile
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.production.conftest import commit_all, git

FILES = {
    "__init__.py": "",
    "models/__init__.py": "",
    "models/trial/__init__.py": "",
    "models/trial/config.py": """
        class _Config:
            def __init__(self, **fields):
                self.__dict__.update(fields)

        class AgentConfig(_Config): pass

        class EnvironmentConfig(_Config):
            type = "stand-in"  # not Docker: no engine is asked for
        class TaskConfig(_Config): pass
        class VerifierConfig(_Config): pass
        class TrialConfig(_Config): pass
    """,
    "agents/__init__.py": "",
    "agents/factory.py": """
        class _Field:
            alias = None
            validation_alias = None


        class TerminusOptions:
            model_fields = {name: _Field() for name in
                            ("api_base", "llm_call_kwargs", "max_turns", "store_all_messages")}


        class Terminus:
            options_model = TerminusOptions
            MODEL_CONNECTION = "openai-compatible"


        class AgentFactory:
            @classmethod
            def get_agent_class_from_config(cls, config):
                return Terminus
    """,
    "trial/__init__.py": "",
    "trial/trial.py": """
        import datetime, json, os, urllib.request
        from pathlib import Path

        from harbor.verifier.runner import run_tests


        def _now():
            return datetime.datetime.now(datetime.UTC).isoformat()


        class Result:
            def __init__(self, document):
                self.document = document

            def model_dump_json(self):
                return json.dumps(self.document)


        class Trial:
            def __init__(self, config):
                self.config = config

            @classmethod
            async def create(cls, config):
                from harbor.agents.factory import TerminusOptions

                for option in config.agent.kwargs:
                    if option not in TerminusOptions.model_fields:
                        raise ValueError(f"Unknown option '{option}'.")
                return cls(config)

            async def run(self):
                config = self.config
                task = Path(config.task.path)
                trial = Path(config.trials_dir) / config.trial_name
                workspace = trial / "workspace"
                workspace.mkdir(parents=True)
                kwargs = config.agent.kwargs
                body = {**kwargs["llm_call_kwargs"], "model": config.agent.model_name,
                        "messages": [{"role": "user",
                                      "content": (task / "instruction.md").read_text()}]}
                request = urllib.request.Request(
                    kwargs["api_base"].rstrip("/") + "/chat/completions",
                    data=json.dumps(body).encode(),
                    headers={"Content-Type": "application/json",
                             "Authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", "")})
                with urllib.request.urlopen(request, timeout=30) as answer:
                    reply = json.loads(answer.read())
                text = reply["choices"][0]["message"]["content"]
                (workspace / "answer").write_text(text)
                (trial / "agent").mkdir()
                (trial / "agent" / "trajectory.json").write_text(
                    json.dumps({"steps": [body, reply]}))
                started = _now()
                reward = run_tests(task=task, workspace=workspace, logs=trial / "verifier")
                return Result({
                    "trial_name": config.trial_name,
                    "verifier": {"started_at": started, "finished_at": _now()},
                    "verifier_result": {"rewards": {"reward": reward}},
                    "exception_info": None,
                })
    """,
    "verifier/__init__.py": "",
    "verifier/runner.py": """
        import subprocess


        def run_tests(*, task, workspace, logs):
            logs.mkdir(parents=True)
            done = subprocess.run(["bash", str(task / "tests" / "test.sh")], cwd=workspace,
                                  capture_output=True, text=True)
            (logs / "test-stdout.txt").write_text(done.stdout)
            (logs / "test-stderr.txt").write_text(done.stderr)
            return 1.0 if done.returncode == 0 else 0.0
    """,
}


# A small test version of MarinSkyRL's own materialiser (``marinskyrl.packed_tasks``), so that the
# worker's preference for the checkout's materialiser can be observed.
NATIVE_MATERIALIZER = """
import io, tarfile
from dataclasses import dataclass

import pyarrow.parquet as pq


@dataclass(frozen=True)
class PackedTaskReference:
    dataset_path: str
    dataset_uri: str
    dataset_identity: str
    verifier_ref: str
    row_group: int
    row: int
    source: str
    path: str
    dockerfile_id: str
    mode: str


class PackedTaskMaterializer:
    def __init__(self, cache_root):
        self.cache_root = cache_root

    def materialize_batch(self, references):
        found = {}
        for reference in references:
            table = pq.ParquetFile(reference.dataset_path).read_row_group(reference.row_group)
            blob = table.slice(reference.row, 1).to_pylist()[0]["task_binary"]
            target = self.cache_root / "marinskyrl" / reference.path
            with tarfile.open(fileobj=io.BytesIO(blob)) as archive:
                archive.extractall(target, filter="data")
            found[reference] = target
        return found
"""


def add_native_materializer(checkout: Path) -> None:
    (checkout / "marinskyrl" / "packed_tasks.py").write_text(NATIVE_MATERIALIZER, encoding="utf-8")
    commit_all(checkout, "packed task materialiser")


def build_harbor(root: Path) -> Path:
    """A git checkout of the stand-in library (``src/harbor``), as ``runtime.harbor_checkout``."""
    for relative, text in FILES.items():
        path = root / "src" / "harbor" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "stand-in harbor")
    return root


def task_archive(
    files: dict[str, str], *, gzip: bool = True, extra: tarfile.TarInfo | None = None
) -> bytes:
    """A task as TaskTrove packs it: a tar (gzipped by default) of the task's files."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if gzip else "w") as archive:
        for name, text in files.items():
            data = text.encode("utf-8")
            member = tarfile.TarInfo(name)
            member.size = len(data)
            member.mode = 0o755 if name.endswith(".sh") else 0o644
            archive.addfile(member, io.BytesIO(data))
        if extra is not None:
            archive.addfile(extra)
    return buffer.getvalue()


def harbor_task_files(*, expected: str) -> dict[str, str]:
    return {
        "instruction.md": "Compute 4 + 3. Answer with the total after ####.\n",
        "task.toml": 'version = "1.0"\n',
        "environment/Dockerfile": "FROM scratch\n",
        "tests/test.sh": f'grep -q "#### {expected}" answer\n',
    }


def tasktrove_dataset(path: Path, rows: list[dict]) -> Path:
    """``rows``: ``{source, path, task_binary}`` (+ optional ``mode``/``dockerfile_id``/``tags``),
    two rows per row group so references name both a group and a row."""
    table = pa.table(
        {
            "source": pa.array([r["source"] for r in rows], pa.string()),
            "tags": pa.array([r.get("tags", ["terminal"]) for r in rows], pa.list_(pa.string())),
            "mode": pa.array([r.get("mode", "clean") for r in rows], pa.string()),
            "path": pa.array([r["path"] for r in rows], pa.string()),
            "dockerfile_id": pa.array([r.get("dockerfile_id", "d0") for r in rows], pa.string()),
            "task_binary": pa.array([r["task_binary"] for r in rows], pa.binary()),
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=2)
    return path


def reference(dataset: Path, *, row_group: int, row: int, source: str, path: str) -> dict:
    """A ``packed_task`` in MarinSkyRL's ``PackedTaskReference`` shape."""
    return {
        "dataset_path": str(dataset),
        "dataset_uri": f"hf://datasets/example/tasktrove/{dataset.name}",
        "dataset_identity": "example/tasktrove@0123abcd",
        "verifier_ref": "tasktrove-verify@1",
        "row_group": row_group,
        "row": row,
        "source": source,
        "path": path,
        "dockerfile_id": "d0",
        "mode": "clean",
    }

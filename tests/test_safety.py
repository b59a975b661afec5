"""dslint only reads: it never runs or sources a script, never builds objects from YAML tags,
never opens a network connection, and loads plugins only from installed entry points.

The last point is tests/test_plugins.py (nothing is imported from the working directory, with
``python -m dslint`` and with the console script). Here:

- scripts whose every line would leave a marker file if anything ran it (commands, ``$(...)``,
  backticks, ``eval``, ``source``, heredocs into ``bash``, traps, functions): linted and fixed, no
  marker appears;
- YAML with ``!!python/object/apply``, ``!!python/object/new``, ``!!python/name``,
  ``!!python/module`` tags, as training, accelerate and linked configs: no marker, no object;
- the whole corpus plus those scripts, linted and fixed in a subprocess where
  ``socket.socket.connect`` (and ``create_connection``, ``getaddrinfo``) and every way to run a
  program (``subprocess``, ``os.system``, ``os.exec*``, ``os.spawn*``, ``os.posix_spawn``, ``pty``)
  raise: the run succeeds and nothing tried. (``os.fork`` is allowed: dslint's own worker for large trees.)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


def _evil_scripts(marker_dir: Path) -> dict[str, str]:
    m = lambda tag: f"{marker_dir}/{tag}"  # noqa: E731
    return {
        "run.sh": f"""#!/bin/bash
touch {m('command')}
X=$(touch {m('substitution')}; echo 8)
Y=`touch {m('backticks')}`
eval "touch {m('eval')}"
source ./env.sh
. ./env.sh
trap 'touch {m('trap')}' EXIT
setup() {{ touch {m('function')}; }}
setup
bash <<EOF
touch {m('heredoc')}
EOF
python -c "open('{m('python')}', 'w')"
NGPU=$(python -c "open('{m('python-substitution')}', 'w'); print(8)")
deepspeed --num_gpus $NGPU train.py --deepspeed ds.json --lr $(touch {m('argument')}; echo 1e-5) \\

  --bf16
""",
        "env.sh": f"#!/bin/bash\ntouch {m('sourced')}\nexport CUDA_VISIBLE_DEVICES=0,1\n",
        "train.py": f"open('{m('program')}', 'w')\n",
        "ds.json": '{"train_micro_batch_size_per_gpu": 4, "train_batch_size": 7, "zero_optimization": {"stage": 2}}\n',
    }


def _evil_yaml(marker_dir: Path) -> dict[str, str]:
    m = lambda tag: f"{marker_dir}/{tag}"  # noqa: E731
    return {
        "train.yaml": f"""model_name_or_path: Qwen/Qwen2.5-7B
output_dir: out
learning_rate: !!python/object/apply:os.system ["touch {m('yaml-apply')}"]
seed: !!python/object/new:subprocess.Popen [["touch", "{m('yaml-new')}"]]
callback: !!python/name:os.system
module: !!python/module:os
exec: !!python/object/apply:builtins.exec ["open('{m('yaml-exec')}', 'w')"]
deepspeed: ds.json
""",
        "accelerate.yaml": f"""compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
num_processes: !!python/object/apply:os.system ["touch {m('accelerate-apply')}"]
deepspeed_config:
  deepspeed_config_file: ds.json
""",
        "launch.sh": "#!/bin/bash\naccelerate launch --config_file accelerate.yaml train.py\nllamafactory-cli train train.yaml\n",
        "ds.json": '{"train_micro_batch_size_per_gpu": "auto", "zero_optimization": {"stage": 2}}\n',
    }


def _run(cwd: Path, *args: str, guard: bool = False) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS",)}
    env["NO_COLOR"] = "1"
    command = [sys.executable, "-c", GUARD, *args] if guard else [sys.executable, "-m", "dslint", *args]
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True, encoding="utf-8", env=env, timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode in (0, 1), (proc.returncode, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-3000:]
    return proc


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    path = tmp_path / "markers"
    path.mkdir()
    return path


def test_scripts_are_never_run_or_sourced(tmp_path, markers):
    work = tmp_path / "work"
    work.mkdir()
    for name, text in _evil_scripts(markers).items():
        (work / name).write_text(text)
    proc = _run(work, "check", "--no-config", "--format", "json", ".")
    codes = {d["code"] for d in json.loads(proc.stdout)["diagnostics"]}
    assert "DS601" in codes  # the script was read: the blank line after `\` is found
    _run(work, "check", "--no-config", "--fix", "--unsafe-fixes", ".")
    _run(work, "explain", "--no-config", ".")
    assert sorted(p.name for p in markers.iterdir()) == []


def test_yaml_tags_build_nothing(tmp_path, markers):
    work = tmp_path / "work"
    work.mkdir()
    for name, text in _evil_yaml(markers).items():
        (work / name).write_text(text)
    proc = _run(work, "check", "--no-config", "--format", "json", ".")
    found = {(d["path"], d["code"]) for d in json.loads(proc.stdout)["diagnostics"]}
    assert ("train.yaml", "DS001") in found and ("accelerate.yaml", "DS001") in found  # tags are reported, not constructed
    _run(work, "check", "--no-config", "--fix", "--unsafe-fixes", ".")
    assert sorted(p.name for p in markers.iterdir()) == []


# Everything that opens a connection or starts a process raises, and says so on stderr.
GUARD = r"""
import os, socket, subprocess, sys

def blocked(what):
    def refuse(*args, **kwargs):
        sys.stderr.write(f"BLOCKED {what} {args[:2]!r}\n")
        raise PermissionError(f"dslint test guard: {what} is not allowed")
    return refuse

socket.socket.connect = blocked("socket.connect")
socket.socket.connect_ex = blocked("socket.connect_ex")
socket.create_connection = blocked("socket.create_connection")
socket.getaddrinfo = blocked("socket.getaddrinfo")
subprocess.Popen.__init__ = blocked("subprocess.Popen")
# os.fork stays: dslint forks itself to lint large trees on two CPUs (dslint/run/split.py); the worker
# runs dslint's own code, and anything it tried to exec would be blocked here too.
for name in ("system", "popen", "forkpty", "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "execlpe",
             "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnle", "posix_spawn", "posix_spawnp"):
    if hasattr(os, name):
        setattr(os, name, blocked("os." + name))
import pty
pty.spawn = blocked("pty.spawn")
sys.argv = ["dslint", *sys.argv[1:]]
from dslint.cli import main
main()
"""


def test_no_network_and_no_process_over_the_corpus(tmp_path, markers):
    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus is not beside the repository ({CORPUS})")
    work = tmp_path / "work"
    shutil.copytree(CORPUS, work / "corpus")
    for group in (_evil_scripts(markers), _evil_yaml(markers)):
        folder = work / f"evil{len(list(work.iterdir()))}"
        folder.mkdir()
        for name, text in group.items():
            (folder / name).write_text(text)
    proc = _run(work, "check", "--no-config", "--format", "json", ".", guard=True)
    assert "BLOCKED" not in proc.stderr, proc.stderr[-3000:]
    payload = json.loads(proc.stdout)
    assert payload["summary"]["files"] >= 700
    proc = _run(work, "check", "--no-config", "--fix", "--unsafe-fixes", "--format", "json", ".", guard=True)
    assert "BLOCKED" not in proc.stderr, proc.stderr[-3000:]
    json.loads(proc.stdout)
    proc = _run(work, "explain", "--no-config", "--format", "json", ".", guard=True)
    assert "BLOCKED" not in proc.stderr, proc.stderr[-3000:]
    assert sorted(p.name for p in markers.iterdir()) == []


def test_the_guard_catches_a_connection(tmp_path):
    """The guard itself works: a connection attempt under it is refused and reported."""
    probe = GUARD.replace("from dslint.cli import main\nmain()", "import socket\ntry:\n    socket.create_connection(('127.0.0.1', 9))\nexcept PermissionError:\n    pass\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert "BLOCKED socket.create_connection" in proc.stderr

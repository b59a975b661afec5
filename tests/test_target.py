"""Target detection (dslint/launch/target.py): which launches run on Ascend NPU, and why; hardware
from the settings or a script's comments; and the `--target` option of `dslint check`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dslint.config import Setting, Settings
from dslint.facts import value
from dslint.run.engine import Engine
from dslint.launch.target import hardware, launch_target


def _plans(tmp_path: Path, files: dict[str, str], settings: Settings | None = None):
    for name, text in files.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    settings = settings or Settings(select=["DS5"], root=tmp_path)
    engine = Engine(settings)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = engine.lint_paths(["."])
    finally:
        os.chdir(old)
    return engine, [p for p in result.plans if p.launcher != "yaml"] or result.plans


@pytest.mark.parametrize(
    "script,reason",
    [
        ("export ASCEND_RT_VISIBLE_DEVICES=0,1\nNPROC_PER_NODE=2 swift sft --model m\n", "ASCEND_RT_VISIBLE_DEVICES is set at train.sh:1"),
        ("export HCCL_CONNECT_TIMEOUT=1200\ntorchrun --nproc_per_node 2 train.py\n", "HCCL_CONNECT_TIMEOUT is set"),
        ("PYTORCH_NPU_ALLOC_CONF=expandable_segments:True megatron sft --model m\n", "PYTORCH_NPU_ALLOC_CONF is set"),
        ("source /usr/local/Ascend/ascend-toolkit/set_env.sh\nswift sft --model m\n", "the script sources /usr/local/Ascend/ascend-toolkit/set_env.sh"),
        (". /usr/local/Ascend/nnal/atb/set_env.sh\nswift sft --model m\n", "nnal/atb/set_env.sh"),
        ("npu-smi info\ntorchrun --nproc_per_node 8 train.py\n", "the script runs npu-smi"),
        ("torchrun --nproc_per_node 2 train.py --ddp_backend hccl\n", "--ddp_backend hccl"),
        ("python train.py --device npu:0\n", "device npu:0"),
        ("DS_ACCELERATOR=npu deepspeed train.py\n", "DS_ACCELERATOR=npu"),
        ("# 16 * 64GiB Ascend A3\nNPROC_PER_NODE=16 megatron sft --model m\n", "Ascend hardware named by a comment at train.sh:1"),
    ],
)
def test_script_signals(tmp_path, script, reason):
    engine, plans = _plans(tmp_path, {"train.sh": script})
    found = launch_target(plans[0], engine.settings)
    assert found is not None and found.npu, script
    assert reason in found.reason


@pytest.mark.parametrize(
    "script",
    [
        "CUDA_VISIBLE_DEVICES=0,1 NPROC_PER_NODE=2 swift sft --model m\n",
        "# Works on Ascend too: see the NPU docs for the variables to set\ntorchrun --nproc_per_node 2 train.py\n",
        "export NCCL_SOCKET_IFNAME=eth0\ntorchrun --nproc_per_node 8 train.py --device cuda\n",
        # one script for both: a branch is no evidence
        'if [ "$DEVICE" = npu ]; then\n  export ASCEND_RT_VISIBLE_DEVICES=0,1\nelse\n  export CUDA_VISIBLE_DEVICES=0,1\nfi\n'
        "NPROC_PER_NODE=2 swift sft --model m\n",
    ],
)
def test_gpu_scripts_are_not_npu(tmp_path, script):
    engine, plans = _plans(tmp_path, {"train.sh": script})
    assert launch_target(plans[0], engine.settings) is None


def test_program_importing_torch_npu(tmp_path):
    files = {"train.sh": "torchrun --nproc_per_node 2 train.py --output_dir out\n", "train.py": "import torch\nimport torch_npu\n"}
    engine, plans = _plans(tmp_path, files)
    # as the run worked it out (the program's file is named relative to the directory it ran in)
    found = value("launch_target", plans[0], engine.context)
    assert found is not None and "imports torch_npu (train.py:2)" in found.reason
    assert found.span is not None and found.span.path == "train.py" and found.span.text == "import torch_npu"


@pytest.mark.parametrize(
    "program,reason",
    [
        # the import is in a project module the entry program imports (read statically)
        ({"train.py": "from setup_npu import init\ninit()\n", "setup_npu.py": "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu\n"},
         "imports torch_npu (setup_npu.py:1)"),
        ({"pretrain_gpt.py": "import mindspeed.megatron_adaptor\nfrom megatron.training import pretrain\n"},
         "imports mindspeed.megatron_adaptor (pretrain_gpt.py:1)"),
        ({"train.py": "import torch\n\nif __name__ == '__main__':\n    import torch_npu\n"}, "imports torch_npu (train.py:4)"),
        # through a relative import of a package module, and two levels down
        ({"pkg/train.py": "from .setup import init\n", "pkg/__init__.py": "", "pkg/setup.py": "from . import npu\n",
          "pkg/npu.py": "import torch_npu\n"}, "imports torch_npu (pkg/npu.py:1)"),
    ],
)
def test_programs_that_always_import_the_ascend_stack(tmp_path, program, reason):
    entry = next(iter(program))
    engine, plans = _plans(tmp_path, {"train.sh": f"torchrun --nproc_per_node 2 {entry} --output_dir out\n", **program})
    found = launch_target(plans[0], engine.settings)
    assert found is not None and reason in found.reason


@pytest.mark.parametrize(
    "source",
    [
        "import torch\ntry:\n    import torch_npu\nexcept ImportError:\n    torch_npu = None\n",
        "from transformers.utils import is_torch_npu_available\nif is_torch_npu_available():\n    import torch_npu\n",
        "def device():\n    import torch_npu\n    return torch_npu.npu.current_device()\n",
    ],
    ids=["try", "if", "function"],
)
def test_an_optional_torch_npu_import_is_no_evidence(tmp_path, source):
    engine, plans = _plans(tmp_path, {"train.sh": "torchrun --nproc_per_node 2 train.py --output_dir out\n", "train.py": source})
    assert launch_target(plans[0], engine.settings) is None


def test_mindspeed_on_pythonpath(tmp_path):
    script = ("export MEGATRON_LM_PATH=/work/Megatron-LM\nexport PYTHONPATH=$PYTHONPATH:/work/MindSpeed:$MEGATRON_LM_PATH\n"
              "NPROC_PER_NODE=8 megatron sft --model Qwen/Qwen3-8B\n")
    engine, plans = _plans(tmp_path, {"train.sh": script})
    found = launch_target(plans[0], engine.settings)
    assert found is not None and "MindSpeed on PYTHONPATH at train.sh:2" in found.reason


def test_ascend_folder_and_npu_file_names(tmp_path):
    engine, plans = _plans(tmp_path, {"examples/ascend/sft.yaml": "model_name_or_path: m\nstage: sft\ndo_train: true\nfinetuning_type: lora\n"})
    assert "under an 'ascend' folder" in launch_target(plans[0], engine.settings).reason
    engine, plans = _plans(tmp_path / "b", {"qwen3_lora_sft_bnb_npu.yaml": "model_name_or_path: m\nstage: sft\ndo_train: true\nfinetuning_type: lora\n"})
    assert "'npu' is a word of the file name" in launch_target(plans[0], engine.settings).reason
    engine, plans = _plans(tmp_path / "c", {"input_npuzzle.yaml": "model_name_or_path: m\nstage: sft\ndo_train: true\nfinetuning_type: lora\n"})
    assert launch_target(plans[0], engine.settings) is None


def test_the_setting_decides(tmp_path):
    script = {"train.sh": "export ASCEND_RT_VISIBLE_DEVICES=0,1\ntorchrun --nproc_per_node 2 train.py\n"}
    settings = Settings(select=["DS5"], root=tmp_path)
    settings.target = Setting("gpu", "target in dslint.toml")
    engine, plans = _plans(tmp_path, script, settings)
    found = launch_target(plans[0], engine.settings)
    assert found is not None and not found.npu and found.setting
    settings = Settings(select=["DS5"], root=tmp_path)
    settings.hardware = Setting("ascend-910b", "hardware in dslint.toml")
    engine, plans = _plans(tmp_path / "b", {"train.sh": "torchrun --nproc_per_node 2 train.py\n"}, settings)
    assert launch_target(plans[0], engine.settings).npu


def test_hardware_from_one_comment(tmp_path):
    engine, plans = _plans(tmp_path, {"train.sh": "# Env: 8 * V100\ntorchrun --nproc_per_node 8 train.py\n"})
    found = hardware(plans[0], engine.settings)
    assert found is not None and found.name == "v100" and "train.sh:1" in found.origin
    engine, plans = _plans(tmp_path / "b", {"train.sh": "# A100 or V100\ntorchrun --nproc_per_node 8 train.py\n"})
    assert hardware(plans[0], engine.settings) is None  # two kinds: ambiguous
    settings = Settings(select=["DS5"], root=tmp_path)
    settings.hardware = Setting("h100", "hardware in dslint.toml")
    engine, plans = _plans(tmp_path / "c", {"train.sh": "# Env: 8 * V100\ntorchrun --nproc_per_node 8 train.py\n"}, settings)
    assert hardware(plans[0], engine.settings).name == "h100"


def test_target_option(tmp_path):
    (tmp_path / "train.sh").write_text("export CUDA_VISIBLE_DEVICES=0,1\ntorchrun --nproc_per_node 2 train.py --output_dir out\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}

    def run(*args):
        proc = subprocess.run([sys.executable, "-m", "dslint", "check", "--no-config", "--format", "json", "--select", "DS501", *args, "."],
                              cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
        return json.loads(proc.stdout)["diagnostics"]

    assert run() == []
    found = run("--target", "npu")
    assert [d["code"] for d in found] == ["DS501"]
    assert any("--target on the command line" in r["message"] for r in found[0]["related"])
    bad = subprocess.run([sys.executable, "-m", "dslint", "check", "--target", "tpu", "."], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 2


@pytest.mark.parametrize(
    "entry",
    [
        "try:\n    from npu_setup import init\nexcept ImportError:\n    init = None\n",
        "import os\nif os.environ.get('DEVICE') == 'npu':\n    import npu_setup\n",
        "import helpers\n",  # helpers imports npu_setup only under try
    ],
    ids=["try", "if", "two-levels"],
)
def test_a_module_imported_optionally_is_no_evidence_of_what_it_imports(tmp_path, entry):
    """A project module that imports torch_npu unconditionally counts only when every run of the
    entry imports it: one imported under try or if may be absent (a GPU run skips it)."""
    files = {"train.sh": "torchrun --nproc_per_node 2 train.py --output_dir out\n", "train.py": entry,
             "npu_setup.py": "import torch_npu\ninit = torch_npu.npu.set_device\n",
             "helpers.py": "try:\n    import npu_setup\nexcept ImportError:\n    pass\n"}
    engine, plans = _plans(tmp_path, files)
    assert launch_target(plans[0], engine.settings) is None


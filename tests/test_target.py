"""Target detection (dslint/launch/target.py): which launches run on Ascend NPU, and why, from
strong evidence only (never a comment, a folder or a file name), branch by branch in a script that
serves both; hardware from the settings alone; and the `--target` option of `dslint check`."""

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
    engine, result = _lint(tmp_path, files, settings)
    return engine, [p for p in result.plans if p.launcher != "yaml"] or result.plans


def _lint(tmp_path: Path, files: dict[str, str], settings: Settings | None = None):
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
    return engine, result


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
        # evidence outside a switch holds for the launches inside it
        ("export ASCEND_RT_VISIBLE_DEVICES=0,1\nif [ -n \"$RESUME\" ]; then\n  swift sft --model m --resume_from_checkpoint c\nfi\n",
         "ASCEND_RT_VISIBLE_DEVICES is set at train.sh:1"),
        # `cd dir && launch`: the launch is the right side of &&, the evidence before it
        ("source /usr/local/Ascend/ascend-toolkit/set_env.sh\ncd work && swift sft --model m\n", "set_env.sh at train.sh:1"),
        # set in a function the script calls before the launch
        ("setup() {\n  export ASCEND_RT_VISIBLE_DEVICES=0,1\n}\nsetup\nswift sft --model m\n", "ASCEND_RT_VISIBLE_DEVICES is set at train.sh:4"),
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
        # what people write is no evidence of the machine
        "# 16 * 64GiB Ascend A3\nNPROC_PER_NODE=16 megatron sft --model m\n",
        "# same recipe as our Ascend run, but on H100s\nexport CUDA_VISIBLE_DEVICES=0,1\ntorchrun --nproc_per_node 2 train.py\n",
        # a test of the machine, which may fail, is no evidence that it is an NPU
        "if npu-smi info > /dev/null 2>&1; then\n  echo npu\nfi\ntorchrun --nproc_per_node 2 train.py\n",
        "[ -f /usr/local/Ascend/ascend-toolkit/set_env.sh ] && source /usr/local/Ascend/ascend-toolkit/set_env.sh\n"
        "torchrun --nproc_per_node 2 train.py\n",
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


@pytest.mark.parametrize(
    "files",
    [
        {"npu.sh": "export CUDA_VISIBLE_DEVICES=0,1\nNPROC_PER_NODE=2 swift sft --model m --use_liger_kernel true\n"},
        {"ascend/train.sh": "export CUDA_VISIBLE_DEVICES=0,1\nNPROC_PER_NODE=2 swift sft --model m --use_liger_kernel true\n"},
        {"examples/ascend/sft.yaml": "model_name_or_path: m\nstage: sft\ndo_train: true\nfinetuning_type: lora\nquantization_bit: 8\n"},
        {"qwen3_lora_sft_bnb_npu.yaml": "model_name_or_path: m\nstage: sft\ndo_train: true\nfinetuning_type: lora\nquantization_bit: 8\n"},
    ],
    ids=["npu.sh", "ascend-folder-script", "ascend-folder-yaml", "npu-file-name"],
)
def test_folders_and_file_names_are_no_evidence(tmp_path, files):
    """A GPU recipe copied next to the NPU one keeps its name and folder: no NPU verdict, so no
    NPU finding and no fix (the same launches with an Ascend variable are NPU: test_script_signals)."""
    engine, result = _lint(tmp_path, files)
    plans = [p for p in result.plans if p.launcher != "yaml"] or result.plans
    assert launch_target(plans[0], engine.settings) is None
    assert [d.code for d in result.diagnostics if d.code.startswith("DS5")] == []


def test_a_comment_is_no_evidence_and_gives_no_fix(tmp_path):
    script = ("# first run on 8 * Atlas 800T A2; this copy is for the GPU cluster\nexport CUDA_VISIBLE_DEVICES=0,1\n"
              "NPROC_PER_NODE=2 swift sft --model m --use_liger_kernel true\n")
    engine, result = _lint(tmp_path, {"train.sh": script})
    assert [(d.code, d.fix) for d in result.diagnostics if d.code.startswith("DS5")] == []
    # the same script with the Ascend variable it lacked is NPU: the rules are live
    engine, result = _lint(tmp_path / "b", {"train.sh": script.replace("CUDA_VISIBLE", "ASCEND_RT_VISIBLE")})
    assert "DS510" in [d.code for d in result.diagnostics]


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


def test_hardware_from_the_setting_only(tmp_path):
    """A comment (`# Env: 8 * V100`) says what someone once ran the script on, not what it runs on."""
    engine, plans = _plans(tmp_path, {"train.sh": "# Env: 8 * V100\ntorchrun --nproc_per_node 8 train.py\n"})
    assert hardware(plans[0], engine.settings) is None
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



# ---- a script that serves both: each branch of an if/case has its own target ------------------------

LAUNCH = "NPROC_PER_NODE=2 swift sft --model m --use_liger_kernel true"


@pytest.mark.parametrize(
    "script",
    [
        f'if [ "$DEVICE" = npu ]; then\n  export ASCEND_RT_VISIBLE_DEVICES=0,1\n  {LAUNCH}\nelse\n  export CUDA_VISIBLE_DEVICES=0,1\n  {LAUNCH}\nfi\n',
        f'if [ "$DEVICE" = npu ]; then\n  source /usr/local/Ascend/ascend-toolkit/set_env.sh\n  {LAUNCH}\nelif [ "$DEVICE" = cuda ]; then\n  {LAUNCH}\nfi\n',
        f'case "$DEVICE" in\n  npu)\n    source /usr/local/Ascend/ascend-toolkit/set_env.sh\n    {LAUNCH}\n    ;;\n  *)\n    {LAUNCH}\n    ;;\nesac\n',
        # functions run where they are called: the NPU one from the NPU branch only
        f'run_npu() {{\n  export ASCEND_RT_VISIBLE_DEVICES=0,1\n  {LAUNCH}\n}}\nrun_gpu() {{\n  {LAUNCH}\n}}\n'
        'if [ "$DEVICE" = npu ]; then run_npu; else run_gpu; fi\n',
    ],
    ids=["if-else", "elif", "case", "functions"],
)
def test_the_npu_verdict_of_one_branch_is_not_applied_to_the_gpu_branch(tmp_path, script):
    engine, result = _lint(tmp_path, {"train.sh": script})
    npu, gpu = sorted(result.plans, key=lambda p: p.span.start)
    found = launch_target(npu, engine.settings)
    assert found is not None and found.npu and "train.sh:" in found.reason
    assert launch_target(gpu, engine.settings) is None
    npu_line = npu.span.source.position(npu.span.start)[0]
    assert {(d.code, d.span.source.position(d.span.start)[0]) for d in result.diagnostics if d.code == "DS510"} == {("DS510", npu_line)}


@pytest.mark.parametrize(
    "script,npu",
    [
        # the branches disagree: a launch after the switch has no NPU verdict
        ('if [ "$DEVICE" = npu ]; then\n  source /usr/local/Ascend/ascend-toolkit/set_env.sh\nfi\n' + LAUNCH + "\n", False),
        ('case "$DEVICE" in\n  npu) export ASCEND_RT_VISIBLE_DEVICES=0,1 ;;\n  cuda) export CUDA_VISIBLE_DEVICES=0,1 ;;\nesac\n' + LAUNCH + "\n", False),
        # every branch shows Ascend, each its own way: every run reaches the launch on an NPU
        ('if [ -n "$CANN" ]; then\n  source "$CANN"/../Ascend/ascend-toolkit/set_env.sh\nelse\n  export ASCEND_RT_VISIBLE_DEVICES=0,1\nfi\n'
         + LAUNCH + "\n", True),
    ],
    ids=["if-without-else", "case-without-default", "every-branch"],
)
def test_a_launch_after_a_switch(tmp_path, script, npu):
    engine, plans = _plans(tmp_path, {"train.sh": script})
    found = launch_target(plans[-1], engine.settings)
    assert (found is not None and found.npu) is npu


def test_an_npu_fix_does_not_edit_what_the_gpu_branch_runs(tmp_path):
    """The variable exported before the switch serves the GPU launch too: DS501 still says it has no
    effect on the NPU launch, but renaming it would change the GPU launch, so no fix."""
    script = ('export CUDA_VISIBLE_DEVICES=0,1\nif [ "$DEVICE" = npu ]; then\n  source /usr/local/Ascend/ascend-toolkit/set_env.sh\n'
              f'  {LAUNCH}\nelse\n  {LAUNCH}\nfi\n')
    engine, result = _lint(tmp_path, {"train.sh": script})
    found = [d for d in result.diagnostics if d.code == "DS501"]
    assert len(found) == 1 and found[0].fix is None and "ASCEND_RT_VISIBLE_DEVICES" in found[0].help
    moved = script.replace("export CUDA_VISIBLE_DEVICES=0,1\n", "").replace("set_env.sh\n", "set_env.sh\n  export CUDA_VISIBLE_DEVICES=0,1\n")
    engine, result = _lint(tmp_path / "b", {"train.sh": moved})
    (diagnostic,) = [d for d in result.diagnostics if d.code == "DS501"]
    assert diagnostic.fix is not None  # set in the NPU branch: renamed there alone

"""The real-world corpus (../shared/corpus: 705 configs and 1,355 launch scripts from 23 public repositories).

No exceptions, no internal errors, every file classified as its manifest says, and every error
dslint reports is one that was checked by hand to be a true error (``TRUE_ERRORS``). A new
error on the corpus is either a false positive to fix, or a true one to add here after reading
the file. One in-process run, shared by the tests.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from dslint.config import Settings
from dslint.run.engine import Engine, RunResult
from dslint.fix.apply import fix_paths
from dslint.report import ReportOptions, render

# Checked by hand: DeepSpeed/Megatron-DeepSpeed launch scripts fill these templates in with sed
# before launch and pass DeepSpeed the copy; as committed, their values are hjson quoteless
# placeholders (`"train_batch_size": GBSIZE,`, `"stage": ZERO_STAGE`, `"enabled": CONFIG_FP16_ENABLED`,
# `"stage": ${zero_stage},`). No launch names them, so the value rules (DS102, DS210, DS212, ...)
# say nothing about the placeholders (tests/rules/DS102.yaml has the launched case, still an error).
TEMPLATES = [
    "deepspeedai__DeepSpeedExamples/compression/bert/config/ds_config_TEMPLATE.json",
    "deepspeedai__DeepSpeedExamples/compression/bert/config/ds_config_structural_pruning_TEMPLATE.json",
    "deepspeedai__DeepSpeedExamples/training/data_efficiency/gpt_finetuning/finetune/ds_config_gpt2-medium_1clmetric_TEMPLATE.json",
    "deepspeedai__DeepSpeedExamples/training/data_efficiency/gpt_finetuning/finetune/ds_config_gpt2-medium_2clmetrics_TEMPLATE.json",
    "deepspeedai__DeepSpeedExamples/training/data_efficiency/gpt_finetuning/finetune/ds_config_gpt2_TEMPLATE.json",
    "deepspeedai__DeepSpeedExamples/training/tensor_parallel/hf_integration/configs/ds_config_temp.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/MoE/ds_config_gpt_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/MoE/ds_config_gpt_Zero2_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/bert_with_pile/ds_config_bert_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/compression/ds_config_gpt_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/compression/ds_config_gpt_TEMPLATE_compression.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/curriculum_learning/ds_config_gpt_slw_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/data_efficiency/bert/finetune/ds_config_bert_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/data_efficiency/bert/finetune_glue/ds_config_bert_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/data_efficiency/bert/pretrain/ds_config_bert_1clmetric_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/data_efficiency/bert/pretrain/ds_config_bert_2clmetrics_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/data_efficiency/gpt/pretrain/ds_config_gpt_1clmetric_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/data_efficiency/gpt/pretrain/ds_config_gpt_2clmetrics_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/deepspeed4science/megatron_long_seq_support/ds_config_gpt_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/offload_pp/ds_config_gpt_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/rebase/ds_config_gpt_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/rebase/ds_config_gpt_slw_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/sequence_parallel/ds_config_gpt_TEMPLATE.json",
]

# Version-dependent, and the corpus pins no DeepSpeed: these are info that names the releases that
# fail, no longer errors (dslint/evidence/versions.py judges every release it knows, 0.9.0-0.19.8).
# Checked by hand: `compile` is strict in DeepSpeed 0.13.2-0.14.3 and again from 0.16.6 (CompileConfig,
# extra="forbid"; deepspeed/compile/config.py), and not read in 0.14.4-0.16.5; axolotl's `"disable"`
# and `"backend"` are not among its fields.
DS201_PATHS = [
    "axolotl-ai-cloud__axolotl/deepspeed_configs/zero1_torch_compile.json",
    "axolotl-ai-cloud__axolotl/deepspeed_configs/zero2_torch_compile.json",
]

# Checked by hand against DeepSpeed 0.19.8: config.py raises DeepSpeedConfigError for any presence of
# the removed top-level keys these files carry (amp, compression_training, curriculum_learning,
# eigenvalue, quantize_training, progressive_layer_drop, sparse_attention); releases before 0.19.7
# (0.19.8 for most of them) still run those features, so without a pin these are info.
DS203_PATHS = [
    "OpenGVLab__InternVL/segmentation/zero_configs/adam_zero1_amp.json",
    "bigscience-workshop__Megatron-DeepSpeed/examples/curriculum_learning/ds_config_cl.json",
    "bigscience-workshop__Megatron-DeepSpeed/tests/ds_config_cl.json",
    "deepspeedai__DeepSpeed/tests/model/BingBertSquad/deepspeed_bsz24_fp16_eigenvalue_quantize_config.json",
    "deepspeedai__DeepSpeedExamples/compression/bert/config/XTC/ds_config_W1A8_Qgroup1_fp32.json",
    "deepspeedai__DeepSpeedExamples/compression/bert/config/XTC/ds_config_layer_reduction_W1Q8_fp32.json",
    "deepspeedai__DeepSpeedExamples/compression/bert/config/XTC/ds_config_layer_reduction_fp16.json",
    "deepspeedai__DeepSpeedExamples/compression/bert/config/ZeroQuant/ds_config_W48A8_Qgroup48_lkd_fp32.json",
    "deepspeedai__DeepSpeedExamples/compression/bert/config/ZeroQuant/ds_config_W8A8_Qgroup48_fp32.json",
    "deepspeedai__DeepSpeedExamples/compression/bert/config/ds_config.json",
    "deepspeedai__DeepSpeedExamples/compression/bert/config/ds_config_TEMPLATE.json",
    "deepspeedai__DeepSpeedExamples/compression/bert/config/ds_config_W1A8_Qgroup64_fp16.json",
    "deepspeedai__DeepSpeedExamples/compression/bert/config/ds_config_W1A8_Qgroup64_fp32.json",
    "deepspeedai__DeepSpeedExamples/compression/bert/config/ds_config_W1or2A8_Qgroup64_fp16.json",
    "deepspeedai__DeepSpeedExamples/compression/bert/config/ds_config_structural_pruning_TEMPLATE.json",
    "deepspeedai__DeepSpeedExamples/compression/cifar/config/ds_config_channel_prune.json",
    "deepspeedai__DeepSpeedExamples/compression/gpt2/config/ds_config_W4or8A8_Qgroup64_fp16.json",
    "deepspeedai__DeepSpeedExamples/compression/gpt2/config/ds_config_W4or8A8_Qgroup64_fp32.json",
    "deepspeedai__DeepSpeedExamples/compression/gpt2/config/ds_config_W8A8_Qgroup64_fp16.json",
    "deepspeedai__DeepSpeedExamples/compression/gpt2/config/ds_config_W8A8_Qgroup64_fp32.json",
    "deepspeedai__DeepSpeedExamples/training/MoQ/test.json",
    "deepspeedai__DeepSpeedExamples/training/bing_bert/deepspeed_bsz4k_progressive_layer_drop_config_seq128.json",
    "deepspeedai__DeepSpeedExamples/training/bing_bert/deepspeed_bsz64k_lamb_config_seq128.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/MoE/ds_config_gpt_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/MoE/ds_config_gpt_Zero2_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/compression/ds_config_gpt_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/compression/ds_config_gpt_TEMPLATE_compression.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/curriculum_learning/ds_config_gpt_slw_TEMPLATE.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/curriculum_learning/ds_zero_stage_1_config_curriculum_fixed_linear.json",
    "deepspeedai__Megatron-DeepSpeed/examples_deepspeed/rebase/ds_config_gpt_slw_TEMPLATE.json",
]

# Not errors (checked by hand): axolotl's zero2.json and LLaMA-Factory's ds_z3_fp8_config.json offload
# the optimizer to the CPU with no DeepSpeed `optimizer` block, under HF Trainer. accelerate 1.15
# replaces the Trainer's torch optimizer with DeepSpeedCPUAdam when it sees
# zero_optimization.offload_optimizer (accelerator.py _prepare_deepspeed, map_pytorch_optim_to_deepspeed),
# so DeepSpeed's ZeRORuntimeException (engine.py:2342-2346) is not reached; DS230 stays silent there.
DS230_PATHS: list[str] = []

# Not errors for a config no launch reaches (checked by hand): `max_grad_norm` among the optimizer
# params (Megatron-DeepSpeed curriculum configs) and the 1-bit optimizers removed in 0.19.7
# (OneBitAdam/ZeroOneAdam/OneBitLamb in DeepSpeedExamples and InternVL) raise only when DeepSpeed
# builds the optimizer from the config (engine.py:2016-2019, 2481-2484); Megatron-DeepSpeed always
# passes its own optimizer (megatron/training.py setup_model_and_optimizer), so without a launch
# DS237/DS238 are warnings. They become errors once a deepspeed or HF launch reaches the config (for
# DS238, and a pin that rules out the releases before 0.19.7: with nothing pinned it is info).
DS237_PATHS: list[str] = []
DS238_PATHS: list[str] = []

# Launch scripts (checked by hand, each with `bash -n` and by reading it): bash 5.2 rejects these.
# Megatron-DeepSpeed's examples leave `<placeholder>` values unquoted (`CHECKPOINT_PATH=<Specify path>`,
# `--references=<PATH_...>`): bash reads `<` and `>` as redirections and stops at the line (the
# differential test in tests/test_bash_oracle.py compares every corpus script's line and message
# with bash); accelerate's submit_multicpu.sh never closes a double quote (line 61).
DS001_SCRIPTS = [
    "bigscience-workshop__Megatron-DeepSpeed/examples/evaluate_zeroshot_gpt.sh",
    "bigscience-workshop__Megatron-DeepSpeed/examples/pretrain_bert_distributed.sh",
    "bigscience-workshop__Megatron-DeepSpeed/examples/pretrain_bert_distributed_with_mp.sh",
    "bigscience-workshop__Megatron-DeepSpeed/examples/pretrain_gpt.sh",
    "bigscience-workshop__Megatron-DeepSpeed/examples/pretrain_gpt_distributed.sh",
    "bigscience-workshop__Megatron-DeepSpeed/examples/pretrain_gpt_distributed_with_mp.sh",
    "bigscience-workshop__Megatron-DeepSpeed/examples/pretrain_gpt_multilingual.sh",
    "bigscience-workshop__Megatron-DeepSpeed/examples/pretrain_t5_distributed.sh",
    "bigscience-workshop__Megatron-DeepSpeed/examples/pretrain_t5_distributed_with_mp.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/evaluate_zeroshot_gpt.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/finetune_retriever_distributed.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/msdp/eval_knwl_generation.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/msdp/eval_resp_generation.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/msdp/prompt_knwl_gen.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/msdp/prompt_resp_gen.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/pretrain_bert.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/pretrain_bert_distributed.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/pretrain_bert_distributed_with_mp.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/pretrain_gpt.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/pretrain_gpt_distributed.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/pretrain_gpt_distributed_with_mp.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/pretrain_t5.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/pretrain_t5_distributed.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/pretrain_t5_distributed_with_mp.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/run_text_generation_server_345M.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/run_text_generation_server_345M_8_tensor_parallel.sh",
    "huggingface__accelerate/examples/slurm/submit_multicpu.sh",
    "modelscope__ms-swift/examples/ascend/train/qwen3_5/qwen3_5_full_grpo_megatron.sh",
    "modelscope__ms-swift/examples/ascend/train/qwen3_5/qwen3_5_lora_grpo_megatron.sh",
    "modelscope__ms-swift/examples/train/grpo/multi_node/server_multi_node.sh",
]

# Checked by hand: a space or tab after the line-ending `\` (the `<PATH_...> \ ` lines of the msdp
# examples), so bash ends the command there and runs the next line on its own.
DS603_SCRIPTS = [
    "deepspeedai__Megatron-DeepSpeed/examples/msdp/eval_knwl_generation.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/msdp/eval_resp_generation.sh",
    "deepspeedai__Megatron-DeepSpeed/examples/msdp/prompt_knwl_gen.sh",
]

# Checked by hand: a blank line after `--recompute-activation-function-num-layers 1 \` (line 78)
# ends the command; `--tensor-model-parallel-size ${TP}` and the lines after it run as a command.
DS601_SCRIPTS = ["Ascend__MindSpeed-LLM/tests/pipeline/legacy/mixtral/mixtral_mcore_tp4_cp2_ep2_ptd.sh"]

# Checked by hand: CRLF line endings (`file` says so); bash keeps each `\r` in the last word of a line.
DS604_SCRIPTS = ["deepspeedai__DeepSpeedExamples/training/gan/gan_deepspeed_run.sh"]

# Checked by hand: run.sh launches run_glue.py (HF Trainer's GLUE example) with `--deepspeed test.json`;
# test.json has no batch key, HF fills only "auto" values, and DeepSpeedConfig asserts "Either
# train_batch_size or train_micro_batch_size_per_gpu needs to be provided".
DS101_PATHS = ["deepspeedai__DeepSpeedExamples/training/MoQ/test.json"]

# Checked by hand: the example leaves `--num_labels '<num-labels>'` for the user to fill in; ms-swift 3.x
# and 4.x parse num_labels as Optional[int] and argparse exits with "invalid int value" (ms-swift 2.x
# has no --num_labels at all and stops on the leftover argument).
DS702_SCRIPTS = ["modelscope__ms-swift/examples/train/seq_cls/multi_label/sft.sh"]

# Checked by hand: MindSpeed-LLM multi-node templates that hard-code `MASTER_ADDR=localhost` with
# `NNODES` 2, 48 or 64 and take the node rank from the caller (`NODE_RANK=${NODE_RANK:-0}`,
# `NODE_RANK=${1:-0}`), so one script runs on every node with the same device setting. Every node
# but rank 0 then connects to its own loopback, where torchrun's static rendezvous has no store
# (static_tcp_rendezvous.py:62-78), and the job hangs: the address must be edited to rank 0's.
DS315_SCRIPTS = [
    "Ascend__MindSpeed-LLM/examples/mcore/qwen3_moe/tune_qwen3_30b_a3b_32K_full_pack_A3_ptd.sh",
    "Ascend__MindSpeed-LLM/tests/poc/kimi2/pretrain_kimi_k2_1024die_4k_A3_ptd.sh",
    "Ascend__MindSpeed-LLM/tests/poc/kimi2/pretrain_kimi_k2_768die_4k_A3_ptd.sh",
]

# Checked by hand: the example's base_model is mistralai/Mixtral-8x7B-v0.1, whose modeling code (every
# transformers generation) builds MixtralDecoderLayer, not MistralDecoderLayer; accelerate's auto-wrap
# policy raises "Could not find the transformer layer class MistralDecoderLayer in the model".
DS714_PATHS = ["axolotl-ai-cloud__axolotl/examples/mistral/mistral-qlora-fsdp.yml"]

TRUE_ERRORS = (
    {("DS714", path) for path in DS714_PATHS}
    | {("DS101", path) for path in DS101_PATHS}
    | {("DS702", path) for path in DS702_SCRIPTS}
    | {("DS230", path) for path in DS230_PATHS}
    | {("DS237", path) for path in DS237_PATHS}
    | {("DS238", path) for path in DS238_PATHS}
    | {("DS001", path) for path in DS001_SCRIPTS}
    | {("DS603", path) for path in DS603_SCRIPTS}
    | {("DS601", path) for path in DS601_SCRIPTS}
    | {("DS604", path) for path in DS604_SCRIPTS}
    | {("DS315", path) for path in DS315_SCRIPTS}
)

# True on some DeepSpeed releases and not on others, with nothing pinned: info naming the releases.
VERSION_DEPENDENT = (
    {("DS201", path) for path in DS201_PATHS}
    | {("DS203", path) for path in DS203_PATHS}
)

MANIFEST_KINDS = {"ds_json": "deepspeed-json", "train_yaml": "training-yaml", "accelerate_yaml": "accelerate-yaml", "launch_sh": "launch-script"}


_RUNS: dict[Path, tuple[Engine, RunResult]] = {}


@pytest.fixture
def corpus_run(corpus: Path) -> tuple[Path, Engine, RunResult]:
    """One lint of the whole corpus (from its directory, as a user would run it), shared by the tests."""
    if corpus not in _RUNS:
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(corpus)
            engine = Engine(Settings(root=corpus))
            _RUNS[corpus] = (engine, engine.lint_paths(["."]))
    return (corpus, *_RUNS[corpus])


def test_no_internal_errors(corpus_run):
    _, _, result = corpus_run
    assert result.internal_errors == []
    assert result.plugin_errors == []
    assert result.files >= 700


def test_every_error_is_a_checked_true_error(corpus_run):
    _, _, result = corpus_run
    errors = {(d.code, d.path) for d in result.diagnostics if d.severity.label == "error"}
    unexpected = sorted(errors - TRUE_ERRORS)
    assert not unexpected, "errors not checked by hand: " + "; ".join(
        f"{d.path}:{d.span.source.position(d.span.start)[0]} {d.code} {d.message}" for d in result.diagnostics if (d.code, d.path) in unexpected
    )


def test_template_placeholders_are_not_judged(corpus_run):
    """A template no launch names is filled in before use: no value rule speaks of its placeholders."""
    from dslint.rules._deepspeed import is_placeholder_text

    _, _, result = corpus_run
    on_placeholders = [f"{d.path}:{d.span.source.position(d.span.start)[0]} {d.code} {d.message}" for d in result.diagnostics
                       if d.path in TEMPLATES and is_placeholder_text(d.span.text)]
    assert on_placeholders == []
    assert set(TEMPLATES) <= {doc.path for doc in result.documents if doc.mapping is not None}, "every template was read"


def test_version_dependent_findings_are_not_reported_without_a_pin(corpus_run):
    """The corpus pins no DeepSpeed: a finding true only on some releases has no evidence that the
    launch meets it, so it is not reported (these keys fail only in some releases)."""
    _, _, result = corpus_run
    found = {(d.code, d.path) for d in result.diagnostics if (d.code, d.path) in VERSION_DEPENDENT}
    assert found == set()


def test_headlines_fit_a_terminal_line(corpus_run, request):
    """The median headline is at most 100 characters and the 95th percentile at most 160 (issue 13)."""
    from headlines import MEDIAN_TARGET, P95_TARGET, figures, line, record

    _, _, result = corpus_run
    messages = [d.message for d in result.diagnostics]
    record(request.config, "corpus", messages)
    numbers = figures(messages)
    longest = sorted(result.diagnostics, key=lambda d: -len(d.message))[:5]
    assert numbers["median"] <= MEDIAN_TARGET and numbers["p95"] <= P95_TARGET, "\n".join(
        [line("corpus", numbers), *(f"{len(d.message)} {d.code} {d.message}" for d in longest)]
    )


def test_files_are_classified_as_the_manifest_says(corpus_run):
    corpus, _, result = corpus_run
    # a config a script writes is a document of the script's text, not a file of its own
    kinds = {doc.path: doc.kind for doc in result.documents if doc.source.origin is None}
    with open(corpus / "MANIFEST.tsv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    wrong = []
    for row in rows:
        expected = MANIFEST_KINDS.get(row["kind"])
        path = f"{row['repo'].replace('/', '__')}/{row['path']}"
        if expected is not None and kinds.get(path) != expected:
            wrong.append((path, row["kind"], kinds.get(path, "skipped")))
    assert wrong == []


def test_reports_render(corpus_run):
    _, _, result = corpus_run
    payload = json.loads(render("json", result, ReportOptions()))
    assert payload["summary"]["files"] == result.files
    assert len(payload["diagnostics"]) == len(result.diagnostics)
    text = render("text", result, ReportOptions())
    assert text.endswith(".\n")


def test_fixes_apply_in_memory(corpus_run):
    """Every fix, unsafe ones included, applies and re-parses; nothing is written."""
    corpus, engine, before = corpus_run
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(corpus)
        outcome = fix_paths(lambda overrides: engine.lint_paths(["."], overrides), unsafe=True, write=False)
    assert outcome.converged
    assert outcome.result.internal_errors == []
    broken_before = {d.path for d in before.diagnostics if d.code == "DS001"}
    broken_after = {d.path for d in outcome.result.diagnostics if d.code == "DS001"}
    assert broken_after <= broken_before

"""The memory estimator (dslint/explain/memory.py) and the model table (dslint/evidence/models.py).

Hand-computed cases from the formulas run everywhere; the oracle tests compare the model
states with DeepSpeed's own estimators (``estimate_zero2_model_states_mem_needs``,
``estimate_zero3_model_states_mem_needs`` and their ``_all_cold`` printers) when deepspeed is
installed.
"""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dslint.explain.memory import (
    GiB,
    ActivationInputs,
    MemoryInputs,
    ZeroSetup,
    activation_terms,
    estimate,
    hardware_memory,
    layer_activation_bytes,
    parse_size,
    zero_model_states,
)
from dslint.evidence.models import count_params, format_count, from_hf_config, known_models, parse_count, read_local_config, recognise

P = 7_000_000_000


def _terms(result, place="device"):
    return {t.key: t for t in result.terms if t.place == place}


# ---- model states by stage, by hand -------------------------------------------------------------


@pytest.mark.parametrize(
    "stage,expected",
    [
        (0, 2 * P + 2 * P + 16 * P),  # nothing partitioned
        (1, 2 * P + 2 * P + 16 * P / 8),  # optimizer states partitioned
        (2, 2 * P + 18 * P / 8),  # + 16-bit gradients (DeepSpeed: 2P + 18P/N)
        (3, 18 * P / 8 + 4 * 500_000_000),  # + weights; largest layer gathered (DeepSpeed: 18P/N + 4L)
    ],
)
def test_model_states_by_stage(stage, expected):
    result = estimate(MemoryInputs(params=P, dp=8, largest_layer=(500_000_000, 500_000_000), zero=ZeroSetup(stage=stage)))
    assert result.model_states() == pytest.approx(expected)


def test_optimizer_offload_moves_the_fp32_states_off_the_device():
    result = estimate(MemoryInputs(params=P, dp=8, procs_per_node=8, zero=ZeroSetup(stage=2, offload_optimizer="cpu")))
    assert result.model_states() == pytest.approx(2 * P)
    moved = {t.key for t in result.terms if t.place == "moved"}
    assert moved == {"fp32_gradients", "master_weights", "optimizer_states"}
    # CPU per node: max(each process loading fp32 weights, the node's offloaded states) × 1.5
    assert result.cpu_high == pytest.approx(max(4 * P * 8, 16 * P / 8 * 8) * 1.5)


def test_zero3_parameter_offload_keeps_only_the_gathered_layer():
    result = estimate(MemoryInputs(params=P, dp=16, procs_per_node=8, largest_layer=(4e8, 4e8), zero=ZeroSetup(stage=3, offload_optimizer="cpu", offload_param="cpu")))
    assert result.model_states() == pytest.approx(4 * 4e8)
    assert result.cpu_high == pytest.approx(18 * P / 16 * 8 * 1.5)  # DeepSpeed: 18·P/nodes·1.5


def test_nvme_offload_counts_on_nvme_not_cpu():
    result = estimate(MemoryInputs(params=P, dp=8, procs_per_node=8, largest_layer=(4e8, 4e8), zero=ZeroSetup(stage=3, offload_optimizer="nvme", offload_param="nvme")))
    assert result.nvme_high == pytest.approx(18 * P / 8 * 8)
    assert any(t.key == "nvme_buffers" for t in result.terms)


def test_zero3_buffers_beyond_deepspeeds_estimator():
    setup = ZeroSetup(stage=3, reduce_bucket_size=1e8, max_live_parameters=1e9, prefetch_bucket_size=5e7)
    result = estimate(MemoryInputs(params=P, dp=8, largest_layer=(4e8, 4e8), zero=setup))
    terms = _terms(result)
    assert terms["reduce_bucket"].high == 2 * 1e8
    assert terms["gradient_partition"].high == pytest.approx(2 * P / 8)
    assert (terms["live_parameters"].low, terms["live_parameters"].high) == (2 * 5e7, 2 * 1e9)
    assert result.device_high == pytest.approx(result.model_states() + 2e8 + 2 * P / 8 + 2e9)


def test_stage2_overlap_comm_doubles_the_reduce_bucket():
    one = _terms(estimate(MemoryInputs(params=P, dp=8, zero=ZeroSetup(stage=2, reduce_bucket_size=5e8, overlap_comm=False))))
    two = _terms(estimate(MemoryInputs(params=P, dp=8, zero=ZeroSetup(stage=2, reduce_bucket_size=5e8, overlap_comm=True))))
    assert one["reduce_bucket"].high == 1e9 and two["reduce_bucket"].high == 2e9


def test_lora_trains_a_small_adapter_on_frozen_weights():
    trainable = 20_000_000
    result = estimate(MemoryInputs(params=P, dp=4, trainable=(trainable, trainable), adapter=True, zero=ZeroSetup(stage=2)))
    terms = _terms(result)
    assert terms["weights"].high == 2 * P + 2 * trainable
    assert terms["optimizer_states"].high == 8 * trainable / 4


def test_qlora_base_weights_in_four_bits():
    result = estimate(MemoryInputs(params=P, dp=1, trainable=(1e7, 1e7), adapter=True, weight_bytes=0.5, zero=ZeroSetup(stage=0)))
    assert _terms(result)["weights"].high == pytest.approx(0.5 * P + 2 * 1e7)


def test_unknown_trainable_share_gives_a_range():
    result = estimate(MemoryInputs(params=P, dp=8, trainable=(0, P), zero=ZeroSetup(stage=2)))
    assert result.device_low < result.device_high
    terms = _terms(result)
    assert terms["weights"].low == terms["weights"].high == 2 * P  # frozen or trained, 16-bit weights
    assert (terms["optimizer_states"].low, terms["optimizer_states"].high) == (0, 8 * P / 8)


def test_megatron_distributed_optimizer():
    """Megatron-LM: 6 bytes (bf16 weight, fp32 grad) + 12/d (master, moments) per parameter."""
    dist = estimate(MemoryInputs(params=P, dp=4, zero=ZeroSetup(scheme="megatron", distributed_optimizer=True)))
    plain = estimate(MemoryInputs(params=P, dp=4, zero=ZeroSetup(scheme="megatron", distributed_optimizer=False)))
    unknown = estimate(MemoryInputs(params=P, dp=4, zero=ZeroSetup(scheme="megatron", distributed_optimizer=None)))
    assert dist.device_high == pytest.approx(6 * P + 12 * P / 4)
    assert plain.device_high == pytest.approx(18 * P)
    assert (unknown.device_low, unknown.device_high) == (pytest.approx(dist.device_high), pytest.approx(plain.device_high))


def test_tensor_and_pipeline_parallel_split_the_weights():
    result = estimate(MemoryInputs(params=P, dp=2, model_parallel=4, zero=ZeroSetup(stage=0)))
    assert result.model_states() == pytest.approx(20 * P / 4)


# ---- activations (Korthikanti et al. 2022) ---------------------------------------------------


def test_activation_formula_per_layer():
    s, b, h, a = 2048, 1, 12288, 96  # GPT-3 175B, the paper's running example
    assert layer_activation_bytes(s, b, h, a) == s * b * h * (34 + 5 * a * s / h)
    assert layer_activation_bytes(s, b, h, a, t=8) == s * b * h * (10 + 24 / 8 + 5 * a * s / (h * 8))
    assert layer_activation_bytes(s, b, h, a, t=8, sp=True) == s * b * h * (34 + 5 * a * s / h) / 8
    assert layer_activation_bytes(s, b, h, a, scores=False) == 34 * s * b * h


def test_full_recomputation_keeps_layer_inputs_plus_one_layer():
    act = ActivationInputs(seq_len=4096, micro_batch=2, hidden=4096, layers=32, heads=32, vocab=None, checkpointing=True, attention="eager")
    (term,) = activation_terms(act)
    s, b, h, a = 4096, 2, 4096, 32
    assert term.high == 32 * 2 * s * b * h + s * b * h * (34 + 5 * a * s / h)


def test_no_recomputation_with_flash_attention():
    act = ActivationInputs(seq_len=4096, micro_batch=1, hidden=4096, layers=32, heads=32, vocab=128256, checkpointing=False, attention="flash")
    terms = {t.key: t for t in activation_terms(act)}
    assert terms["activations"].high == 32 * 34 * 4096 * 4096
    assert terms["logits"].high == 4 * 4096 * 1 * 128256


def test_unknown_checkpointing_and_attention_give_a_range():
    act = ActivationInputs(seq_len=2048, micro_batch=1, hidden=2048, layers=24, heads=16)
    (term,) = activation_terms(act)
    s, h = 2048, 2048
    assert term.low == 24 * 2 * s * h + 34 * s * h
    assert term.high == 24 * s * h * (34 + 5 * 16 * s / h)


def test_context_parallel_splits_the_sequence():
    whole = activation_terms(ActivationInputs(seq_len=8192, micro_batch=1, hidden=4096, layers=32, heads=32, checkpointing=False, attention="flash"))[0]
    split = activation_terms(ActivationInputs(seq_len=8192, micro_batch=1, hidden=4096, layers=32, heads=32, checkpointing=False, attention="flash", sequence_split=4))[0]
    assert split.high == whole.high / 4


# ---- sizes -------------------------------------------------------------------------------------


@pytest.mark.parametrize("text,expected", [("80GB", 80 * GiB), ("80GiB", 80 * GiB), ("24", 24 * GiB), ("81920MB", 80 * GiB), ("0.5TB", 512 * GiB)])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "eighty", "-1GB", "0GB"])
def test_parse_size_rejects(text):
    with pytest.raises(ValueError):
        parse_size(text)


def test_hardware_memory():
    assert hardware_memory("a100-80gb") == 80 * GiB
    assert hardware_memory("ascend-910b") == 64 * GiB
    assert hardware_memory("a100") is None  # 40 or 80 GB: ambiguous


# ---- models -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,params",
    [
        # Exact counts published with the checkpoints (model cards / safetensors metadata).
        ("meta-llama/Llama-2-7b-hf", 6_738_415_616),
        ("meta-llama/Llama-2-13b-hf", 13_015_864_320),
        ("meta-llama/Meta-Llama-3-8B-Instruct", 8_030_261_248),
        ("meta-llama/Llama-3.1-70B", 70_553_706_496),
        ("mistralai/Mistral-7B-v0.1", 7_241_732_096),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", 46_702_792_704),
        ("Qwen/Qwen2.5-7B-Instruct", 7_615_616_512),
        ("Qwen/Qwen2.5-0.5B", 494_032_768),
        ("Qwen/Qwen2.5-72B-Instruct", 72_706_203_648),
        ("google/gemma-7b", 8_537_680_896),
    ],
)
def test_recognised_names_have_published_counts(name, params):
    assert recognise(name).params == params


@pytest.mark.parametrize(
    "name,shown,approx",
    [
        ("Qwen/Qwen3-8B", "Qwen3-8B", 8.2e9),
        ("Qwen/Qwen3-30B-A3B", "Qwen3-30B-A3B", 30.5e9),
        ("google/gemma-2-9b-it", "Gemma-2-9B", 9.24e9),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "Qwen2.5-7B", 7.62e9),
        ("deepseek-ai/DeepSeek-V3", "DeepSeek-V3-671B", 671e9),
        ("/models/Llama-3.3-70B-Instruct", "Llama-3.3-70B", 70.6e9),
    ],
)
def test_recognised_families(name, shown, approx):
    shape = recognise(name)
    assert shape.name == shown
    assert shape.params == pytest.approx(approx, rel=0.01)


@pytest.mark.parametrize("name", ["my-org/custom-model", "Qwen/Qwen2.5-9B", "gpt2", None, ""])
def test_unrecognised_names(name):
    assert recognise(name) is None


def test_every_table_entry_has_a_shape_and_a_largest_layer():
    for shape in known_models():
        assert shape.has_shape and shape.largest_layer and shape.params > shape.largest_layer


def test_local_config_json(tmp_path):
    model = tmp_path / "ckpt"
    model.mkdir()
    (model / "config.json").write_text(
        '{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,'
        ' "num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 32000, "tie_word_embeddings": false}'
    )
    shape = read_local_config("ckpt", [tmp_path])
    assert shape.params == 6_738_415_616
    assert "config.json" in shape.source
    assert read_local_config("missing", [tmp_path]) is None


def test_hf_config_of_a_vision_language_model_uses_its_text_config():
    config = {"model_type": "llava", "text_config": {"model_type": "qwen2", "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28,
                                                      "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064}}
    assert from_hf_config(config).params == 7_615_616_512


def test_count_params_mixture_of_experts():
    dense = count_params(4096, 32, 32, 8, 14336, 32000)
    moe = count_params(4096, 32, 32, 8, 14336, 32000, experts=8)
    assert moe - dense == 32 * (7 * 3 * 4096 * 14336 + 4096 * 8)


@pytest.mark.parametrize("text,value", [("7B", 7_000_000_000), ("1.5b", 1_500_000_000), ("350M", 350_000_000), ("7e9", 7_000_000_000), ("123456", 123456)])
def test_parse_count(text, value):
    assert parse_count(text) == value
    assert format_count(value)


# ---- DeepSpeed's own estimators (oracle) ----------------------------------------------------------

_gpus = st.sampled_from([1, 2, 4, 8, 16])
_nodes = st.integers(min_value=1, max_value=64)
_params = st.integers(min_value=10_000_000, max_value=1_000_000_000_000)


def _deepspeed():
    pytest.importorskip("deepspeed")
    from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs
    from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs

    return estimate_zero2_model_states_mem_needs, estimate_zero3_model_states_mem_needs


@pytest.mark.oracle
@settings(max_examples=300, deadline=None, derandomize=True)
@given(params=_params, gpus=_gpus, nodes=_nodes, offload=st.booleans())
def test_zero2_matches_deepspeed(params, gpus, nodes, offload):
    zero2, _ = _deepspeed()
    ds_cpu, ds_gpu = zero2(params, num_gpus_per_node=gpus, num_nodes=nodes, cpu_offload=offload)
    cpu, gpu = zero_model_states(params, 2, gpus, nodes, cpu_offload=offload)
    assert gpu == pytest.approx(ds_gpu, rel=0.01)
    if nodes == 1:
        # DeepSpeed counts a multi-node ZeRO-2 CPU as if every node held all processes'
        # offloaded states (max(4·total_gpus, 16)·P); dslint counts the node's own processes.
        assert cpu == pytest.approx(ds_cpu, rel=0.01)


@pytest.mark.oracle
@settings(max_examples=300, deadline=None, derandomize=True)
@given(params=_params, share=st.floats(min_value=0.001, max_value=0.3), gpus=_gpus, nodes=_nodes,
       offload=st.sampled_from([(False, False), (True, False), (True, True)]), zero_init=st.booleans())
def test_zero3_matches_deepspeed(params, share, gpus, nodes, offload, zero_init):
    _, zero3 = _deepspeed()
    largest = int(params * share)
    cpu_offload, cpu_offload_params = offload
    ds_cpu, ds_gpu, _ = zero3(params, largest, num_gpus_per_node=gpus, num_nodes=nodes, cpu_offload=cpu_offload,
                              cpu_offload_params=cpu_offload_params, zero_init=zero_init)
    cpu, gpu = zero_model_states(params, 3, gpus, nodes, largest_layer_params=largest, cpu_offload=cpu_offload,
                                 cpu_offload_params=cpu_offload_params, zero_init=zero_init)
    assert gpu == pytest.approx(ds_gpu, rel=0.01)
    assert cpu == pytest.approx(ds_cpu, rel=0.01)


@pytest.mark.oracle
@pytest.mark.parametrize("params,largest,gpus,nodes", [(7_000_000_000, 500_000_000, 8, 1), (70_000_000_000, 1_000_000_000, 8, 4)])
def test_all_cold_tables_match(params, largest, gpus, nodes, capsys):
    """The tables DeepSpeed prints for a hypothetical model (the _all_cold variants)."""
    pytest.importorskip("deepspeed")
    from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs_all_cold
    from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs_all_cold

    capsys.readouterr()
    estimate_zero3_model_states_mem_needs_all_cold(params, largest, num_gpus_per_node=gpus, num_nodes=nodes)
    estimate_zero2_model_states_mem_needs_all_cold(params, num_gpus_per_node=gpus, num_nodes=nodes)
    rows = re.findall(r"^\s*([\d.]+)GB \|\s*([\d.]+)GB \| (.*)$", capsys.readouterr().out, re.MULTILINE)
    assert len(rows) == 8
    for cpu_text, gpu_text, options in rows:
        flags = {key: value.rsplit(".", 1)[-1] for key, value in re.findall(r"(\w+)=([\w.]+)", options)}  # "OffloadDeviceEnum.cpu" or "cpu"
        stage = 3 if "zero_init" in flags else 2
        cpu, gpu = zero_model_states(
            params, stage, gpus, nodes, largest_layer_params=largest,
            cpu_offload=flags["offload_optimizer"] == "cpu", cpu_offload_params=flags.get("offload_param") == "cpu",
            zero_init=flags.get("zero_init") != "0",
        )
        assert gpu / GiB == pytest.approx(float(gpu_text), rel=0.01, abs=0.01), options
        if stage == 3 or nodes == 1:
            assert cpu / GiB == pytest.approx(float(cpu_text), rel=0.01, abs=0.01), options


def test_zero_model_states_by_hand():
    """The same comparison from the formulas, for machines without deepspeed."""
    params, largest = 7_000_000_000, 500_000_000
    assert zero_model_states(params, 2, 8, 1) == (int(4 * params * 8 * 1.5), int(2 * params + 18 * params / 8))
    assert zero_model_states(params, 2, 8, 1, cpu_offload=True) == (int(params * max(4 * 8, 16) * 1.5), 2 * params)
    assert zero_model_states(params, 3, 8, 2, largest_layer_params=largest) == (int(largest * 4 * 8 * 1.5), int(4 * largest + 18 * params / 16))
    cpu, gpu = zero_model_states(params, 3, 8, 2, largest_layer_params=largest, cpu_offload=True)
    assert (cpu, gpu) == (pytest.approx(params * 16 / 2 * 1.5), pytest.approx(4 * largest + 2 * params / 16))
    cpu, gpu = zero_model_states(params, 3, 8, 2, largest_layer_params=largest, cpu_offload=True, cpu_offload_params=True, zero_init=False)
    assert (cpu, gpu) == (pytest.approx(params * max(4 * 8, 18 / 2) * 1.5), 4 * largest)
    assert math.isclose(gpu, 4 * largest)

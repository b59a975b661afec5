"""What each launcher's own argument parser accepts (from the launchers' argparse definitions):
which options take a value, which take none, their other spellings and short forms. The launch
reader (dslint.launch.commands) splits a launcher's options from its program with these."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Spec:
    """The options a launcher accepts."""

    values: frozenset  # canonical keys that take a value
    flags: frozenset  # canonical keys that take none
    aliases: dict  # other long spellings (underscored) -> canonical key
    short: dict  # "-H" -> canonical key
    dashes: bool  # both --a-b and --a_b are accepted
    abbrev: bool  # argparse allow_abbrev (unique prefixes accepted)

    def resolve(self, name: str) -> tuple[str, bool | None, bool]:
        """(canonical key, takes a value or None when unknown, spelling accepted)."""
        body = name[2:] if name.startswith("--") else name.lstrip("-")
        key = body.replace("-", "_")
        ok = self.dashes or "-" not in body
        key = self.aliases.get(key, key)
        if key in self.values:
            return key, True, ok
        if key in self.flags:
            return key, False, ok
        if self.abbrev and key:
            every = list(self.values) + list(self.flags) + list(self.aliases)
            hits = {self.aliases.get(k, k) for k in every if k.startswith(key)}
            if len(hits) == 1:
                hit = hits.pop()
                return hit, hit in self.values, ok
        return key, None, False


# deepspeed/launcher/runner.py parse_args (DeepSpeed 0.14-0.19)
DEEPSPEED = Spec(
    values=frozenset(
        {
            "hostfile",
            "include",
            "exclude",
            "num_nodes",
            "min_elastic_nodes",
            "max_elastic_nodes",
            "num_gpus",
            "master_port",
            "master_addr",
            "node_rank",
            "launcher",
            "launcher_args",
            "enable_each_rank_log",
            "autotuning",
            "comment",
            "account",
            "bind_core_list",
            "ssh_port",
        }
    ),
    flags=frozenset(
        {
            "module",
            "no_python",
            "no_local_rank",
            "no_ssh",
            "no_ssh_check",
            "force_multi",
            "save_pid",
            "elastic_training",
            "bind_cores_to_rank",
        }
    ),
    aliases={"num_accelerators": "num_gpus"},
    short={"-H": "hostfile", "-i": "include", "-e": "exclude"},
    dashes=False,
    abbrev=True,
)

# torch/distributed/run.py get_args_parser (+ --use-env from torch/distributed/launch.py)
TORCHRUN = Spec(
    values=frozenset(
        {
            "nnodes",
            "nproc_per_node",
            "rdzv_backend",
            "rdzv_endpoint",
            "rdzv_id",
            "rdzv_conf",
            "max_restarts",
            "monitor_interval",
            "start_method",
            "event_log_handler",
            "role",
            "log_dir",
            "redirects",
            "tee",
            "local_ranks_filter",
            "node_rank",
            "master_addr",
            "master_port",
            "local_addr",
            "logs_specs",
            "numa_binding",
            "signals_to_handle",
            "log_line_prefix_template",
        }
    ),
    flags=frozenset({"standalone", "module", "no_python", "run_path", "use_env", "virtual_local_rank"}),
    aliases={},
    short={"-m": "module", "-r": "redirects", "-t": "tee"},
    dashes=True,
    abbrev=True,
)

# accelerate/commands/launch.py launch_command_parser (allow_abbrev=False; - and _ both accepted)
_ACCELERATE_FLAGS = frozenset(
    {
        "quiet",
        "cpu",
        "multi_gpu",
        "tpu",
        "ipex",
        "use_xpu",
        "enable_cpu_affinity",
        "dynamo_use_fullgraph",
        "dynamo_use_dynamic",
        "dynamo_use_regional_compilation",
        "use_deepspeed",
        "use_fsdp",
        "use_parallelism_config",
        "use_megatron_lm",
        "same_network",
        "module",
        "no_python",
        "tpu_cluster",
        "no_tpu_cluster",
        "tpu_use_sudo",
        "downcast_bf16",
        "fp8_use_autocast_during_eval",
        "debug",
    }
)
ACCELERATE = Spec(
    values=frozenset(
        {
            "config_file",
            "mixed_precision",
            "num_processes",
            "num_machines",
            "num_cpu_threads_per_process",
            "dynamo_backend",
            "dynamo_mode",
            "gpu_ids",
            "machine_rank",
            "main_process_ip",
            "main_process_port",
            "tee",
            "log_dir",
            "role",
            "rdzv_backend",
            "rdzv_conf",
            "max_restarts",
            "monitor_interval",
            "vm",
            "env",
            "main_training_function",
            "deepspeed_config_file",
            "zero_stage",
            "offload_optimizer_device",
            "offload_param_device",
            "offload_optimizer_nvme_path",
            "offload_param_nvme_path",
            "gradient_accumulation_steps",
            "gradient_clipping",
            "zero3_init_flag",
            "zero3_save_16bit_model",
            "deepspeed_hostfile",
            "deepspeed_exclusion_filter",
            "deepspeed_inclusion_filter",
            "deepspeed_multinode_launcher",
            "deepspeed_moe_layer_cls_names",
            "fsdp_version",
            "fsdp_offload_params",
            "fsdp_min_num_params",
            "fsdp_sharding_strategy",
            "fsdp_reshard_after_forward",
            "fsdp_auto_wrap_policy",
            "fsdp_transformer_layer_cls_to_wrap",
            "fsdp_backward_prefetch_policy",
            "fsdp_backward_prefetch",
            "fsdp_state_dict_type",
            "fsdp_forward_prefetch",
            "fsdp_use_orig_params",
            "fsdp_cpu_ram_efficient_loading",
            "fsdp_sync_module_states",
            "fsdp_activation_checkpointing",
            "megatron_lm_tp_degree",
            "megatron_lm_pp_degree",
            "megatron_lm_num_micro_batches",
            "megatron_lm_sequence_parallelism",
            "megatron_lm_recompute_activations",
            "megatron_lm_use_distributed_optimizer",
            "megatron_lm_gradient_clipping",
            "fp8_backend",
            "fp8_margin",
            "fp8_interval",
            "fp8_format",
            "fp8_amax_history_len",
            "fp8_amax_compute_algo",
            "fp8_override_linear_precision",
            "fp8_opt_level",
            "aws_access_key_id",
            "aws_secret_access_key",
            "mpirun_hostfile",
            "mpirun_ccl",
            "parallelism_config_dp_replicate_size",
            "parallelism_config_dp_shard_size",
            "parallelism_config_tp_size",
            "parallelism_config_cp_size",
            "parallelism_config_sp_size",
        }
    ),
    flags=_ACCELERATE_FLAGS,
    aliases={},
    short={"-q": "quiet", "-m": "module", "-t": "tee"},
    dashes=True,
    abbrev=False,
)

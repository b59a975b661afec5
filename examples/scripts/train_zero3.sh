#!/bin/bash
# Full fine-tune with ZeRO-3 offload on one node with 8 GPUs.
set -euo pipefail

NUM_GPUS=${NUM_GPUS:-8}

deepspeed --num_gpus "$NUM_GPUS" train.py \
    --model_name_or_path meta-llama/Llama-3.1-8B \
    --deepspeed_config configs/deepspeed/zero3_offload.json \
    --output_dir out/llama3-zero3

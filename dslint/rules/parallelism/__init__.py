"""Parallelism rules (DS410-DS416): pipeline with ZeRO, Megatron's parallel grid, sequence
parallelism and the generation batch of on-policy trainers.

Megatron launches come in three flavours, told apart by the consumer and the flags
(`--tensor-model-parallel-size` and `--tensor_model_parallel_size` are one key here):
Megatron-SWIFT (`megatron sft|pt|rlhf`, ms-swift 4.x), Megatron-DeepSpeed (`deepspeed
pretrain_gpt.py --deepspeed --deepspeed_config ds.json ...`) and Megatron-LM (`torchrun
pretrain_gpt.py ...`).
"""

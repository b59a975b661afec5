"""Ascend NPU rules (DS501-DS521): CUDA-only settings, unsupported features, NPU variables.

Each rule runs only for launches whose target is Ascend NPU (dslint/launch/target.py: the
`target` setting, `--target npu`, or what the script and the launch do, in the branch the
launch is in; the rules get it as the ``npu_target`` or ``launch_target`` fact, dslint/facts.py)
and says in every diagnostic why the target was taken to be NPU. A fix made for NPU edits only
statements that run with the NPU evidence (``_common.npu_fix``): in a script for both GPU and
NPU, what is written before the switch serves the GPU launch too. Statements hold for the versions the research read
(shared/research/swift_npu_rules.md): ms-swift 4.6.0.dev0 (HEAD 3602360a, docs
BestPractices/NPU-support.md), LLaMA-Factory 0.9.6.dev0 (HEAD ff6d4d12), transformers 5.23,
DeepSpeed 0.19.8, CANN 8.x. Where the consumers disagree, a rule follows the one launched.
The rules whose verdict depends on a package version are dslint/rules/npu_versions.py.
"""

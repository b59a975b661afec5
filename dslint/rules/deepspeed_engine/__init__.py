"""DeepSpeed failures visible in the config: raises at parse, at `deepspeed.initialize` or at the first step (DS224-DS249).

Each rule mirrors one check of deepspeed 0.19.8 (deepspeed/runtime/config.py, engine.py,
zero/stage_1_and_2.py, zero/stage3.py, lr_schedules.py) and fires only when the config alone
decides the outcome. A check that only some releases make (DS224: 0.16.4-0.19.3) is judged for
the DeepSpeed releases the repository allows: an error when all of them fail, else info.

## Out of static reach

These config-driven failures and silent behaviours (research rows §3 and S1-S10) are not
reported by any DS2xx rule, for the reason given:

- §3 row 23, `Type bf16 is not supported on your device`: depends on the GPU the job lands
  on, not on the config (a hardware-aware rule needs the `hardware` setting and the launch).
- §3 row 26, `You are using an untested ZeRO Optimizer`: depends on the optimizer class the
  training code passes to `deepspeed.initialize`.
- §3 row 29, `zero stage N requires an optimizer`: depends on whether the code passes an
  optimizer (HF Trainer always does; inference-only scripts do not).
- §3 rows 37-38, pipeline parallelism with ZeRO-2/3 or with `overlap_comm`: depend on the model
  being a `PipelineModule`, which only the code knows; row 39 (`pipeline.pipe_partitioned`
  not a boolean) is reported by `unchecked-value-type` when the value is a string, and only
  fails with a `PipelineModule`.
- §3 row 46 and S1, `"auto"` read by DeepSpeed alone (`gradient_clipping: "auto"` crashing
  at the first step, `"stage": "auto"` meaning ZeRO off): depend on the launcher, so they
  belong to the launch-linking rules, which know whether HF Trainer or accelerate fills them.
- S7, `gradient_allreduce_op: "sum"` at stages 0-2: the key exists to request summed
  gradients; a config that writes it means it.
- S8, `overlap_comm` absent (on for stage 3 only): the stage-dependent default is
  DeepSpeed's recommendation, not a mistake.
- S10, `CUDA_VISIBLE_DEVICES` ignored by the deepspeed launcher with `--include`/`--num_gpus`:
  a property of the launch command, not of the config (launch rules).

Everything else in §3 and S1-S10 has a rule: rows 1-4 (DS203, DS002, DS101, DS102), 5
(DS241), 6 and 10 (DS212), 7 (DS201), 8 (DS210), 9 and 14-15 (DS210, DS213), 11 (DS236),
12 and 30 (DS234), 13 (DS205), 16-17 (DS212, DS231), 18 and 34 (DS242), 19-20 (DS212), 21
(DS237), 22 and 28 (DS244), 24 (DS238), 25 (DS240), 27 (DS230), 31 (DS232), 32 (DS233), 33
(DS246), 35-36 (DS235), 40-43 (DS239), 44 (DS247), 45 (DS245), 47 (DS248); S2 (DS202), S3
(DS220), S4 (DS235), S5 (DS249), S6 (DS222), S9 (DS204).
"""

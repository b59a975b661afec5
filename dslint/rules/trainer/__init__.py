"""What the HF Trainer (and accelerate under it) does with a DeepSpeed config's optimizer and scheduler, and with
accelerate's own DeepSpeed settings, next to the training arguments of the same launch (DS321-DS323).

Each rule states a fact about the Trainer read from the launch's program (``consumers``); where
that reader is only assumed, the engine lowers the finding to a warning. The Trainer acts on the
config when it trains, so a launch whose program is established as inference or evaluation only,
or is not established and neither asks for training nor gets a training config
(``_deepspeed.trains``), is not judged. Sources: transformers
5.23 ``integrations/deepspeed.py`` (``trainer_config_process``, ``deepspeed_optim_sched``,
``deepspeed_init``), ``training_args.py``, accelerate 1.15 ``utils/dataclasses.py``
(``DeepSpeedPlugin``) and ``utils/launch.py``; older releases where the behaviour differs.
"""

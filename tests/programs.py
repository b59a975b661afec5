"""Small entry programs of each kind, for tests whose launches need an established consumer.

dslint reads a launch's program statically to know who reads its files (dslint/launch/consumer.py);
a launch whose program is missing gets only warnings from consumer-specific rules. These are the
shortest real-shaped programs that establish each kind.
"""

HF_TRAINER = """\
from transformers import HfArgumentParser, Trainer, TrainingArguments


def main():
    (args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
    Trainer(model=None, args=args).train()


if __name__ == "__main__":
    main()
"""

DEEPSPEED_LOOP = """\
import argparse

import deepspeed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    engine, _, _, _ = deepspeed.initialize(args=args, model=None, model_parameters=[])
    for batch in []:
        engine.backward(engine(batch))
        engine.step()


if __name__ == "__main__":
    main()
"""

ACCELERATE_LOOP = """\
from accelerate import Accelerator


def main():
    accelerator = Accelerator()
    model, optimizer, loader = accelerator.prepare(None, None, [])
    for batch in loader:
        accelerator.backward(model(batch))
        optimizer.step()


if __name__ == "__main__":
    main()
"""

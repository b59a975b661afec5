"""Training arguments as HF transformers, ms-swift, LLaMA-Factory and accelerate parse them (DS7xx).

Every fact about names, types, choices and defaults comes from the schemas generated from the
packages (schemas/transformers*, ms-swift*, llamafactory*, trl*, accelerate*); the version in
use from dslint.evidence.versions (settings, installed distribution, repository pins). A verdict that
depends on the version says which version it assumed and where that came from, and is an error
only when that version is known; otherwise a warning. Where nothing bounds the versions, a verdict
that only some releases share is no verdict.

Each rule judges names and values against the reader of the launch (``Consumer``): only where it
is established (a known console, a program read statically, a config whose own keys name its
framework) and, for a training script of its own, only when it does not read its YAML with
OmegaConf itself (``TrainingContext.unjudged``).
"""

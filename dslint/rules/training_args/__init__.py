"""Training arguments as HF transformers, ms-swift, LLaMA-Factory and accelerate parse them (DS7xx).

Every fact about names, types, choices and defaults comes from the schemas generated from the
packages (schemas/transformers*, ms-swift*, llamafactory*, trl*, accelerate*); the version in
use from dslint.evidence.versions (settings, installed distribution, repository pins). A verdict that
depends on the version says which version it assumed and where that came from, and is an error
only when that version is known; otherwise a warning.
"""

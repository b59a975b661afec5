"""schemas/transformers-layers*.json: the module classes of each model type, generated from transformers' modeling code."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dslint.schemagen import layer_classes

ROOT = Path(__file__).resolve().parents[1]
FILES = {"transformers-layers.json": None, "transformers-layers-4.45.json": "tf445"}


def _tree(root: Path) -> Path:
    models = root / "transformers" / "models"
    (models / "llama").mkdir(parents=True)
    (root / "transformers" / "__init__.py").write_text('__version__ = "9.9.9"\n')
    (models / "llama" / "configuration_llama.py").write_text('class LlamaConfig(PretrainedConfig):\n    model_type = "llama"\n')
    (models / "llama" / "modeling_llama.py").write_text(
        "from ...modeling_layers import GradientCheckpointingLayer\n"
        "from ..mistral.modeling_mistral import MistralRMSNorm\n\n"
        "class LlamaDecoderLayer(GradientCheckpointingLayer):\n    pass\n\n"
        "class LlamaPreTrainedModel(PreTrainedModel):\n    pass\n\n"
        "class LlamaForCausalLM(LlamaPreTrainedModel):\n    pass\n")
    (models / "llama" / "modeling_tf_llama.py").write_text("class TFLlamaMainLayer:\n    pass\n")
    return root


def test_classes_defined_and_borrowed_from_other_models(tmp_path):
    data = layer_classes.build(_tree(tmp_path) / "transformers")
    assert data["x-dslint-version"] == "9.9.9"
    assert data["model_types"] == {"llama": ["LlamaDecoderLayer", "LlamaForCausalLM", "MistralRMSNorm"]}


def test_shipped_files_know_the_classes_fsdp_users_name():
    newest = json.loads((ROOT / "schemas" / "transformers-layers.json").read_text())["model_types"]
    older = json.loads((ROOT / "schemas" / "transformers-layers-4.45.json").read_text())["model_types"]
    for types in (newest, older):
        assert "LlamaDecoderLayer" in types["llama"] and "LLaMADecoderLayer" not in types["llama"]
        assert "BertLayer" in types["bert"] and "Qwen2DecoderLayer" in types["qwen2"]
    assert "qwen3" in newest and "qwen3" not in older


@pytest.mark.oracle
@pytest.mark.parametrize("filename,target", FILES.items())
def test_regenerated_layer_classes_match_shipped(filename, target):
    output = ROOT / "schemas" / filename
    if target is None:
        transformers = pytest.importorskip("transformers")
        shipped = json.loads(output.read_text())["x-dslint-version"]
        if transformers.__version__ != shipped:
            pytest.skip(f"transformers {transformers.__version__} is installed; {filename} is made from {shipped}")
        args = ["--output", str(output), "--check"]
    else:
        targets = os.environ.get("DSLINT_SCHEMAGEN_TARGETS")
        if targets is None or not (Path(targets) / target / "transformers").is_dir():
            pytest.skip(f"{filename} is made from a --target copy; set DSLINT_SCHEMAGEN_TARGETS "
                        "(python -m dslint.schemagen.generations --prepare DIR)")
        args = ["--output", str(output), "--path", str(Path(targets) / target), "--check"]
    assert layer_classes.main(args) == 0

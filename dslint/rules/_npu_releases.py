"""The releases of a package in which a feature fails on Ascend NPU, and how a launch's releases are judged.

Shared by the NPU rules that name a version (dslint/rules/npu_versions.py) and DS511
(dslint/rules/npu/npu_flash_attention_version.py), which writes ``sdpa`` instead of FlashAttention-2
where some release the launch may run with cannot load it.
"""

from __future__ import annotations

from dataclasses import dataclass

from dslint.evidence.versions import Verdict, candidates, compare


@dataclass(frozen=True)
class Broken:
    """Versions ``low`` (inclusive; None: every earlier one) to ``high`` (exclusive) fail."""

    low: str | None
    high: str
    label: str  # the versions as people say them: "before 4.51", "4.54-4.55"
    what: str  # how it fails there

    def holds(self, version: str) -> bool:
        return (self.low is None or compare(version, self.low) >= 0) and compare(version, self.high) < 0


def judge(package: str, start, context, program, broken: tuple[Broken, ...]) -> tuple[Verdict, Broken | None]:
    """Where the feature fails among the versions the launch may run with, and the first range it hits."""
    found = candidates(package, start, context.settings, program)
    verdict = found.judge(lambda version: any(b.holds(version) for b in broken))
    hit = next((b for b in broken if any(b.holds(v) for v in verdict.failing)), None)
    return verdict, hit


# ---- FlashAttention-2 ---------------------------------------------------------------------------------

FLASH_ATTENTION_2_ON_NPU = (
    Broken(None, "4.51.0", "before 4.51", "transformers loads FlashAttention-2 only from the flash-attn package, which does not install on "
                           "NPU: 'ImportError: FlashAttention2 has been toggled on, but ... the package flash_attn seems to be "
                           "not installed'"),
    Broken("4.54.0", "4.56.0", "4.54-4.55", "transformers asks for the flash-attn package's version on NPU: "
                               "'PackageNotFoundError: No package metadata was found for flash_attn'"),
)

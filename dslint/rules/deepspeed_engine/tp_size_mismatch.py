"""DS247 tp-size-mismatch."""

from __future__ import annotations

from dslint.diagnostics import Finding
from dslint.documents.model import Mapping
from dslint.rule import rule
from dslint.rules import _deepspeed as ds
from dslint.rules import _deepspeed_schema as dss
from dslint.rules.deepspeed_engine._common import related_to


@rule("DS247", "tp-size-mismatch", severity="error", target="deepspeed")
def tp_size_mismatch(use, context):
    """`tensor_parallel.tp.tp_size` disagrees with `tensor_parallel.autotp_size`.

    ## What it checks
    With `tensor_parallel.autotp_size` > 1, `tensor_parallel.tp.tp_size` (or its long spelling
    `tensor_parallel.tensor_parallel.tp_size`) must be 1 or equal to `autotp_size`. DeepSpeed
    checks this from 0.18.6 (0.16.4-0.18.5 shard by `autotp_size` and never compare the two): an
    error when every DeepSpeed release the repository allows checks it, info naming them when
    some do.

    ## Why it matters
    `ValueError: tensor_parallel.tp.tp_size (4) does not match tensor_parallel.autotp_size (2).`
    when AutoTP partitions the model at `deepspeed.initialize` (deepspeed/runtime/engine.py:1019-1022).

    ## Example
    ```json
    {"tensor_parallel": {"autotp_size": 2, "tp": {"tp_size": 4}}}
    ```
    Use instead:
    ```json
    {"tensor_parallel": {"autotp_size": 2}}
    ```

    ## Fix safety
    No fix.
    """
    section = use.config.get("tensor_parallel")
    if not isinstance(section, Mapping):
        return
    autotp = ds.strict_number(section, "autotp_size", 0, kind=ds.lax_int)
    if autotp is ds.UNKNOWN or autotp <= 1:
        return
    inner = section.get("tp") or section.get("tensor_parallel")
    if not isinstance(inner, Mapping):
        return
    tp = ds.strict_number(inner, "tp_size", 1, kind=ds.lax_int)
    if tp is ds.UNKNOWN or tp in (1, autotp):
        return
    versions = dss.Versions(use, context)
    found = Finding(inner.entry("tp_size").value.span, f"tp_size {tp} does not match tensor_parallel.autotp_size {autotp}", related=related_to(section.entry("autotp_size")),
                    note="DeepSpeed raises ValueError at deepspeed.initialize (it must be 1 or equal)")
    yield from versions.within([found], versions.since(CHECKED_FROM))


# engine.py `_apply_autotp_partitioning`: the ValueError is in the v0.18.6 tag, not in v0.18.5.
CHECKED_FROM = "0.18.6"

"""DeepSpeed config values: types, coercion traps, choices and bounds (DS210-DS219).

The validated sections are checked the way pydantic 2 validates them in *lax* mode
(``DeepSpeedConfigModel``, deepspeed/runtime/config_utils.py:105-113): ``"3"``, ``3.0`` and
``5e8`` are integers, ``"5e8"`` and ``1.5`` are not; ``"true"``, ``"no"`` and ``1`` are
booleans. A value of exactly ``"auto"`` in those sections is dropped before validation
(config_utils.py:54-57), so it is never a type error here.
"""

"""DeepSpeed config keys: unknown, ignored, removed, deprecated and conflicting spellings (DS201-DS205).

Which keys exist comes from the shipped schema, generated from DeepSpeed's own pydantic models
and a probe of the keys ``DeepSpeedConfig`` reads with ``dict.get``; when they appeared or went
away comes from ``schemas/deepspeed-versions.json``, judged for every DeepSpeed release the
launch may run with (``_deepspeed_schema.Versions``: the ``deepspeed-version`` setting, the nearest pin,
or every release dslint knows). A finding that holds in only some of them is info naming them.
"""

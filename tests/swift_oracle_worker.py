"""Run by tests/test_oracle_startup_checks.py in a process of its own: ms-swift's argument classes
need the transformers release installed beside them (DIR/swift460), not the one the test runs.

    python tests/swift_oracle_worker.py TARGET CLASS < cases.json > results.json

Each case is an argv list; each result is null (accepted) or [exception type, message, file, line]
with the file and line of the innermost frame under TARGET (where it raised). The argument
classes are imported as dslint.schemagen.swift imports them: the optional packages their import
chain reaches and that are missing are stubbed; the model is a local folder (no network).
"""

import contextlib
import io
import json
import os
import sys
import tempfile
import warnings
from pathlib import Path


def main() -> None:
    target, cls = Path(sys.argv[1]).resolve(), sys.argv[2]
    sys.path.insert(0, str(target))
    os.environ.update(CUDA_VISIBLE_DEVICES="", HF_HUB_OFFLINE="1", MODELSCOPE_OFFLINE="1",
                      MEGATRON_LM_PATH=tempfile.mkdtemp(prefix="dslint-no-megatron-"))
    for key in [k for k in os.environ if k.startswith(("ACCELERATE_", "LOCAL_RANK", "WORLD_SIZE", "RANK"))]:
        del os.environ[key]
    from dslint.schemagen import _hfargs as common
    from dslint.schemagen.swift import STUBS

    common.quiet()
    common.install_stubs(STUBS)
    import swift.arguments
    from transformers import HfArgumentParser

    parser = HfArgumentParser([getattr(swift.arguments, cls)])
    results = []
    for argv in json.load(sys.stdin):
        result = None
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            try:
                parser.parse_args_into_dataclasses(argv, return_remaining_strings=True)
            except (Exception, SystemExit) as error:  # noqa: BLE001 - any raise is a refusal
                result = [type(error).__name__, str(error), *_site(error, target)]
        results.append(result)
    json.dump(results, sys.stdout)


def _site(error: BaseException, root: Path) -> list:
    found = [None, None]
    tb = error.__traceback__
    while tb is not None:
        path = Path(tb.tb_frame.f_code.co_filename)
        if path.is_relative_to(root):
            found = [path.relative_to(root).as_posix(), tb.tb_lineno]
        tb = tb.tb_next
    return found


if __name__ == "__main__":
    main()

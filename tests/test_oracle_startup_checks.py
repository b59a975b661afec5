"""Generated cases against the consumers' own argument validation: dslint's replay of their start-up
checks (schemas/<package>-checks.json, dslint/evidence/startup_checks.py, rule DS723) says which
check refuses a set of arguments; the consumer's real parser says what it raises.

The values are drawn for the arguments the installed release's checks read, in their kinds and
around the constants those checks compare with (the program's guards give them: ``self.logging_steps
== 0``, ``self.eval_strategy == 'steps'``), a few checks' arguments together so that combinations
come up. Each is given as the command line gives it (a token converted by ``HfArgumentParser``,
dslint converting it with ``parsed_token``) or as a YAML file gives it (``parse_dict``, dslint's
``typed_value``). See oracle_support.COUNTED for how a case is judged; the agreement is over the
counted cases, and a disagreement fails the test.
"""

from __future__ import annotations

import ast
import contextlib
import io
import logging
import os
import re
import warnings
from importlib import metadata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dslint.evidence import startup_checks
from dslint.evidence.startup_checks import UNKNOWN
from oracle_support import CheckAgreement

pytestmark = pytest.mark.oracle

HYPOTHESIS = dict(derandomize=os.environ.get("DSLINT_ORACLE_EXPLORE") != "1", database=None, deadline=None,
                  suppress_health_check=list(HealthCheck), print_blob=False)
COMMAND_LINE_CASES = 600
YAML_CASES = 300
MINIMUM_AGREEMENT = 0.99


def _report(request, agreement: CheckAgreement) -> None:
    tables = getattr(request.config, "_dslint_oracle_tables", None)
    if tables is None:
        tables = request.config._dslint_oracle_tables = []
    tables.append(agreement.table())


# ---- what the checks read, and the constants they compare with ----------------------------------


def _raise_steps(package: str, version: str, entry: str) -> list[tuple[tuple[str, int], list]]:
    found = startup_checks.checks(package)
    program = found.program(version, entry)
    steps = [found.steps[n] for n in program["steps"]]
    raises = [s for s in steps if s[0] == "raise"]
    return [((step[4], line), step) for step, line in zip(raises, program["lines"])]


def _self_names(node: ast.AST) -> set[str]:
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"}


def _compared_constants(package: str, version: str, entry: str) -> dict[str, set]:
    """argument -> the constants a guard compares it with (in one comparison or arithmetic)."""
    found = startup_checks.checks(package)
    program = found.program(version, entry)
    out: dict[str, set] = {}
    locals_: dict[str, set] = {}  # a local set to constants (``supported = ['flash_attn', ...]``)
    for number in program["steps"]:
        step = found.steps[number]
        if step[0] == "set" and not step[2].startswith("self.") and step[3] is not None:
            locals_[step[2]] = {c.value for c in ast.walk(ast.parse(step[3], mode="eval")) if isinstance(c, ast.Constant)}
        for guard in step[1]:
            if guard == "?":
                continue
            for node in ast.walk(ast.parse(guard.lstrip("~"), mode="eval")):
                if isinstance(node, ast.Compare):
                    constants = {c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and c.value is not None}
                    for name in (n.id for n in ast.walk(node) if isinstance(n, ast.Name)):
                        constants |= locals_.get(name, set())
                    for name in _self_names(node):
                        out.setdefault(name, set()).update(constants)
    return out


def _groups(package: str, version: str, entry: str, fields: dict) -> list[list[str]]:
    """The arguments each check reads (its guards, the soft ones too), the ones a case can give."""
    groups = []
    for _, step in _raise_steps(package, version, entry):
        names = set()
        for guard in step[1]:
            if guard != "?":
                names |= _self_names(ast.parse(guard.lstrip("~"), mode="eval"))
        group = sorted(n for n in names if n in fields and fields[n][0] != "other")
        if group and group not in groups:
            groups.append(group)
    return groups


NUMBERS = [0, -1, -0.5, 0.5, 1, 1.5, 2, 2.5, 3, 5, 10, 20, 25, 50, 100, 500]
BOOL_TOKENS = [True, "true", "false", "True", "False", "yes", "no", "1", "0"]  # True: the bare flag


def _numbers(kind: str, constants: set) -> list:
    pool = set(NUMBERS)
    for c in constants:
        if isinstance(c, (int, float)) and not isinstance(c, bool):
            pool |= {c - 1, c, c + 1, c + 0.5}
    if kind == "int":
        pool = {int(v) for v in pool if float(v).is_integer()}
    return sorted(pool)


@st.composite
def _token(draw, kind: str, name: str, constants: set, choices: list | None):
    """A command-line token for an argument of ``kind``."""
    if kind == "bool":
        return draw(st.sampled_from(BOOL_TOKENS))
    if kind == "str":
        preferred = sorted(c for c in constants if isinstance(c, str))
        return draw(st.sampled_from(preferred + (choices or ["x"]))) if preferred else draw(st.sampled_from(choices or ["x"]))
    value = draw(st.sampled_from(_numbers(kind, constants)))
    if kind == "float" and float(value).is_integer() and draw(st.booleans()):
        return f"{float(value)}"  # "10.0"
    return str(value)


@st.composite
def _yaml_value(draw, kind: str, name: str, constants: set, choices: list | None):
    """A value as a YAML file gives it (yaml.safe_load), mostly of the field's kind."""
    # the wrong kind, now and then ("1e-5" is a string in YAML, so is a quoted number); hypothesis
    # draws the smallest choice most often, so the rare one is last
    if draw(st.sampled_from([False] * 24 + [True])):
        return draw(st.sampled_from(["5", "true", "1e3", None]))
    if kind == "bool":
        return draw(st.booleans())
    if kind == "str":
        return draw(_token(kind, name, constants, choices))
    value = draw(st.sampled_from(_numbers(kind, constants)))
    return float(value) if kind == "float" and draw(st.booleans()) else value


@st.composite
def _case(draw, fields: dict, groups: list, constants: dict, choices: dict, value_of, fixed: frozenset = frozenset()):
    names: set[str] = set()
    for group in draw(st.lists(st.sampled_from(groups), min_size=1, max_size=2)):
        names |= set(group) - fixed
    plain = sorted(n for n, row in fields.items() if row[0] != "other" and n not in fixed)
    names |= set(draw(st.lists(st.sampled_from(plain), max_size=2)))
    # not every argument a check reads is given: its default then stands
    given_names = [n for n in sorted(names) if draw(st.integers(0, 4)) > 0]
    return {name: draw(value_of(fields[name][0], name, constants.get(name, set()), choices.get(name))) for name in given_names}


# ---- the judgement ------------------------------------------------------------------------------


def _pattern(message: str, template: str) -> re.Pattern:
    """dslint's message with the parts it could not fill in (``{expression}``) as wildcards."""
    unknown = set(re.findall(r"\{([^{}]*)\}", template))
    pieces = re.split(r"(\{[^{}]*\})", message)
    return re.compile("".join(".*" if p.startswith("{") and p[1:-1] in unknown else re.escape(p) for p in pieces), re.S)


def judge(replayed, raised: BaseException | None, site: tuple[str, int] | None, kept: set) -> tuple[str, str, str]:
    """(outcome, what dslint says, the check it names) for one case; see oracle_support.COUNTED."""
    fired = next((refusal for _, holds, refusal in replayed if holds is True), None)
    undecided = {s for s, holds, _ in replayed if holds is UNKNOWN}  # checks dslint cannot decide
    if fired is not None:
        said = f"{fired.exception}: {fired.message} @ {fired.file}:{fired.line}"
        check = f"{fired.file}:{fired.line} {fired.exception}: {fired.template}"
        if raised is None:
            return "DISAGREE", said, check
        if site == (fired.file, fired.line):
            same = type(raised).__name__ == fired.exception and _pattern(fired.message, fired.template).fullmatch(str(raised))
            return ("refused alike" if same else "DISAGREE"), said, check
        if site in kept and site not in undecided:
            return "DISAGREE", said, check
        return "masked", said, check
    said = "-"
    if raised is None:
        return "accepted alike", said, "-"  # dslint names no refusal, and none happens
    if site in kept:
        return ("undecided" if site in undecided else "DISAGREE"), said, "-"
    return "refused by code dslint left out", said, "-"


def _site(error: BaseException, root: Path) -> tuple[str, int] | None:
    """The innermost frame of the consumer's own code in the traceback: where it raised."""
    found = None
    tb = error.__traceback__
    while tb is not None:
        path = Path(tb.tb_frame.f_code.co_filename)
        if path.is_relative_to(root.parent):  # the consumer's package, or another installed beside it
            found = (path.relative_to(root.parent).as_posix(), tb.tb_lineno)
        tb = tb.tb_next
    return found


@contextlib.contextmanager
def _quiet_cpu_environment():
    """No accelerator and no launcher state: the consumer sets up a CPU process."""
    saved = dict(os.environ)
    for key in [k for k in os.environ if k.startswith(("ACCELERATE_", "LOCAL_RANK", "WORLD_SIZE", "RANK"))]:
        del os.environ[key]
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


# ---- transformers: HfArgumentParser(TrainingArguments) ------------------------------------------


@pytest.fixture(scope="module")
def transformers_parser():
    transformers = pytest.importorskip("transformers")
    from transformers import HfArgumentParser, TrainingArguments

    transformers.logging.set_verbosity_error()
    logging.getLogger("accelerate").setLevel(logging.ERROR)
    version = metadata.version("transformers")
    if startup_checks.fields("transformers", version, "TrainingArguments") is None:
        pytest.fail(f"schemas/transformers-checks.json has no program for the installed transformers {version}")
    return HfArgumentParser(TrainingArguments), version, Path(transformers.__file__).parent


def _choices(parser) -> dict[str, list]:
    return {a.dest: [str(c.value) if hasattr(c, "value") else str(c) for c in a.choices] for a in parser._actions if a.choices}


def _transformers_oracle(request, tmp_path, transformers_parser, how: str, cases: int):
    parser, version, root = transformers_parser
    entry = "TrainingArguments"
    fields = startup_checks.fields("transformers", version, entry)
    kept = {site for site, _ in _raise_steps("transformers", version, entry)}
    constants = _compared_constants("transformers", version, entry)
    groups = _groups("transformers", version, entry, fields)
    agreement = CheckAgreement(f"transformers {version} TrainingArguments.__post_init__ ({how})")
    base = {"output_dir": str(tmp_path), "use_cpu": True, "report_to": "none"}
    value_of = _token if how == "command line" else _yaml_value

    @settings(max_examples=cases, **HYPOTHESIS)
    @given(case=_case(fields, groups, constants, _choices(parser), value_of))
    def run(case):
        if how == "command line":
            values = {name: startup_checks.parsed_token(fields[name][0], token) for name, token in case.items()}
            argv = ["--output_dir", base["output_dir"], "--use_cpu", "--report_to", "none"]
            for name, token in case.items():
                argv += [f"--{name}"] + ([] if token is True else [token])
        else:
            values = {name: startup_checks.typed_value(fields[name][0], value) for name, value in case.items()}
        raised = site = None
        with _quiet_cpu_environment():
            try:
                if how == "command line":
                    parser.parse_args_into_dataclasses(args=argv)
                else:
                    parser.parse_dict({**base, **case})
            except (Exception, SystemExit) as error:  # noqa: BLE001 - any raise is a refusal
                raised, site = error, _site(error, root)
        replayed = list(startup_checks.replay("transformers", version, entry, values))
        outcome, said, check = judge(replayed, raised, site, kept)
        real = "accepted" if raised is None else f"{type(raised).__name__}: {str(raised)[:200]} @ {site[0]}:{site[1]}" if site \
            else f"{type(raised).__name__}: {str(raised)[:200]} @ outside {root.name}"
        shown = " ".join(f"--{n} {t}" for n, t in case.items()) if how == "command line" else repr(case)
        agreement.add(how.split()[0], shown, outcome, said, real, check)

    try:
        run()
    finally:
        _report(request, agreement)
    assert agreement.counted >= cases // 2, agreement.table()
    assert not agreement.count("DISAGREE"), "dslint's replay disagrees with the consumer:\n" + agreement.table()
    assert agreement.agreement >= MINIMUM_AGREEMENT


def test_transformers_command_line_oracle(request, tmp_path, transformers_parser):
    _transformers_oracle(request, tmp_path, transformers_parser, "command line", COMMAND_LINE_CASES)


def test_transformers_yaml_oracle(request, tmp_path, transformers_parser):
    _transformers_oracle(request, tmp_path, transformers_parser, "yaml file", YAML_CASES)


# ---- ms-swift: HfArgumentParser(SftArguments), in a process of its own ---------------------------

SWIFT_CASES = 150
SWIFT_TARGET = "swift460"  # the generation dslint.schemagen.generations --prepare installs (ms-swift 4.6.0)
# A local model folder (config.json only) and what ms-swift cannot infer from it: no hub lookup.
TINY_QWEN2 = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 64, "intermediate_size": 128,
              "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 1000,
              "max_position_embeddings": 4096, "torch_dtype": "bfloat16", "rms_norm_eps": 1e-6, "rope_theta": 10000.0}


def test_ms_swift_command_line_oracle(request, tmp_path):
    import json
    import subprocess
    import sys

    targets = os.environ.get("DSLINT_SCHEMAGEN_TARGETS")
    folder = Path(targets) / SWIFT_TARGET if targets else None
    if folder is None or not (folder / "swift" / "arguments").is_dir():
        pytest.skip(f"ms-swift is installed into DIR/{SWIFT_TARGET} by `python -m dslint.schemagen.generations --prepare DIR`; "
                    "set DSLINT_SCHEMAGEN_TARGETS=DIR")
    version = next(folder.glob("ms_swift-*.dist-info")).name.removesuffix(".dist-info").split("-")[1]
    entry = "sft"
    fields = startup_checks.fields("ms-swift", version, entry)
    assert fields is not None, f"schemas/ms-swift-checks.json has no {entry} program for ms-swift {version}"
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(TINY_QWEN2))
    # float32 and use_cpu: transformers refuses bf16 on a machine without a GPU (a check dslint leaves out)
    base = {"model": str(model), "model_type": "qwen2", "template": "qwen2_5", "dataset": "data.jsonl",
            "output_dir": str(tmp_path / "out"), "torch_dtype": "float32", "use_cpu": "true", "report_to": "none"}
    kept = {site for site, _ in _raise_steps("ms-swift", version, entry)}
    constants = _compared_constants("ms-swift", version, entry)
    groups = [g for g in _groups("ms-swift", version, entry, fields) if set(g) - set(base)]
    cases: list[dict] = []

    @settings(max_examples=SWIFT_CASES, **HYPOTHESIS)
    @given(case=_case(fields, groups, constants, {}, _token, frozenset(base)))
    def collect(case):
        cases.append(case)

    collect()
    argvs = []
    for case in cases:
        argv = [token for name, value in base.items() for token in (f"--{name}", value)]
        for name, token in case.items():
            argv += [f"--{name}"] + ([] if token is True else [token])
        argvs.append(argv)
    worker = Path(__file__).with_name("swift_oracle_worker.py")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(worker), str(folder), "SftArguments"], input=json.dumps(argvs),
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout)
    agreement = CheckAgreement(f"ms-swift {version} SftArguments.__post_init__ (command line, a local model folder)")
    try:
        for case, result in zip(cases, results):
            given_values = {**base, **case}
            values = {name: startup_checks.parsed_token(row[0], given_values[name]) for name, row in fields.items() if name in given_values}
            replayed = list(startup_checks.replay("ms-swift", version, entry, values))
            raised = site = None
            if result is not None:
                raised = type(result[0], (Exception,), {})(result[1])
                site = (result[2], result[3]) if result[2] else None
            outcome, said, check = judge(replayed, raised, site, kept)
            real = "accepted" if result is None else f"{result[0]}: {result[1][:200]} @ {result[2]}:{result[3]}"
            agreement.add("command", " ".join(f"--{n} {t}" for n, t in case.items()), outcome, said, real, check)
    finally:
        _report(request, agreement)
    assert agreement.counted >= SWIFT_CASES // 2, agreement.table()
    assert not agreement.count("DISAGREE"), "dslint's replay disagrees with ms-swift:\n" + agreement.table()
    assert agreement.agreement >= MINIMUM_AGREEMENT

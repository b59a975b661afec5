"""The rule API, shared by built-in rules and third-party plugins.

A rule is a plain function decorated with ``@rule``. Its docstring is its documentation page;
its first line is the one-line summary. The function receives one *target* (what it declared
it needs) and a ``Context``, and yields ``Finding``s; the engine owns everything else.

Targets:
  document    every parsed file (``Document``); ``kinds`` narrows it to some file kinds
  deepspeed   every use of a DeepSpeed config (``DeepSpeedUse``): the file, the world size
              and the consumer it is launched with, when known
  launch      every launch plan (``dslint.launch.plan.LaunchPlan``): one per launch command
              in a script, and one per training config no script launches
  layout      every multi-node layout (``dslint.launch.layout.Layout``): the node launches
              (scripts, or accelerate configs no launch names) of one job on several machines
  suppressions  every file's ``# dslint: disable=...`` comments (``FileSuppressions``), after
              all other rules ran and were filtered, each code marked used, unused, unknown
              or unjudged (its rule did not run)

Facts: what several rules need to know about a target, computed once per target per run by the
engine (dslint/facts.py) and handed to each rule that declares it (``facts=``) as a keyword
argument; see ``FACTS``.

Plugins expose a module through the ``dslint.rules`` entry-point group; every ``Rule`` object
defined at the module's top level is registered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

from dslint.diagnostics import Finding, Severity

TARGETS = ("document", "deepspeed", "launch", "layout", "suppressions")
READERS = ("hf", "accelerate", "swift", "llamafactory", "megatron", "deepspeed")
ENTRY_POINT_GROUP = "dslint.rules"
# The facts a rule may declare (each computed by dslint/facts.py; for a ``deepspeed`` target, from
# the launch that reaches the config):
#   launch_target    the accelerator a launch runs on (``dslint.launch.target.Target``: gpu or npu, with
#                    the evidence), None when nothing says
#   npu_target       that Target when it is Ascend NPU, else None; for a DeepSpeed config no launch
#                    reaches, what the settings say
#   hardware         the configured hardware (``dslint.launch.target.Hardware``), or None
#   framework_batch  the batch arithmetic of a verl, OpenRLHF or TRL GRPO launch
#                    (``dslint.frameworks.FrameworkBatch``, what ``dslint explain`` shows), or None
#   verl_config      the composed Hydra config of a verl PPO or SFT launch, or None
#   verl_ppo         the settings verl's PPO trainer checks (``dslint.frameworks.verl.PPO``), or None
#   verl_sft         the settings verl's SFT trainer normalises (``dslint.frameworks.verl.SFT``), or None
#   trl_trainer      the TRL on-policy trainer a launch runs (``dslint.frameworks.grpo.Trainer``), or None
#   openrlhf_batch   the DeepSpeed batch an OpenRLHF launch makes (``dslint.frameworks.openrlhf.Batch``), or None
FACTS = ("launch_target", "npu_target", "hardware", "framework_batch", "verl_config", "verl_ppo", "verl_sft", "trl_trainer",
         "openrlhf_batch")

# What a rule declares about the fixes it can make (``fix=``) -> the applicabilities the fixes and
# alternatives of its findings may have. "safe or unsafe": the case decides (the rule's page says
# when, under "## Fix safety").
FIX_SAFETY = {"safe": ("safe",), "unsafe": ("unsafe",), "safe or unsafe": ("safe", "unsafe")}

_CODE = re.compile(r"^[A-Z]{1,5}[0-9]{2,4}$")
_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Rule:
    """A rule: its code, name, severity, target and check."""

    code: str
    name: str
    severity: Severity
    target: str
    # For a built-in rule listed in dslint/rule_index.py: a stand-in that imports the rule's
    # module on its first call (see load_rules).
    check: Callable[..., Iterable[Finding]]
    page: str | None  # the docstring as written; None until the module of an indexed built-in rule is imported (see ``doc``)
    fix: str | None = None  # a key of FIX_SAFETY; None: the rule makes no fix
    kinds: tuple[str, ...] = ()
    # The readers (``LaunchPlan.consumer`` values) whose behaviour the rule states; empty: any.
    consumers: tuple[str, ...] = ()
    origin: str = "dslint"  # entry-point name that registered it
    module: str = ""  # the module that defines it
    brief: str | None = None  # the summary, as the index has it
    facts: tuple[str, ...] = ()  # the facts (FACTS) the engine hands its check as keyword arguments

    @property
    def doc(self) -> str:
        """The rule's documentation page (its check function's docstring, its indentation removed)."""
        if self.page is None:
            return defined(self.module, self.code).doc
        import inspect  # here: a lint run never shows a page, and inspect costs more to import than most rules

        return inspect.cleandoc(self.page)

    @property
    def fixable(self) -> bool:
        return self.fix is not None

    @property
    def fix_applicabilities(self) -> tuple[str, ...]:
        """The applicabilities (``diagnostics.SAFE``, ``UNSAFE``) the rule's fixes may have."""
        return FIX_SAFETY[self.fix] if self.fix is not None else ()

    @property
    def summary(self) -> str:
        if self.brief is not None:
            return self.brief
        doc = self.doc.strip()
        return doc.splitlines()[0].strip() if doc else ""

    def run(self, target: Any, context: "Context", **facts: Any) -> Iterator[Finding]:
        """The findings on ``target``; ``facts``: the values of the facts the rule declares."""
        return iter(self.check(target, context, **facts) or ())


def rule(
    code: str,
    name: str,
    severity: str = "error",
    target: str = "document",
    fix: str | None = None,
    kinds: Iterable[str] = (),
    consumers: Iterable[str] = (),
    facts: Iterable[str] = (),
):
    """Declare a rule. Used as a decorator on the check function.

    ``fix``: the fixes the rule's findings carry (their ``Fix`` and alternatives): ``"safe"``,
    ``"unsafe"``, or ``"safe or unsafe"`` when the case decides; None when it makes none.
    ``dslint rules`` shows it, and the fixture tests hold every rule to it.

    ``facts``: names from ``FACTS`` (``launch_target``, ``npu_target``, ``hardware``,
    ``framework_batch``, ``verl_config``, ``verl_ppo``, ``verl_sft``, ``trl_trainer``,
    ``openrlhf_batch``). The engine computes each once per target per run, whichever rules ask,
    and passes it to the check as a keyword argument: ``facts=("npu_target",)`` with
    ``def check(plan, context, *, npu_target)``.

    ``consumers``: the rule states what these readers of a launch do (``hf``, ``accelerate``,
    ``swift``, ``llamafactory``, ``megatron``, ``deepspeed``). The engine runs it only on launches
    (and DeepSpeed uses) read by one of them, or by nobody known; where the reader is assumed
    rather than established from the program, the engine lowers an error to a warning, drops
    the fix and says what was assumed.
    """
    if not _CODE.match(code):
        raise ValueError(f"rule code {code!r} must look like ABC123")
    if not _NAME.match(name):
        raise ValueError(f"rule name {name!r} must be kebab-case")
    if target not in TARGETS:
        raise ValueError(f"rule target {target!r} must be one of {', '.join(TARGETS)}")
    unknown = [c for c in consumers if c not in READERS]
    if unknown:
        raise ValueError(f"rule consumers {unknown} must be among {', '.join(READERS)}")
    if fix is not None and fix not in FIX_SAFETY:
        raise ValueError(f"rule fix {fix!r} must be one of {', '.join(map(repr, FIX_SAFETY))} (or None: no fix)")
    unknown = [f for f in facts if f not in FACTS]
    if unknown:
        raise ValueError(f"rule facts {unknown} must be among {', '.join(FACTS)}")

    def decorate(check: Callable) -> Rule:
        return Rule(
            code=code,
            name=name,
            severity=Severity.parse(severity),
            target=target,
            check=check,
            page=check.__doc__ or "",
            fix=fix,
            kinds=tuple(kinds),
            consumers=tuple(consumers),
            module=getattr(check, "__module__", "") or "",
            facts=tuple(facts),
        )

    return decorate


@dataclass
class Context:
    """What a rule may know besides its target: the settings in force."""

    settings: Any  # dslint.config.Settings
    # What rules work out once per run and share (a repository's Python files read for the keys
    # they look up): emptied when a run starts, so nothing outlives the files it was read from.
    memo: dict = field(default_factory=dict)
    # The facts computed this run (dslint.facts), by (name, id(target)); emptied with ``memo``. Rules
    # do not read it: they get the facts they declare as arguments.
    facts: dict = field(default_factory=dict)
    # id(DeepSpeed config document) -> every launch plan of this run that reads it (training or
    # inference); set by the engine when a run starts. A fix that writes into the config must be
    # right for each of them, not only for the launch whose finding it is.
    deepspeed_readers: dict = field(default_factory=dict)


def rules_in_module(module) -> list[Rule]:
    """The rules defined at the top level of ``module``; for a package (a family of one-rule
    modules, as dslint's own), those of its public modules as well."""
    found = [value for value in vars(module).values() if isinstance(value, Rule)]
    if hasattr(module, "__path__"):
        import pkgutil
        from importlib import import_module

        for info in pkgutil.iter_modules(module.__path__):
            if not info.name.startswith("_"):
                found += [r for r in rules_in_module(import_module(f"{module.__name__}.{info.name}")) if r not in found]
    return found


def _family(index: dict[str, list[Rule]], module_name: str) -> list[Rule]:
    """The indexed rules of an entry point's module: its own, or its submodules' for a package."""
    prefix = module_name + "."
    return [r for module, rules in index.items() if module == module_name or module.startswith(prefix) for r in rules]


@dataclass
class PluginError:
    """A plugin that could not be loaded."""

    entry_point: str
    message: str


def load_rules(group: str = ENTRY_POINT_GROUP, lazy: bool = True) -> tuple[list[Rule], list[PluginError]]:
    """Every rule registered under the entry-point group; built-ins come the same way.

    A plugin's module is imported here. A built-in module listed in dslint/rule_index.py is
    not: its rules are made from the index, and the module is imported when one of its rules
    first runs or its page is read. A one-file run thus imports only the rule families that
    have something to judge (all of them cost 40 ms to import). ``lazy=False`` imports every
    module (what the index is generated from).
    """
    from importlib import import_module

    index = _builtin_index() if lazy and group == ENTRY_POINT_GROUP else {}
    rules: list[Rule] = []
    errors: list[PluginError] = []
    seen_codes: dict[str, str] = {}
    builtin_first = sorted(entry_points(group), key=lambda e: (not e[1].startswith("dslint."), e[0]))
    for name, value in builtin_first:
        module_name = value.split(":")[0].strip()
        in_index = _family(index, module_name)
        if in_index:
            found_rules = in_index
        else:
            try:
                module = import_module(module_name)
            except Exception as exc:  # noqa: BLE001 - a broken plugin must not stop the run
                errors.append(PluginError(name, f"{value}: {type(exc).__name__}: {exc}"))
                continue
            found_rules = rules_in_module(module)
        for found in found_rules:
            if found.code in seen_codes:
                errors.append(PluginError(name, f"rule code {found.code} is already registered by {seen_codes[found.code]}"))
                continue
            seen_codes[found.code] = name
            rules.append(_with_origin(found, name))
    rules.sort(key=lambda r: r.code)
    return rules, errors


def defined(module: str, code: str) -> Rule:
    """The rule ``code`` as its module defines it (importing the module)."""
    from importlib import import_module

    for found in rules_in_module(import_module(module)):
        if found.code == code:
            return found
    raise LookupError(f"{module} defines no rule {code} (dslint/rule_index.py is out of date: run `python -m dslint.docs`)")


class _Deferred:
    """The check of an indexed built-in rule: imports the rule's module on the first call."""

    __slots__ = ("module", "code", "function")

    def __init__(self, module: str, code: str):
        self.module, self.code, self.function = module, code, None

    def __call__(self, target, context, **facts):
        if self.function is None:
            self.function = defined(self.module, self.code).check
        return self.function(target, context, **facts)


def _builtin_index() -> dict[str, list[Rule]]:
    """module -> its rules, made from dslint/rule_index.py (empty if it is missing)."""
    try:
        from dslint.rule_index import RULES
    except ImportError:
        return {}
    out: dict[str, list[Rule]] = {}
    for code, name, severity, target, kinds, consumers, facts, fix, module, summary in RULES:
        out.setdefault(module, []).append(Rule(code=code, name=name, severity=Severity.parse(severity), target=target,
                                               check=_Deferred(module, code), page=None, fix=fix, kinds=kinds,
                                               consumers=consumers, module=module, brief=summary, facts=facts))
    return out


def index_rows(rules: list[Rule]) -> list[tuple]:
    """The rows of dslint/rule_index.py for these (imported) rules, in code order."""
    return [(r.code, r.name, r.severity.label, r.target, r.kinds, r.consumers, r.facts, r.fix, r.module, r.summary)
            for r in sorted(rules, key=lambda r: r.code)]


def entry_points(group: str) -> list[tuple[str, str]]:
    """(name, value) of every entry point in ``group`` of the distributions on sys.path.

    The same answer as ``importlib.metadata.entry_points(group=...)`` for installed
    distributions, read straight from ``*.dist-info/entry_points.txt``: importing and
    running importlib.metadata costs about 25 ms, a third of a pre-commit run.
    The first distribution of a name on sys.path wins, as in importlib.metadata.
    """
    import os
    import sys

    found: list[tuple[str, str]] = []
    seen_distributions: set[str] = set()
    header = f"[{group}]"
    for directory in sys.path:
        try:
            names = os.listdir(directory or ".") if directory else []
        except OSError:
            continue
        for entry in names:
            if not entry.endswith((".dist-info", ".egg-info")):
                continue
            distribution = entry.rsplit("-", 1)[0] if entry.endswith(".dist-info") else entry[: -len(".egg-info")]
            distribution = distribution.split("-")[0].lower().replace("_", "-").replace(".", "-")
            if distribution in seen_distributions:
                continue
            seen_distributions.add(distribution)
            try:
                with open(os.path.join(directory, entry, "entry_points.txt"), encoding="utf-8") as handle:
                    text = handle.read()
            except OSError:
                continue
            if header not in text:
                continue
            in_group = False
            for line in text.splitlines():
                line = line.strip()
                if line.startswith("["):
                    in_group = line == header
                elif in_group and "=" in line and not line.startswith(("#", ";")):
                    name, value = line.split("=", 1)
                    found.append((name.strip(), value.strip()))
    return found


def _with_origin(found: Rule, origin: str) -> Rule:
    from dataclasses import replace

    return replace(found, origin=origin)

"""SLURM: a batch script's ``#SBATCH`` directives, and the ``SLURM_*`` variables they give it.

sbatch reads ``#SBATCH`` lines from the top of the script until the first line that is neither
a comment nor blank (sbatch(1), "batch script"); options given to sbatch on its command line
override them. So each value here is what the script asks for, and the variables it implies
(``SLURM_NNODES`` ...) are known only as *assumed* values: right unless the caller overrides
them, like ``${NNODES:-2}``. The variables follow sbatch(1) "OUTPUT ENVIRONMENT VARIABLES".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dslint.source import SourceFile, Span

# sbatch/srun options dslint reads: spelling -> key (short options take their value in the next word)
OPTIONS = {
    "--nodes": "nodes", "-N": "nodes",
    "--ntasks": "ntasks", "-n": "ntasks",
    "--ntasks-per-node": "ntasks_per_node",
    "--gpus-per-node": "gpus_per_node",
    "--gres": "gres",
    "--gpus": "gpus", "-G": "gpus",
}
_GRES_GPU = re.compile(r"(?:^|,)gpu(?::[A-Za-z0-9_.-]+)*?:(\d+)(?:\(|,|$)")
_COUNT = re.compile(r"(?:[A-Za-z0-9_.-]+:)?(\d+)\Z")  # 8, or type:8 (--gpus-per-node=a100:8)


@dataclass(frozen=True)
class Directive:
    """One ``#SBATCH`` option that sizes the job."""

    key: str  # nodes | ntasks | ntasks_per_node | gpus_per_node | gres | gpus
    text: str  # the option as written, e.g. "--gres=gpu:8"
    value: str
    span: Span

    @property
    def count(self) -> int | None:
        """The number the option gives (GPUs for --gres, nodes for --nodes ...); None when not one."""
        if self.key == "gres":
            m = _GRES_GPU.search(self.value)
            return int(m.group(1)) if m else None
        if self.key == "nodes" and "-" in self.value:
            low, _, high = self.value.partition("-")
            return int(low) if low.isdigit() and low == high else None  # a range is decided at run time
        m = _COUNT.match(self.value)
        return int(m.group(1)) if m else None


@dataclass
class SbatchJob:
    """The ``#SBATCH`` directives of a batch script (the last one of each option wins, as in sbatch)."""

    directives: dict[str, Directive] = field(default_factory=dict)

    def count(self, key: str) -> int | None:
        found = self.directives.get(key)
        return found.count if found is not None else None

    @property
    def gpus_per_node(self) -> tuple[int, Directive] | None:
        for key in ("gpus_per_node", "gres"):
            found = self.directives.get(key)
            if found is not None and found.count is not None:
                return found.count, found
        gpus, nodes = self.directives.get("gpus"), self.count("nodes")
        if gpus is not None and gpus.count is not None and nodes and gpus.count % nodes == 0:
            return gpus.count // nodes, gpus
        return None

    def variables(self) -> dict[str, tuple[str, Directive]]:
        """SLURM_* variables of the batch step, as (value, the directive that gives it)."""
        out: dict[str, tuple[str, Directive]] = {}
        nodes = self.count("nodes")
        if nodes is not None:
            for name in ("SLURM_NNODES", "SLURM_JOB_NUM_NODES"):
                out[name] = (str(nodes), self.directives["nodes"])
        per_node = self.count("ntasks_per_node")
        if per_node is not None:
            out["SLURM_NTASKS_PER_NODE"] = (str(per_node), self.directives["ntasks_per_node"])
        tasks = self.count("ntasks")
        if tasks is not None:
            source = self.directives["ntasks"]
        elif per_node is not None:
            tasks, source = per_node * (nodes or 1), self.directives["ntasks_per_node"]
        if tasks is not None:
            out["SLURM_NTASKS"] = out["SLURM_NPROCS"] = (str(tasks), source)
        if self.count("gpus_per_node") is not None:
            out["SLURM_GPUS_PER_NODE"] = (str(self.count("gpus_per_node")), self.directives["gpus_per_node"])
        if self.count("gpus") is not None:
            out["SLURM_GPUS"] = (str(self.count("gpus")), self.directives["gpus"])
        per_node_gpus = self.gpus_per_node
        if per_node_gpus is not None:
            out["SLURM_GPUS_ON_NODE"] = (str(per_node_gpus[0]), per_node_gpus[1])
        return out

    def describe(self) -> str:
        return ", ".join(d.text for d in self.directives.values())


def read_directives(source: SourceFile) -> SbatchJob | None:
    """The script's ``#SBATCH`` directives, or None when it has none."""
    text = source.text
    if "#SBATCH" not in text:
        return None
    job = SbatchJob()
    for number in range(1, source.line_count + 1):
        line = source.line_text(number)
        stripped = line.strip()
        if not stripped or (stripped.startswith("#") and not stripped.startswith("#SBATCH")):
            continue
        if not stripped.startswith("#SBATCH"):
            break  # sbatch stops at the first command
        start = source.line_start(number) + line.index("#SBATCH") + len("#SBATCH")
        _read_line(source, start, source.line_end(number), job.directives)
    return job if job.directives else None


def first_directive(source: SourceFile) -> int | None:
    """The line of the script's first ``#SBATCH`` directive that sbatch reads, whatever its options; None without one."""
    if "#SBATCH" not in source.text:
        return None
    for number in range(1, source.line_count + 1):
        stripped = source.line_text(number).strip()
        if stripped.startswith("#SBATCH"):
            return number
        if stripped and not stripped.startswith("#"):
            return None  # sbatch stops at the first command
    return None


def _read_line(source: SourceFile, start: int, end_of_line: int, directives: dict) -> None:
    """The options of one ``#SBATCH`` line, the text after ``#SBATCH`` from ``start``."""
    text = source.text
    words = [(m.group(0), start + m.start()) for m in re.finditer(r"\S+", text[start:end_of_line])]
    k = 0
    while k < len(words):
        word, at = words[k]
        if word.startswith("#"):
            break  # a comment after the options
        name, eq, value = word.partition("=")
        key = OPTIONS.get(name)
        end = at + len(word)
        if key is not None and not eq and k + 1 < len(words) and not words[k + 1][0].startswith("-"):
            value, end = words[k + 1][0], words[k + 1][1] + len(words[k + 1][0])
            k += 1
        elif key is None and name.startswith("-") and len(name) > 2 and not name.startswith("--") and name[:2] in OPTIONS:
            key, value = OPTIONS[name[:2]], name[2:]  # -N2
        if key is not None and value:
            directives[key] = Directive(key, text[at:end], value, Span(source, at, end))
        k += 1

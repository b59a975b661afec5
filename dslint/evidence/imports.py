"""Which Python distributions a repository declares, and which import names they ship.

``python -m pkg.train`` finds ``pkg`` in the folder it runs in, on PYTHONPATH, or among the
installed distributions. What is installed is what the repository declares: its requirements
files, ``setup.py``/``setup.cfg``/``pyproject.toml``/``Pipfile`` dependencies, conda environment
files, and the ``pip install`` lines of its Dockerfiles, scripts and Markdown. A distribution's
import names are not its name (``protobuf`` ships ``google``, ``fschat`` ships ``fastchat``), so
only distributions in ``IMPORT_NAMES`` (checked against their wheels' top-level packages) are
known; any other one, a URL, a local path other than the repository itself, or a dependency list
computed at run time may ship anything (``Declared.unknown``).
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache

from dslint.evidence.pins import normalize, pip_install_targets
from dslint.files.tree import tree

# Distribution (normalized, pip or conda name) -> the top-level import names its wheel installs.
IMPORT_NAMES: dict[str, tuple[str, ...]] = {
    "torch": ("torch", "torchgen", "functorch"), "pytorch": ("torch", "torchgen", "functorch"),
    "torchvision": ("torchvision",), "torchaudio": ("torchaudio",), "pytorch-cuda": (), "cudatoolkit": (),
    "cuda-toolkit": (), "python": (), "pip": ("pip",), "setuptools": ("setuptools", "pkg_resources", "distutils"),
    "wheel": ("wheel",), "ninja": ("ninja",), "packaging": ("packaging",), "cmake": ("cmake",),
    "transformers": ("transformers",), "accelerate": ("accelerate",), "deepspeed": ("deepspeed",),
    "datasets": ("datasets",), "tokenizers": ("tokenizers",), "safetensors": ("safetensors",),
    "huggingface-hub": ("huggingface_hub",), "peft": ("peft",), "trl": ("trl",), "evaluate": ("evaluate",),
    "bitsandbytes": ("bitsandbytes",), "sentencepiece": ("sentencepiece",), "tiktoken": ("tiktoken", "tiktoken_ext"),
    "protobuf": ("google",), "einops": ("einops",), "flash-attn": ("flash_attn", "flash_attn_2_cuda"),
    "xformers": ("xformers",), "triton": ("triton",), "liger-kernel": ("liger_kernel",), "optimum": ("optimum",),
    "vllm": ("vllm",), "sglang": ("sglang",), "ray": ("ray",), "ms-swift": ("swift",), "llamafactory": ("llamafactory",),
    "llmtuner": ("llmtuner",), "axolotl": ("axolotl",), "openrlhf": ("openrlhf",), "verl": ("verl",),
    "fschat": ("fastchat",), "lm-eval": ("lm_eval",), "modelscope": ("modelscope",), "megatron-core": ("megatron",),
    "apex": ("apex",), "numpy": ("numpy",), "scipy": ("scipy",), "pandas": ("pandas",), "scikit-learn": ("sklearn",),
    "matplotlib": ("matplotlib", "mpl_toolkits", "pylab"), "seaborn": ("seaborn",), "pillow": ("PIL",),
    "opencv-python": ("cv2",), "opencv-python-headless": ("cv2",), "tqdm": ("tqdm",), "rich": ("rich",),
    "wandb": ("wandb",), "tensorboard": ("tensorboard",), "tensorboardx": ("tensorboardX",), "mlflow": ("mlflow",),
    "swanlab": ("swanlab",), "fire": ("fire",), "click": ("click",), "typer": ("typer",), "pyyaml": ("yaml", "_yaml"),
    "omegaconf": ("omegaconf",), "hydra-core": ("hydra",), "jsonlines": ("jsonlines",), "orjson": ("orjson",),
    "ujson": ("ujson",), "requests": ("requests",), "aiohttp": ("aiohttp",), "httpx": ("httpx",),
    "fastapi": ("fastapi",), "uvicorn": ("uvicorn",), "pydantic": ("pydantic",), "sse-starlette": ("sse_starlette",),
    "gradio": ("gradio",), "openai": ("openai",), "nltk": ("nltk",), "jieba": ("jieba",),
    "rouge-chinese": ("rouge_chinese",), "rouge-score": ("rouge_score",), "sacrebleu": ("sacrebleu",),
    "regex": ("regex",), "psutil": ("psutil",), "pynvml": ("pynvml",), "nvidia-ml-py": ("pynvml",),
    "py-cpuinfo": ("cpuinfo",), "timm": ("timm",), "open-clip-torch": ("open_clip", "open_clip_train"),
    "decord": ("decord",), "av": ("av",), "soundfile": ("soundfile",), "librosa": ("librosa",),
    "qwen-vl-utils": ("qwen_vl_utils",), "math-verify": ("math_verify",), "latex2sympy2-extended": ("latex2sympy2_extended",),
    "sympy": ("sympy", "isympy"), "mpmath": ("mpmath",), "networkx": ("networkx",), "pyarrow": ("pyarrow",),
    "dill": ("dill",), "multiprocess": ("multiprocess",), "filelock": ("filelock",), "fsspec": ("fsspec",),
    "hjson": ("hjson",), "msgpack": ("msgpack",), "pytest": ("pytest", "_pytest", "py"), "ruff": ("ruff",),
    "black": ("black", "blackd"), "isort": ("isort",), "pre-commit": ("pre_commit",), "codetiming": ("codetiming",),
    "tensordict": ("tensordict",), "pylatexenc": ("pylatexenc",), "word2number": ("word2number",),
    "pebble": ("pebble",), "dacite": ("dacite",), "addict": ("addict",), "attrs": ("attr", "attrs"),
    "simplejson": ("simplejson",), "shortuuid": ("shortuuid",), "markdown2": ("markdown2",),
    "deepspeed-kernels": ("deepspeed_kernels",), "flash-attn-3": ("flash_attn_interface",),
    "mpi4py": ("mpi4py",), "pybind11": ("pybind11",), "ipython": ("IPython",), "jupyter": (),
    "notebook": ("notebook",), "zstandard": ("zstandard",), "xxhash": ("xxhash",), "termcolor": ("termcolor",),
    "colorama": ("colorama",), "tabulate": ("tabulate",), "scikit-image": ("skimage",), "beautifulsoup4": ("bs4",),
    "python-dotenv": ("dotenv",), "python-dateutil": ("dateutil",), "pyzmq": ("zmq",), "nvidia-nccl-cu12": ("nvidia",),
    "transformers-stream-generator": ("transformers_stream_generator",), "tiktoken-ext": ("tiktoken_ext",),
    "immutabledict": ("immutabledict",), "langdetect": ("langdetect",), "sentence-transformers": ("sentence_transformers",),
}


@dataclass
class Declared:
    """The distributions a repository declares, with the files that say so."""

    names: set[str] = field(default_factory=set)  # normalized distribution names
    files: list[str] = field(default_factory=list)  # relative paths of the files that declare some
    unknown: list[str] = field(default_factory=list)  # what may ship anything: "requirements.txt:3 git+https://..."

    def provides(self, top: str) -> list[str]:
        """The declared distributions known to ship the import name ``top``."""
        return sorted(name for name in self.names if top in IMPORT_NAMES.get(name, ()))

    def unknown_names(self) -> list[str]:
        return sorted(name for name in self.names if name not in IMPORT_NAMES)


_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*)$")
_PIP = re.compile(r"(?:^|[\s;&|(])(?:\S*/)?(?:pip[0-9.]*|python[0-9.]*\s+-m\s+pip|uv\s+pip)\s+install\s+([^;&|\n]*)")
_LOCAL = re.compile(r"^(?:\.|\./?|\.\[.*\]|'\.\[.*\]'|\"\.\[.*\]\")$")


def _requirement(text: str, where: str, out: Declared, base: str) -> None:
    """One requirement as written (a requirements line, a pyproject string, a pip argument)."""
    text = text.strip().strip("\"'")
    if not text or text.startswith("#"):
        return
    if _LOCAL.match(text) or text in (".", "./"):
        return  # the repository itself
    if text.startswith((".", "/", "file:")) or "://" in text or text.startswith("git+"):
        if text.startswith(("./", "../")) and os.path.normpath(os.path.join(base, text.split("[")[0])) == ".":
            return
        out.unknown.append(f"{where} {text}")
        return
    match = _NAME.match(text)
    if match is None:
        out.unknown.append(f"{where} {text}")
        return
    out.names.add(normalize(match.group(1)))


def _requirements_file(relative: str, text: str, out: Declared, scanned: set[str]) -> None:
    base = os.path.dirname(relative)
    pending = ""
    for number, line in enumerate(text.splitlines(), 1):
        line = re.sub(r"(?:^|\s)#.*$", "", line).rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        stripped = line.strip()
        if not stripped:
            continue
        where = f"{relative}:{number}"
        option = re.match(r"^(-r|--requirement|-c|--constraint)(?:\s*=\s*|\s+)(\S+)", stripped)
        if option:
            included = os.path.normpath(os.path.join(base, option.group(2)))
            if option.group(1) in ("-r", "--requirement") and included not in scanned:
                out.unknown.append(f"{where} {stripped}")
            continue
        if stripped.startswith("-e") or stripped.startswith("--editable"):
            _requirement(stripped.split(None, 1)[1] if " " in stripped else stripped[2:], where, out, base)
            continue
        if stripped.startswith("-"):
            continue  # --index-url, --find-links, --no-binary ...
        _requirement(stripped.split(";")[0], where, out, base)


def _pip_lines(relative: str, text: str, out: Declared) -> None:
    """``pip install ...`` lines of a Dockerfile, a script or Markdown."""
    joined = re.sub(r"\\\n", " ", text)
    for match in _PIP.finditer(joined):
        line = joined[: match.start()].count("\n") + 1
        words = match.group(1).split()
        for word in pip_install_targets(words):
            if word.startswith("$"):
                out.unknown.append(f"{relative}:{line} {word}")
                continue
            if word == "\\":
                continue
            _requirement(word, f"{relative}:{line}", out, os.path.dirname(relative))


def _pyproject(relative: str, text: str, out: Declared) -> None:
    import tomllib

    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        out.unknown.append(f"{relative} (not readable TOML)")
        return
    project = data.get("project") or {}
    items = list(project.get("dependencies") or [])
    for extra in (project.get("optional-dependencies") or {}).values():
        items += list(extra or [])
    for group in (data.get("dependency-groups") or {}).values():
        items += [i for i in group or [] if isinstance(i, str)]
    for item in items:
        if isinstance(item, str):
            _requirement(item.split(";")[0], relative, out, os.path.dirname(relative))
    poetry = (data.get("tool") or {}).get("poetry") or {}
    tables = [poetry.get("dependencies") or {}, poetry.get("dev-dependencies") or {}]
    tables += [(g or {}).get("dependencies") or {} for g in (poetry.get("group") or {}).values()]
    for table in tables:
        for name, spec in table.items():
            if name.lower() == "python":
                continue
            if isinstance(spec, dict) and ("git" in spec or "path" in spec or "url" in spec):
                out.unknown.append(f"{relative} {name}")
            out.names.add(normalize(name))


def _literal_strings(node: ast.AST, assigned: dict[str, ast.AST], depth: int = 0) -> list[str] | None:
    """The strings of a literal list/tuple/dict of lists (following module-level names); None when computed."""
    if depth > 4:
        return None
    if isinstance(node, ast.Name) and node.id in assigned:
        return _literal_strings(assigned[node.id], assigned, depth + 1)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        out: list[str] = []
        for element in node.elts:
            if isinstance(element, ast.Constant) and isinstance(element.value, str):
                out.append(element.value)
            else:
                found = _literal_strings(element, assigned, depth + 1)
                if found is None:
                    return None
                out += found
        return out
    if isinstance(node, ast.Dict):
        out = []
        for value in node.values:
            found = _literal_strings(value, assigned, depth + 1)
            if found is None:
                return None
            out += found
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal_strings(node.left, assigned, depth + 1), _literal_strings(node.right, assigned, depth + 1)
        return None if left is None or right is None else left + right
    return None


def _setup_py(relative: str, text: str, out: Declared) -> None:
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        out.unknown.append(f"{relative} (not readable Python)")
        return
    assigned = {t.id: n.value for n in module.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    for node in ast.walk(module):
        if not isinstance(node, ast.Call) or (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) != "setup":
            continue
        for keyword in node.keywords:
            if keyword.arg is None:
                out.unknown.append(f"{relative} setup(**...)")
            elif keyword.arg in ("install_requires", "extras_require"):
                found = _literal_strings(keyword.value, assigned)
                if found is None:
                    out.unknown.append(f"{relative} {keyword.arg} computed at run time")
                    continue
                for item in found:
                    _requirement(item.split(";")[0], relative, out, os.path.dirname(relative))


def _setup_cfg(relative: str, text: str, out: Declared) -> None:
    section = None
    collecting = False
    for line in text.splitlines():
        header = re.match(r"^\s*\[([^\]]+)\]", line)
        if header:
            section, collecting = header.group(1).strip(), False
            continue
        key = re.match(r"^([A-Za-z_][\w-]*)\s*=\s*(.*)$", line)
        if key:
            collecting = section == "options.extras_require" or (section == "options" and key.group(1) == "install_requires")
            if collecting and key.group(2).strip():
                _requirement(key.group(2).split(";")[0], relative, out, os.path.dirname(relative))
            continue
        if collecting and line.strip():
            _requirement(line.strip().split(";")[0], relative, out, os.path.dirname(relative))


def _environment(relative: str, text: str, out: Declared) -> None:
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        out.unknown.append(f"{relative} (not readable YAML)")
        return
    if not isinstance(data, dict):
        return
    for item in data.get("dependencies") or []:
        if isinstance(item, str):
            name = re.split(r"[=<>!\s]", item.split("::")[-1], maxsplit=1)[0]
            _requirement(name, relative, out, os.path.dirname(relative))
        elif isinstance(item, dict):
            for pip in item.get("pip") or []:
                if isinstance(pip, str) and not pip.startswith("-r"):
                    _requirement(pip.split(";")[0], relative, out, os.path.dirname(relative))


def _pipfile(relative: str, text: str, out: Declared) -> None:
    import tomllib

    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        out.unknown.append(f"{relative} (not readable TOML)")
        return
    for table in ("packages", "dev-packages"):
        for name in (data.get(table) or {}):
            out.names.add(normalize(name))


def _read(path: str) -> str | None:
    try:
        if os.path.getsize(path) > 2_000_000:
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


@lru_cache(maxsize=64)
def declared(root: str) -> Declared:
    """Every distribution the repository at ``root`` declares (see the module's list of places)."""
    found = tree(root)
    out = Declared()
    scanned = set(found.dependencies)
    for relative in found.dependencies:
        text = _read(os.path.join(root, relative))
        if text is None:
            out.unknown.append(f"{relative} (not read)")
            continue
        name = os.path.basename(relative).lower()
        before = (len(out.names), len(out.unknown))
        if name == "pyproject.toml":
            _pyproject(relative, text, out)
        elif name == "setup.py":
            _setup_py(relative, text, out)
        elif name == "setup.cfg":
            _setup_cfg(relative, text, out)
        elif name == "pipfile":
            _pipfile(relative, text, out)
        elif name.endswith((".yml", ".yaml")):
            _environment(relative, text, out)
        elif "dockerfile" in name:
            _pip_lines(relative, text, out)
        else:
            _requirements_file(relative, text, out, scanned)
        if (len(out.names), len(out.unknown)) != before:
            out.files.append(relative)
    for relative in (*found.scripts, *found.markdown):
        text = _read(os.path.join(root, relative))
        if text is not None and "install" in text:
            before = (len(out.names), len(out.unknown))
            _pip_lines(relative, text, out)
            if (len(out.names), len(out.unknown)) != before:
                out.files.append(relative)
    return out


def clear_cache() -> None:
    declared.cache_clear()


__all__ = ["IMPORT_NAMES", "Declared", "clear_cache", "declared"]

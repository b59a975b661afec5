"""git's ignore rules, checked against git itself.

dslint's matcher (dslint/files/gitignore.py) and the walk that prunes ignored folders
(dslint/files/discovery.py) must keep exactly the files that ``git ls-files --others
--exclude-standard`` lists: generated trees with generated ``.gitignore`` files at several
levels, ``.git/info/exclude`` and a global excludes file, negations, directory-only and
anchored patterns, ``**`` and bracket expressions.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dslint.config import Scopes, Settings
from dslint.files.discovery import NOT_READ, discover
from dslint.files.gitignore import IgnoreFile, compile_line, global_excludes_file, find_repository

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed: it is the oracle")

NAMES = ["a", "b", "ab", "x1", "x.y", "c d", "[x]", "A", "]", "a-b"]


def _git_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k not in ("XDG_CONFIG_HOME",)}
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", XDG_CONFIG_HOME=str(home / ".config"))
    return env


def _git(cwd: Path, home: Path, *args: str) -> str:
    run = subprocess.run(["git", *args], cwd=cwd, env=_git_env(home), capture_output=True, text=True, check=True)
    return run.stdout


def _git_kept(repo: Path, home: Path) -> set[str]:
    listing = _git(repo, home, "ls-files", "-z", "--others", "--exclude-standard")
    return {name for name in listing.split("\0") if name}


def _dslint_kept(top: Path, repo: Path) -> set[str]:
    candidates, _ = discover([str(top)], cwd=repo, scopes=Scopes.fixed(Settings(root=repo)))
    return {Path(os.path.relpath(c.path, repo)).as_posix() for c in candidates}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_CONFIG_GLOBAL", "GIT_DIR", "GIT_WORK_TREE"):
        monkeypatch.delenv(name, raising=False)
    return home


# ---- generated cases ----------------------------------------------------------------------------

_segment = st.sampled_from(NAMES + [
    "*", "?", "x*", "*.json", "[ab]*", "[!a]*", "[a-c]", "**", "***", "**b", "[[:upper:]]", "\\[x]", "c\\ d", "[]]", "[!]a]",
    "[a-]", "[-a]", "\\*", "[[:alpha:][:digit:]]*",
])


@st.composite
def _pattern(draw) -> str:
    parts = draw(st.lists(_segment, min_size=1, max_size=3))
    text = "/".join(parts)
    if draw(st.booleans()) and not text.startswith("/"):
        text = "/" + text if draw(st.booleans()) else "**/" + text
    if draw(st.integers(0, 3)) == 0:
        text += "/"
    if draw(st.integers(0, 3)) == 0:
        text = "!" + text
    if draw(st.integers(0, 8)) == 0:
        text += "   "  # trailing spaces are trimmed
    return text


_folder = st.lists(st.sampled_from(NAMES), min_size=0, max_size=3).map(tuple)
_tree = st.lists(st.tuples(_folder, st.sampled_from(NAMES)), min_size=1, max_size=14)
_ignores = st.dictionaries(_folder, st.lists(_pattern(), min_size=1, max_size=6), max_size=4)


def _build(repo: Path, tree, ignores, info: list[str], global_patterns: list[str], home: Path) -> None:
    for folder, name in tree:
        target = repo.joinpath(*folder, name + ".json")
        if any(p.exists() and not p.is_dir() for p in [repo.joinpath(*folder[:i]) for i in range(1, len(folder) + 1)]):
            continue  # a file already holds that folder's name
        if target.is_dir():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("{}\n", encoding="utf-8")
    for folder, patterns in ignores.items():
        directory = repo.joinpath(*folder)
        if directory.exists() and not directory.is_dir():
            continue
        directory.mkdir(parents=True, exist_ok=True)
        (directory / ".gitignore").write_text("\n".join(patterns) + "\n", encoding="utf-8")
    (repo / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("\n".join(info) + "\n", encoding="utf-8")
    (home / ".config" / "git").mkdir(parents=True, exist_ok=True)
    (home / ".config" / "git" / "ignore").write_text("\n".join(global_patterns) + "\n", encoding="utf-8")


@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(tree=_tree, ignores=_ignores, info=st.lists(_pattern(), max_size=2), global_patterns=st.lists(_pattern(), max_size=2))
def test_the_walk_keeps_what_git_keeps(tmp_path_factory, home, tree, ignores, info, global_patterns):
    repo = tmp_path_factory.mktemp("repo")
    _git(repo, home, "init", "-q")
    _build(repo, tree, ignores, info, global_patterns, home)
    expected = {name for name in _git_kept(repo, home) if name.endswith(".json")}
    assert _dslint_kept(repo, repo) == expected


# ---- hand-written cases, each also checked against git -------------------------------------------

CASES = [
    # (gitignore lines, files present, files git keeps)
    (["output/"], ["output/checkpoint-1/config.json", "src/output/x.json", "outputs.json"], ["outputs.json"]),
    (["/build"], ["build/a.json", "src/build/b.json"], ["src/build/b.json"]),
    (["*.json", "!keep.json"], ["a.json", "d/keep.json", "d/b.json"], ["d/keep.json"]),
    (["data/*", "!data/configs/"], ["data/x.json", "data/configs/ds.json"], ["data/configs/ds.json"]),
    (["data/", "!data/configs/"], ["data/x.json", "data/configs/ds.json"], []),  # a file in an ignored folder stays ignored
    (["a/**/b.json"], ["a/b.json", "a/x/y/b.json", "c/a/b.json"], ["c/a/b.json"]),
    (["**/ckpt"], ["ckpt/a.json", "x/ckpt/b.json", "ckpt.json"], ["ckpt.json"]),
    (["logs/**"], ["logs/a.json", "logs/d/b.json", "x/logs/c.json"], ["x/logs/c.json"]),
    (["foo**bar.json"], ["fooxbar.json", "foo/bar.json"], ["foo/bar.json"]),
    (["\\#hash.json", "#comment.json", "\\!bang.json"], ["#hash.json", "#comment.json", "!bang.json"], ["#comment.json"]),
    (["trailing.json   ", "space\\ .json"], ["trailing.json", "space .json"], []),
    (["[a-c].json", "[!x]y.json"], ["a.json", "d.json", "xy.json", "zy.json"], ["d.json", "xy.json"]),
    (["d/"], ["d", "e/d/x.json"], ["d"]),  # a file named d is not a folder
    (["ckpt-*/", "!ckpt-best/"], ["ckpt-1/a.json", "ckpt-best/a.json"], ["ckpt-best/a.json"]),
]


@pytest.mark.parametrize("lines, files, kept", CASES, ids=[c[0][0].strip() for c in CASES])
def test_cases_agree_with_git(tmp_path, home, lines, files, kept):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, home, "init", "-q")
    (repo / ".gitignore").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for name in files:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("{}\n", encoding="utf-8")
    assert {n for n in _git_kept(repo, home) if n != ".gitignore"} == set(kept)
    assert _dslint_kept(repo, repo) == {k for k in kept if k.endswith(".json")}


def test_gitignore_in_a_subfolder_is_relative_to_it(tmp_path, home):
    repo = tmp_path / "repo"
    (repo / "exp").mkdir(parents=True)
    _git(repo, home, "init", "-q")
    (repo / "exp" / ".gitignore").write_text("/runs/\n*.tmp.json\n", encoding="utf-8")
    for name in ("runs/a.json", "exp/runs/a.json", "exp/b.tmp.json", "b.tmp.json", "exp/sub/runs/c.json"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("{}\n", encoding="utf-8")
    expected = {n for n in _git_kept(repo, home) if n.endswith(".json")}
    assert expected == {"runs/a.json", "b.tmp.json", "exp/sub/runs/c.json"}
    assert _dslint_kept(repo, repo) == expected
    # walking from inside the repository reads the .gitignore files above the walked folder
    assert _dslint_kept(repo / "exp", repo) == {"exp/sub/runs/c.json"}


def test_core_excludes_file_from_git_config(tmp_path, home):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, home, "init", "-q")
    (home / "my-ignores").write_text("scratch/\n", encoding="utf-8")
    (home / ".gitconfig").write_text('[user]\n\tname = x\n[core]\n\texcludesFile = "~/my-ignores"  ; a comment\n', encoding="utf-8")
    (home / ".config" / "git").mkdir(parents=True, exist_ok=True)
    (home / ".config" / "git" / "ignore").write_text("*.json\n", encoding="utf-8")  # not read: core.excludesFile wins
    for name in ("scratch/a.json", "b.json"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("{}\n", encoding="utf-8")
    assert _git_kept(repo, home) == {"b.json"}
    assert global_excludes_file(find_repository(repo)) == home / "my-ignores"
    assert _dslint_kept(repo, repo) == {"b.json"}


def test_a_linked_worktree_reads_info_exclude_of_the_main_repository(tmp_path, home):
    main = tmp_path / "main"
    main.mkdir()
    _git(main, home, "init", "-q")
    _git(main, home, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "start")
    _git(main, home, "worktree", "add", "-q", str(tmp_path / "wt"))
    (main / ".git" / "info").mkdir(exist_ok=True)
    (main / ".git" / "info" / "exclude").write_text("private/\n", encoding="utf-8")
    worktree = tmp_path / "wt"
    for name in ("private/a.json", "public.json"):
        (worktree / name).parent.mkdir(parents=True, exist_ok=True)
        (worktree / name).write_text("{}\n", encoding="utf-8")
    assert _git_kept(worktree, home) == {"public.json"}
    assert _dslint_kept(worktree, worktree) == {"public.json"}


def test_a_nested_repository_has_its_own_rules(tmp_path, home):
    outer = tmp_path / "outer"
    outer.mkdir()
    _git(outer, home, "init", "-q")
    (outer / ".gitignore").write_text("*.log.json\n", encoding="utf-8")
    inner = outer / "vendor" / "lib"
    inner.mkdir(parents=True)
    _git(inner, home, "init", "-q")
    (inner / ".gitignore").write_text("gen/\n", encoding="utf-8")
    for name in ("a.log.json", "vendor/lib/b.log.json", "vendor/lib/gen/c.json", "vendor/lib/d.json"):
        (outer / name).parent.mkdir(parents=True, exist_ok=True)
        (outer / name).write_text("{}\n", encoding="utf-8")
    inside = {f"vendor/lib/{n}" for n in _git_kept(inner, home) if n.endswith(".json")}
    assert inside == {"vendor/lib/b.log.json", "vendor/lib/d.json"}
    assert _dslint_kept(outer, outer) == inside


def test_without_a_repository_only_the_walked_gitignore_files_count(tmp_path, home):
    """A copy without .git (rsync, a tarball): its .gitignore files still describe it; nothing above the walk does."""
    (tmp_path / ".gitignore").write_text("*.json\n", encoding="utf-8")  # above the walked folder: not read
    project = tmp_path / "project"
    (project / "output").mkdir(parents=True)
    (project / ".gitignore").write_text("output/\n", encoding="utf-8")
    (project / "output" / "a.json").write_text("{}\n", encoding="utf-8")
    (project / "ds.json").write_text("{}\n", encoding="utf-8")
    assert _dslint_kept(project, project) == {"ds.json"}


def test_no_respect_gitignore_and_explicit_files(tmp_path, home, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "output").mkdir(parents=True)
    _git(repo, home, "init", "-q")
    (repo / ".gitignore").write_text("output/\n", encoding="utf-8")
    (repo / "output" / "ds.json").write_text("{}\n", encoding="utf-8")
    monkeypatch.chdir(repo)
    walked, skipped = discover(["."], cwd=repo, scopes=Scopes.fixed(Settings(root=repo, respect_gitignore=False)))
    assert [c.display for c in walked] == ["output/ds.json"]
    walked, skipped = discover(["."], cwd=repo, scopes=Scopes.fixed(Settings(root=repo)))
    assert walked == [] and [s for s in skipped if s[1] != NOT_READ] == [("output/", "ignored by .gitignore:1: output/")]
    assert (".gitignore", NOT_READ) in skipped  # passed over by its name (listed by -v)
    # named on the command line: read, as ruff does (git itself ignores only untracked files)
    named, _ = discover(["output/ds.json"], cwd=repo, scopes=Scopes.fixed(Settings(root=repo)))
    assert [c.display for c in named] == ["output/ds.json"]


@pytest.mark.parametrize("line, path, is_dir, ignored", [
    ("*.json", "a/b.json", False, True),
    ("/*.json", "a/b.json", False, False),
    ("a/", "a", False, False),
    ("a/", "a", True, True),
    ("[z-a]", "z", False, True),  # a reversed range matches its first character (wildmatch.c)
    ("[[:nope:]]", "n", False, False),  # an unknown class matches nothing
    ("x\\", "x", False, False),  # a trailing backslash matches nothing
    ("[ab", "a", False, False),  # an unterminated bracket matches nothing
])
def test_single_patterns(line, path, is_dir, ignored):
    compiled = IgnoreFile([compile_line(line, "", "t", 1)])
    assert (compiled.match(path, is_dir) is not None) is ignored

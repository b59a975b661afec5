"""Continuation and environment traps: places where bash reads the text differently from how it looks.

Found on the raw text, as bash reads it (comments, multi-line strings and here-document bodies are
not code).
"""

from __future__ import annotations

import bisect
import re

from dslint.source import SourceFile, Span

from .launchers import PYTHON_RE, is_launch_env_var, is_launcher_name
from .model import Script, Trap, Word

_BACKSLASH_EOL = re.compile(r"\\[ \t]*\r?$", re.M)


def _merge_ranges(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for s, e in sorted(ranges):
        if merged and s <= merged[-1][1]:
            if e > merged[-1][1]:
                merged[-1] = (merged[-1][0], e)
        else:
            merged.append((s, e))
    return merged


def _blank_line_trap(source: SourceFile, line: int, span: Span, code) -> Trap:
    """What a blank line after ``\\`` does depends on what surrounds it."""
    first = line
    while first > 1:
        prev = source.line_text(first - 1).rstrip(" \t")
        if not prev.endswith("\\") or not code(source.line_end(first - 1) - 1):
            break
        first -= 1
    block = [source.line_text(ln).strip().rstrip("\\").strip() for ln in range(first, line + 1)]
    follow = ""
    for ln in range(line + 2, source.line_count + 1):
        candidate = source.line_text(ln).strip()
        if candidate and not candidate.startswith("#"):
            follow = candidate
            break
    if block and all(re.match(r"[A-Za-z_][A-Za-z0-9_]*=", part) for part in block if part):
        return Trap("blank-line-after-continuation", span, lost_env=True)
    if follow.startswith("-"):
        return Trap("blank-line-after-continuation", span, orphans=follow)
    return Trap("blank-line-after-continuation", span, harmless=True)


def _comment_trap(source: SourceFile, line: int, span: Span) -> Trap:
    for ln in range(line + 1, source.line_count + 1):
        follow = source.line_text(ln).strip()
        if not follow or follow.startswith("#"):
            continue
        if follow.startswith("-"):
            return Trap("comment-in-continuation", span, orphans=follow)
        break
    return Trap("comment-in-continuation", span, harmless=True)


def find_traps(script: Script, excluded_bytes: list[tuple[int, int]]) -> None:
    source = script.source
    text = source.text
    cho = source.char_offset
    ranges = _merge_ranges([(cho(s), cho(e)) for s, e in excluded_bytes])
    starts = [r[0] for r in ranges]
    traps = script.continuation_traps

    def code(pos: int) -> bool:
        """True when ``pos`` is shell code (not in a comment, a multi-line string or a here-document)."""
        k = bisect.bisect_right(starts, pos) - 1
        return k < 0 or pos >= ranges[k][1]

    # CRLF: one finding per file, at the first CRLF line
    crlf = text.find("\r\n")
    if crlf != -1:
        traps.append(
            Trap("crlf-line-endings", Span(source, crlf, crlf + 1))
        )

    count = source.line_count
    for found in _BACKSLASH_EOL.finditer(text):
        line = source.position(found.start())[0]
        start = source.line_start(line)
        end = source.line_end(line)  # before the \r\n or \n
        content = text[start:end]
        stripped = content.rstrip(" \t")
        if not stripped.endswith("\\"):
            continue  # pragma: no cover - the pattern only finds lines ending in a backslash
        bs_pos = start + len(stripped) - 1
        if (len(stripped) - len(stripped.rstrip("\\"))) % 2 == 0:
            continue  # an escaped backslash, not a continuation
        if not code(bs_pos):
            continue
        if text[end : end + 1] == "\r":
            continue  # `\` + CR: bash escapes the CR and the line does not continue (crlf-line-endings says so)
        if len(stripped) == len(content):
            script.continued_lines.add(line)
        if len(stripped) < len(content):
            traps.append(
                Trap("space-after-backslash", Span(source, bs_pos, end))
            )
            continue
        if text[bs_pos + 1 :] in ("", "\n"):
            # the `\` continues into the end of the file; with a blank line after it, the
            # command ends at that blank line instead (blank-line-after-continuation)
            traps.append(Trap("trailing-backslash-at-eof", Span(source, bs_pos, bs_pos + 1)))
            continue
        if line >= count:
            continue
        nstart = source.line_start(line + 1)
        nend = source.line_end(line + 1)
        nxt = text[nstart:nend]
        if not nxt.strip():
            traps.append(
_blank_line_trap(source, line, Span(source, nstart, nend), code)
            )
            continue
        lead = len(nxt) - len(nxt.lstrip(" \t"))
        if nxt[lead : lead + 1] == "#" and not code(nstart + lead):
            traps.append(
_comment_trap(source, line + 1, Span(source, nstart + lead, nend))
            )


_BETWEEN_LINE = re.compile(r"\s*(?:#.*|(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*\+?=.*|[;\\]\s*)?\Z")


def env_after_command(script: Script, events: list[tuple]) -> None:
    """Traps of environment variables set where the launcher does not see them; ``events`` are the
    walker's assignments and commands in the order it read them."""
    source = script.source
    traps = script.continuation_traps
    other_trap_lines = {
        source.position(t.span.start)[0]
        for t in traps
        if t.code_name in ("blank-line-after-continuation", "comment-in-continuation", "space-after-backslash")
    }
    _exported_before_blank_line(script, events)
    # (a) VAR=value written after the launcher's name
    traps.extend(_env_words_after_launcher(script))
    # (b) VAR=value lines without export right before a launcher that reads VAR
    for group, ctx, end in _assignment_groups(events):
        cmd = _launcher_after(events, end, ctx)
        if cmd is None:
            continue
        trap = _unexported(script, group, cmd, other_trap_lines)
        if trap is not None:
            traps.append(trap)


def _exported_before_blank_line(script: Script, events: list[tuple]) -> None:
    """A blank line after ``VAR=value \\`` lines makes them plain assignments, but assigning to a
    variable that is already exported (``export VAR`` earlier, ``set -a``) keeps it exported: the
    command after the blank line still gets the value, and nothing is lost."""
    source = script.source
    for trap in script.continuation_traps:
        if trap.code_name != "blank-line-after-continuation" or not trap.lost_env:
            continue
        line = source.position(trap.span.start)[0] - 1
        block = set()
        while line >= 1 and line in script.continued_lines:
            block.add(line)
            line -= 1
        assigned = [item for kind, item, ctx, _ in events
                    if kind == "assign" and not ctx.from_eval and source.position(item.span.start)[0] in block]
        if assigned and all(a.exported for a in assigned):
            trap.lost_env = False
            trap.harmless = True


def _env_words_after_launcher(script: Script) -> list[Trap]:
    """``torchrun VAR=value ...``: the launcher takes the assignment as an argument."""
    out = []
    for cmd in script.commands:
        base = cmd.basename
        if not is_launcher_name(base) or cmd.from_eval:
            continue
        prev: Word | None = None
        for w in cmd.args:
            m = re.match(r"([A-Z][A-Z0-9_]*)=", w.raw)
            if (
                m
                and (prev is None or not prev.raw.startswith("-") or "=" in prev.raw)
                and (not PYTHON_RE.match(base or "") or is_launch_env_var(m.group(1)))
            ):
                out.append(Trap("env-after-command", w.span, word=w.raw, names=(m.group(1),), command=base))
            prev = w
    return out


def _assignment_groups(events: list[tuple]):
    """(assignments of one statement, its ctx, the index of the event after them), outside eval."""
    k = 0
    n = len(events)
    while k < n:
        kind, item, ctx, key = events[k]
        if kind != "assign":
            k += 1
            continue
        group = [item]
        j = k + 1
        while j < n and events[j][0] == "assign" and events[j][3] == key:
            group.append(events[j][1])
            j += 1
        k = j
        if not ctx.from_eval:
            yield group, ctx, j


def _launcher_after(events: list[tuple], start: int, ctx):
    """The launcher command that runs next after the events before ``start`` (only assignments
    between), in the same function, branch and loop; None if there is none."""
    n = len(events)
    m = start
    while m < n and events[m][0] in ("assign", "export") and events[m][2].function == ctx.function:
        m += 1
    if m >= n or events[m][0] != "command":
        return None
    cmd = events[m][1]
    cctx = events[m][2]
    if (
        cmd.from_eval
        or cctx.function != ctx.function
        or cctx.conditional != ctx.conditional
        or cctx.in_loop != ctx.in_loop
        or not is_launcher_name(cmd.basename)
    ):
        return None
    return cmd


def _unexported(script: Script, group: list, cmd, other_trap_lines: set[int]) -> Trap | None:
    """env-not-exported: the assignments written on the lines right before the launcher that it
    reads from its environment, when they are not exported."""
    source = script.source
    text = source.text
    base = cmd.basename
    last = group[-1]
    first_line = source.position(last.span.end)[0]
    cmd_line = source.position(cmd.span.start)[0]
    tail = text[last.span.end : source.line_end(first_line)]
    if not _BETWEEN_LINE.match(tail) or not all(_BETWEEN_LINE.match(source.line_text(ln)) for ln in range(first_line + 1, cmd_line)):
        return None
    if any(source.position(a.span.start)[0] <= ln <= cmd_line for ln in other_trap_lines for a in group[:1]):
        return None
    cmd_text = text[cmd.span.start : cmd.span.end]
    missed = [
        a
        for a in group
        if not a.exported
        and is_launch_env_var(a.name, base)
        and a.name not in cmd.environment
        and not re.search(r"\$\{?" + re.escape(a.name) + r"\b", cmd_text)
    ]
    if not missed:
        return None
    continued = len(group) > 1 and source.position(group[0].span.start)[0] != first_line
    return Trap(
        "env-not-exported",
        Span(source, missed[-1].span.start, missed[-1].span.end) if continued else missed[0].span,
        names=tuple(a.name for a in missed),
        command=base,
        command_line=cmd_line,
        continued=continued,
    )

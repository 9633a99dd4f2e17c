"""File tools of the repository interface: list_dir, view_file, search, edit, replace_text, create_file, diff.

Every path is relative to the repository root and checked by ``env.workspace.check_path``;
binary, oversized and missing files, bad ranges and ambiguous edits get a clear error, and so does a write that
would take the workspace past its quota (``WorkspaceQuota``, the one ``run_bash`` commands run against).
"""

from __future__ import annotations

from pathlib import Path

import regex
from pydantic import BaseModel, ConfigDict, Field

from env.patches import make_patch
from env.project import MAX_FILE_BYTES, is_test_path
from env.sandbox.quota import Usage, footprint, measure, quota_error
from env.tools.base import NoArgs, Tool, ToolContext, ToolError, ToolResult, ToolTimeout, register
from env.workspace import PathError

MAX_VIEW_LINES = 400
MAX_WRITE_CHARS = 256 * 1024
MAX_LINE_SHOWN = 400
CONTEXT_LINES = 3
SEARCH_SECONDS = 1.0


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _resolve(ctx: ToolContext, path: str) -> Path:
    try:
        return ctx.workspace.resolve(path)
    except PathError as exc:
        raise ToolError(str(exc)) from None


def _rel(ctx: ToolContext, full: Path) -> str:
    return full.relative_to(ctx.workspace.root).as_posix()


def read_text(ctx: ToolContext, path: str) -> tuple[Path, str]:
    full = _resolve(ctx, path)
    if full.is_dir():
        raise ToolError(f"{path!r} is a directory; use list_dir to see its contents")
    if not full.is_file():
        raise ToolError(f"no file {path!r} in the repository (use list_dir or search to find files)")
    size = full.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ToolError(f"{path!r} is {size} bytes; files over {MAX_FILE_BYTES} bytes cannot be opened")
    data = full.read_bytes()
    if b"\0" in data:
        raise ToolError(f"{path!r} is a binary file")
    try:
        return full, data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{path!r} is not UTF-8 text") from None


def _write(ctx: ToolContext, full: Path, text: str) -> None:
    data = text.encode("utf-8")
    quota = ctx.runtime.shell.limits.quota
    used = measure([ctx.workspace.root], quota)  # stops counting once over: never more than the quota's files
    if full.exists():
        info = full.stat()
        after = Usage(bytes=used.bytes - max(info.st_size, info.st_blocks * 512) + footprint(len(data)), files=used.files)
    else:
        missing = [p for p in full.relative_to(ctx.workspace.root).parents if p != Path(".") and not (ctx.workspace.root / p).exists()]
        after = Usage(bytes=used.bytes + footprint(len(data)), files=used.files + 1 + len(missing))
    if after.over(quota):
        raise ToolError(quota_error(quota, after, f"writing {_rel(ctx, full)!r}"))
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_bytes(data)


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_SHOWN else line[:MAX_LINE_SHOWN] + " [...]"


def numbered(lines: list[str], first: int) -> str:
    width = len(str(first + len(lines) - 1))
    return "\n".join(f"{n:>{width}} | {_clip(line)}" for n, line in enumerate(lines, start=first))


def _check_text(name: str, text: str) -> None:
    if len(text) > MAX_WRITE_CHARS:
        raise ToolError(f"'{name}' is {len(text)} characters; the limit is {MAX_WRITE_CHARS}")
    if "\0" in text:
        raise ToolError(f"'{name}' contains a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError(f"'{name}' is not valid UTF-8 text (it contains a lone surrogate)") from None


def _split(text: str) -> list[str]:
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n") if text else []


def _join(lines: list[str]) -> str:
    return "\n".join(lines) + "\n" if lines else ""


def _edited_region(path: str, lines: list[str], start: int, count: int, delta: int) -> ToolResult:
    lo = max(1, start - CONTEXT_LINES)
    hi = min(len(lines), start + count - 1 + CONTEXT_LINES)
    shown = numbered(lines[lo - 1 : hi], lo) if lines else "(the file is now empty)"
    sign = f"{delta:+d}"
    head = f"Edited {path}: lines {start}-{start + count - 1} now hold the new text ({sign} lines). The file has {len(lines)} lines.\n"
    if count == 0:
        head = f"Edited {path}: lines removed ({sign} lines). The file has {len(lines)} lines.\n"
    return ToolResult(
        output=head + shown,
        data={"path": path, "start_line": start, "end_line": start + count - 1, "line_delta": delta, "total_lines": len(lines)},
        edited=True,
    )


# -- the tools ---------------------------------------------------------------------------------


class ListDirArgs(_Args):
    path: str = Field(".", description="Directory relative to the repository root")


@register
class ListDir(Tool[ListDirArgs]):
    name = "list_dir"
    description = "List a directory of the repository (directories end with '/')."
    Args = ListDirArgs

    def run(self, ctx: ToolContext, args: ListDirArgs) -> ToolResult:
        full = _resolve(ctx, args.path)
        if not full.is_dir():
            raise ToolError(f"{args.path!r} is not a directory" + (" (it is a file: use view_file)" if full.is_file() else ""))
        entries = sorted(
            (p.name + "/" if p.is_dir() else p.name)
            for p in full.iterdir()
            if p.name not in (".git", "__pycache__") and not p.is_symlink()
        )
        return ToolResult(output="\n".join(entries) or "(empty directory)", data={"entries": entries})


class ViewFileArgs(_Args):
    path: str = Field(description="File relative to the repository root")
    start_line: int | None = Field(None, ge=1, description="First line to show (1-based)")
    end_line: int | None = Field(None, ge=1, description="Last line to show (inclusive)")


@register
class ViewFile(Tool[ViewFileArgs]):
    name = "view_file"
    description = f"Show a file with line numbers, optionally a line range (at most {MAX_VIEW_LINES} lines at a time)."
    Args = ViewFileArgs

    def run(self, ctx: ToolContext, args: ViewFileArgs) -> ToolResult:
        full, text = read_text(ctx, args.path)
        lines = _split(text)
        total = len(lines)
        start = args.start_line or 1
        end = args.end_line or min(total, start + MAX_VIEW_LINES - 1)
        if total == 0:
            return ToolResult(output=f"{args.path} is empty", data={"path": _rel(ctx, full), "total_lines": 0})
        if start > total:
            raise ToolError(f"start_line {start} is past the end of {args.path} ({total} lines)")
        if end < start:
            raise ToolError(f"end_line {end} is before start_line {start}")
        end = min(end, total, start + MAX_VIEW_LINES - 1)
        body = numbered(lines[start - 1 : end], start)
        note = "" if (start, end) == (1, total) else f"\n[lines {start}-{end} of {total}]"
        return ToolResult(output=body + note, data={"path": _rel(ctx, full), "start_line": start, "end_line": end, "total_lines": total})


class SearchArgs(_Args):
    pattern: str = Field(min_length=1, max_length=500, description="Text to find (a regular expression if regex is true)")
    path: str = Field(".", description="File or directory to search in")
    regex: bool = Field(False, description="Treat pattern as a regular expression")
    max_results: int = Field(50, ge=1, le=200)


@register
class Search(Tool[SearchArgs]):
    name = "search"
    description = "Find lines containing a text (or matching a regular expression) in the repository's files."
    Args = SearchArgs

    def run(self, ctx: ToolContext, args: SearchArgs) -> ToolResult:
        full = _resolve(ctx, args.path)
        if not full.exists():
            raise ToolError(f"no file or directory {args.path!r} in the repository")
        try:
            compiled = regex.compile(args.pattern if args.regex else regex.escape(args.pattern))
        except regex.error as exc:
            raise ToolError(f"invalid regular expression: {exc}") from None
        files = [full] if full.is_file() else sorted(p for p in full.rglob("*") if p.is_file() and ".git" not in p.relative_to(ctx.workspace.root).parts)
        hits: list[str] = []
        more = 0
        for path in files:
            if path.is_symlink() or path.stat().st_size > MAX_FILE_BYTES:
                continue
            try:
                text = path.read_bytes().decode("utf-8")
            except UnicodeDecodeError:
                continue
            for number, line in enumerate(text.split("\n"), start=1):
                try:
                    found = compiled.search(line[:2000], timeout=SEARCH_SECONDS)
                except TimeoutError:
                    raise ToolTimeout("the pattern took too long to match; use a simpler pattern") from None
                if found:
                    if len(hits) < args.max_results:
                        hits.append(f"{_rel(ctx, path)}:{number}: {_clip(line.strip())}")
                    else:
                        more += 1
        if not hits:
            return ToolResult(output=f"no matches for {args.pattern!r}", data={"matches": 0})
        tail = f"\n[{more} more matches not shown; narrow the path or the pattern]" if more else ""
        return ToolResult(output="\n".join(hits) + tail, data={"matches": len(hits) + more})


class EditArgs(_Args):
    path: str = Field(description="File relative to the repository root")
    start_line: int = Field(ge=1, description="First line to replace (1-based)")
    end_line: int = Field(ge=0, description="Last line to replace (inclusive); start_line - 1 inserts before start_line")
    new_text: str = Field(description="The replacement lines (empty to delete the range)")


@register
class Edit(Tool[EditArgs]):
    name = "edit"
    description = (
        "Replace lines start_line..end_line of a file with new_text (end_line = start_line - 1 inserts). "
        "Returns the edited region with its new line numbers."
    )
    Args = EditArgs

    def run(self, ctx: ToolContext, args: EditArgs) -> ToolResult:
        _check_text("new_text", args.new_text)
        full, text = read_text(ctx, args.path)
        lines = _split(text)
        total = len(lines)
        if args.start_line > total + 1:
            raise ToolError(f"start_line {args.start_line} is past the end of {args.path} ({total} lines; {total + 1} appends)")
        if args.end_line > total:
            raise ToolError(f"end_line {args.end_line} is past the end of {args.path} ({total} lines)")
        if args.end_line < args.start_line - 1:
            raise ToolError(f"end_line {args.end_line} is before start_line {args.start_line} (use end_line = start_line - 1 to insert)")
        new_lines = _split(args.new_text)
        lines[args.start_line - 1 : args.end_line] = new_lines
        _write(ctx, full, _join(lines))
        delta = len(new_lines) - (args.end_line - args.start_line + 1)
        return _edited_region(_rel(ctx, full), lines, args.start_line, len(new_lines), delta)


class ReplaceTextArgs(_Args):
    path: str = Field(description="File relative to the repository root")
    old_text: str = Field(min_length=1, description="Exact text to replace; must occur exactly once")
    new_text: str = Field(description="Replacement text")


@register
class ReplaceText(Tool[ReplaceTextArgs]):
    name = "replace_text"
    description = "Replace an exact, unique occurrence of old_text in a file with new_text."
    Args = ReplaceTextArgs

    def run(self, ctx: ToolContext, args: ReplaceTextArgs) -> ToolResult:
        _check_text("new_text", args.new_text)
        full, text = read_text(ctx, args.path)
        count = text.count(args.old_text)
        if count == 0:
            raise ToolError(f"old_text was not found in {args.path}; view the file and copy the exact text (whitespace matters)")
        if count > 1:
            # The same occurrences str.count counted (no overlaps), each line named once with its count.
            lines: dict[int, int] = {}
            at = -len(args.old_text)
            for _ in range(count):
                at = text.find(args.old_text, at + len(args.old_text))
                line = text.count("\n", 0, at) + 1
                lines[line] = lines.get(line, 0) + 1
            shown = [f"{line} (x{n})" if n > 1 else str(line) for line, n in list(lines.items())[:10]]
            raise ToolError(f"old_text occurs {count} times in {args.path} (lines {', '.join(shown)}); include more surrounding text to make it unique")
        at = text.find(args.old_text)
        start = text.count("\n", 0, at) + 1
        updated = text[:at] + args.new_text + text[at + len(args.old_text) :]
        _write(ctx, full, updated)
        old_count = args.old_text.count("\n") + 1
        new_count = args.new_text.count("\n") + 1 if args.new_text else 0
        return _edited_region(_rel(ctx, full), _split(updated), start, new_count, new_count - old_count)


class CreateFileArgs(_Args):
    path: str = Field(description="New file relative to the repository root")
    content: str = Field(description="The file's text")


@register
class CreateFile(Tool[CreateFileArgs]):
    name = "create_file"
    description = "Create a new text file (it must not exist yet; use edit or replace_text to change a file)."
    Args = CreateFileArgs

    def run(self, ctx: ToolContext, args: CreateFileArgs) -> ToolResult:
        _check_text("content", args.content)
        full = _resolve(ctx, args.path)
        if full.exists():
            raise ToolError(f"{args.path!r} already exists; use edit or replace_text to change it")
        if full.parent.exists() and not full.parent.is_dir():
            raise ToolError(f"{_rel(ctx, full.parent)!r} is a file, not a directory")
        _write(ctx, full, args.content)
        rel = _rel(ctx, full)
        note = " (a test file: graded runs use the task's own tests, so it will not count)" if is_test_path(rel) else ""
        return ToolResult(output=f"Created {rel} ({len(_split(args.content))} lines){note}", data={"path": rel}, edited=True)


@register
class Diff(Tool[NoArgs]):
    name = "diff"
    description = "Show your changes so far as a unified diff against the original repository."

    def run(self, ctx: ToolContext, args: NoArgs) -> ToolResult:
        patch = make_patch(ctx.repo_task.files, ctx.workspace.files())
        return ToolResult(output=patch or "(no changes)", data={"changed": bool(patch)})

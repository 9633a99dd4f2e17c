"""Refuses shell commands whose git reaches past the workspace's single, sanitised commit.

    check_command("git log -p")          # None: allowed
    check_command("git log --all")       # "refused by the git guard: `git log --all` reaches history beyond ..."
    check_command("cat .github/ci.yml")  # None: only git invocations are looked at

This is a tool-level check, not the security boundary. It parses the command (``shlex``, after
taking out ``$(...)``, backticks, comments and here-document bodies, each checked on its own) and
looks at every ``git`` word, behind any wrapper (``sudo``, ``env``, ``xargs``, ``nohup`` ...), in
``bash -c``/``sh -c``/``eval`` strings too. A determined command can still hide git from any parser
(a variable, a script it writes, ``python -c``). The real guarantee is elsewhere: the workspace's
``.git`` holds one commit and no other objects, refs, remotes or reflog (``env.workspace``), and
Landlock keeps every other repository on the host, the project's source tree with the tasks' fixes
included, out of the shell's reach (``env.sandbox.shell``). The guard makes the rule explicit and
answers an honest attempt with a clear message instead of a confusing git error.

Allowed: ``git status``, ``diff`` (``HEAD`` too), ``log``, ``show HEAD``, ``blame``, ``grep``, ``ls-files``,
``add``, ``commit``, ``stash`` (its objects are the agent's own), ``archive`` of HEAD, ``checkout``/``restore``.
"""

from __future__ import annotations

import re
import shlex

PREFIX = "refused by the git guard: "
ONE_COMMIT = "the workspace has one commit (HEAD) and no other refs"
MAX_DEPTH = 6

REMOTE_SUBCOMMANDS = frozenset({
    "fetch", "pull", "clone", "remote", "ls-remote", "push", "submodule", "fetch-pack", "send-pack", "upload-pack",
    "receive-pack", "upload-archive", "http-fetch", "http-push", "svn", "p4", "cvsimport", "cvsexportcommit", "cvsserver",
    "archimport", "daemon", "request-pull", "remote-ext", "remote-fd", "remote-http", "remote-https", "remote-ftp",
})  # fmt: skip
HISTORY_SUBCOMMANDS = frozenset({
    "reflog", "fsck", "fast-export", "bundle", "filter-branch", "filter-repo", "replace", "notes", "worktree", "lost-found",
})  # fmt: skip
# Options that walk every ref or the reflog (``--all``, ``--branches=x`` ...), for commands that walk history.
HISTORY_OPTIONS = frozenset({
    "--all", "--reflog", "--branches", "--remotes", "--tags", "--glob", "--walk-reflogs", "--alternate-refs",
    "--batch-all-objects", "--unpacked", "--exclude-hidden",
})  # fmt: skip
# Where ``--all`` means "every file" (``git add --all``, ``git commit -a``), not "every ref".
FILE_COMMANDS = frozenset(
    {"add", "commit", "stash", "rm", "mv", "clean", "restore", "reset", "checkout", "switch", "status", "ls-files", "apply", "branch"}
)
REFLOG_WALKERS = frozenset({"log", "show", "rev-list", "whatchanged", "shortlog", "show-branch"})
STDIN_WALKERS = frozenset({"log", "show", "rev-list", "whatchanged", "shortlog", "diff-tree", "cat-file", "pack-objects", "name-rev"})
OTHER_HEADS = ("ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "BISECT_HEAD", "AUTO_MERGE")
# Options whose value is free text (a message, a pattern, a date), never a revision.
TEXT_OPTIONS = frozenset({
    "-m", "--message", "-F", "--file", "--grep", "--author", "--committer", "-S", "-G", "-e", "--regexp", "-f",
    "--format", "--pretty", "-L", "--since", "--until", "--after", "--before",
})  # fmt: skip
GREP_VALUE_OPTIONS = frozenset({"-e", "--regexp", "-f", "--file"})  # git grep: the pattern comes with these
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh"})
COMMAND_OPTION_TAKERS = frozenset({"su", "runuser", "script", "flock"})  # ``-c CMD``
REDIRECTS = frozenset({"<", ">", ">>", "<<", "<<<", "<>", ">&", "<&", "&>", "&>>", ">|"})

_ENV_ELSEWHERE = re.compile(
    r"(?<![\w])(?:(?:GIT_DIR|GIT_WORK_TREE|GIT_COMMON_DIR|GIT_NAMESPACE)=|GIT_OBJECT_DIRECTORY\b|GIT_ALTERNATE_OBJECT_DIRECTORIES\b)"
)
_ENV_CONFIG = re.compile(r"(?<![\w])GIT_CONFIG\w*=")
_CONFIG_KEYS = re.compile(r"^(?:alias\.|include\.|includeif\.|core\.worktree$)", re.IGNORECASE)
_GIT_MENTION = re.compile(r"(?<![\w.-])git(?![\w.])")
_HEREDOC = re.compile(r"<<(-?)[ \t]*(?:'([^'\n]*)'|\"([^\"\n]*)\"|(\\?)([^\s;&|<>()'\"]+))")  # <<-? 'EOF' "EOF" \EOF EOF
_RANGE = re.compile(r"(?:^|[^/.])\.\.\.?(?:[^/.]|$)")
_PEEL = re.compile(r"\^\{[a-z]*\}$")


class _Unparseable(ValueError):
    pass


def check_command(command: str) -> str | None:
    """The refusal message for a command whose git would reach past HEAD, or None if it may run."""
    return _check(command, 0)


# -- messages ------------------------------------------------------------------------------------


def _remote(what: str) -> str:
    return PREFIX + f"`{what}` reaches other repositories; the workspace has one commit (HEAD), no remotes and no network"


def _history(sub: str) -> str:
    return PREFIX + f"`git {sub}` reaches history beyond the workspace's single commit; {ONE_COMMIT}"


def _option(sub: str, option: str) -> str:
    return PREFIX + f"`git {sub} {option}` reaches history beyond the workspace's single commit; {ONE_COMMIT}"


def _revision(token: str) -> str:
    return PREFIX + f"`{token}` names a revision beyond HEAD; {ONE_COMMIT} (`git diff` shows your changes)"


def _elsewhere(item: str) -> str:
    return PREFIX + f"`{item}` points git at another repository or work tree; git works on the workspace (the repository root) only"


def _config(key: str) -> str:
    return (
        PREFIX + f"`{key}` in git's configuration can hide a git command from the guard or point git elsewhere; run the git command itself"
    )


def _stdin(sub: str) -> str:
    return PREFIX + f"`git {sub} --stdin` reads revisions the guard cannot check; name them on the command line"


UNPARSEABLE = (
    PREFIX
    + "the command mentions git but cannot be parsed (unbalanced quotes, a trailing backslash or an unclosed `$(`); fix the quoting and try again"
)
TOO_DEEP = PREFIX + f"the command nests shells or substitutions more than {MAX_DEPTH} levels deep, too deep to check"


# -- the command's structure ---------------------------------------------------------------------


def _check(command: str, depth: int, lenient: bool = False) -> str | None:
    if depth > MAX_DEPTH:
        return TOO_DEEP if _mentions_git(command) else None
    try:
        text, substitutions, bodies = _scan(command)
        tokens = _tokens(text)
    except ValueError:
        return UNPARSEABLE if _mentions_git(command) and not lenient else None
    for body, read_by_shell, expands in bodies:
        if read_by_shell:  # ``bash <<EOF``: the body is commands
            refusal = _check(body, depth + 1, lenient=True)
            if refusal:
                return refusal
        elif expands:  # data, but an unquoted delimiter still runs its $(...) and backticks
            substitutions += _expansions(body)
    for inner in substitutions:
        refusal = _check(inner, depth + 1)
        if refusal:
            return refusal
    for words in _segments(tokens):
        refusal = _check_words(words, depth)
        if refusal:
            return refusal
    return None


def _mentions_git(command: str) -> bool:
    return bool(_GIT_MENTION.search(re.sub(r"[\\'\"]", "", command)))


def _scan(command: str) -> tuple[str, list[str], list[tuple[str, bool, bool]]]:
    """The command with each ``$(...)`` and backtick span replaced by one word (their text is returned,
    to be checked on its own), comments removed, unquoted newlines as ``;``, and here-document bodies
    taken out, each with whether a shell reads it and whether it expands substitutions."""
    out: list[str] = []
    substitutions: list[str] = []
    bodies: list[tuple[str, bool, bool]] = []
    pending: list[tuple[str, bool, bool, bool]] = []  # here-documents whose bodies start after this line
    quote = ""
    i, n = 0, len(command)
    while i < n:
        ch = command[i]
        if quote == "'":
            quote = "" if ch == "'" else quote
            out.append(ch)
            i += 1
        elif ch == "\\":
            out.append(command[i : i + 2])
            i += 2
        elif ch == "$" and command.startswith("$(", i) or ch == "`":
            start = i + (2 if ch == "$" else 1)
            end = _closing_paren(command, start) if ch == "$" else _closing_backtick(command, start)
            if end < 0:
                raise _Unparseable("unclosed substitution")
            substitutions.append(command[start:end])
            out.append("_")
            i = end + 1
        elif quote == '"':
            quote = "" if ch == '"' else quote
            out.append(ch)
            i += 1
        elif ch in "'\"":
            quote = ch
            out.append(ch)
            i += 1
        elif ch == "#" and (i == 0 or command[i - 1] in " \t\n;&|()<>"):
            end = command.find("\n", i)
            i = n if end < 0 else end
        elif ch == "\n":
            out.append(" ; ")
            i += 1
            for delimiter, strip_tabs, read_by_shell, expands in pending:
                body, i = _heredoc_body(command, i, delimiter, strip_tabs)
                bodies.append((body, read_by_shell, expands))
            pending = []
        elif command.startswith("<<", i) and not command.startswith("<<<", i) and (match := _HEREDOC.match(command, i)):
            dash, single, double, escaped, bare = match.groups()
            delimiter = next(g for g in (single, double, bare) if g is not None)
            so_far = "".join(out)
            words = so_far[max(so_far.rfind(c) for c in ";|&(") + 1 :].split()
            read_by_shell = any(w.strip("'\"").rsplit("/", 1)[-1] in SHELLS for w in words)
            pending.append((delimiter, dash == "-", read_by_shell, bare is not None and not escaped))
            out.append(" << _ ")
            i = match.end()
        else:
            out.append(ch)
            i += 1
    if quote:
        raise _Unparseable("unbalanced quote")
    return "".join(out), substitutions, bodies


def _expansions(text: str) -> list[str]:
    """The ``$(...)`` and backtick spans of a here-document body (quotes are plain text there)."""
    found = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
        elif text.startswith("$(", i) or ch == "`":
            start = i + (2 if ch == "$" else 1)
            end = _closing_paren(text, start) if ch == "$" else _closing_backtick(text, start)
            if end < 0:
                break
            found.append(text[start:end])
            i = end + 1
        else:
            i += 1
    return found


def _closing_paren(text: str, i: int) -> int:
    depth, quote = 1, ""
    while i < len(text):
        ch = text[i]
        if quote == "'":
            quote = "" if ch == "'" else quote
        elif ch == "\\":
            i += 1
        elif quote == '"':
            quote = "" if ch == '"' else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _closing_backtick(text: str, i: int) -> int:
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "`":
            return i
        i += 1
    return -1


def _heredoc_body(text: str, i: int, delimiter: str, strip_tabs: bool) -> tuple[str, int]:
    lines = []
    while i < len(text):
        end = text.find("\n", i)
        line = text[i : len(text) if end < 0 else end]
        i = len(text) if end < 0 else end + 1
        if (line.lstrip("\t") if strip_tabs else line) == delimiter:
            break
        lines.append(line)
    return "\n".join(lines), i


def _tokens(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""  # comments were removed by _scan, at word starts only
    return list(lexer)


def _is_operator(token: str) -> bool:
    return bool(token) and all(c in "();<>|&" for c in token)


def _segments(tokens: list[str]) -> list[list[str]]:
    """Simple commands: words between ``;``, ``&&``, ``|``, parentheses ...; redirections and their targets left out."""
    segments: list[list[str]] = [[]]
    skip_next = False
    for token in tokens:
        if skip_next:
            skip_next = False
        elif _is_operator(token) and token in REDIRECTS:
            skip_next = True
        elif _is_operator(token):
            segments.append([])
        else:
            segments[-1].append(token)
    return [s for s in segments if s]


def _check_words(words: list[str], depth: int) -> str | None:
    for word in words:
        if _ENV_ELSEWHERE.search(word):
            return _elsewhere(word.split("=", 1)[0] + ("=" if "=" in word else ""))
        if _ENV_CONFIG.search(word):
            return _config(word.split("=", 1)[0] + "=")
    for inner in _command_strings(words):
        refusal = _check(inner, depth + 1)
        if refusal:
            return refusal
    for i, word in enumerate(words):
        name = word.rsplit("/", 1)[-1]
        if name == "git":
            refusal = _check_git(words[i + 1 :])
        elif name.startswith("git-") and len(name) > 4:  # /usr/lib/git-core/git-reflog
            refusal = _check_subcommand(name[4:], words[i + 1 :])
        else:
            continue
        if refusal:
            return refusal
    return None


def _command_strings(words: list[str]) -> list[str]:
    """Strings the segment runs as shell commands: ``bash -c STRING``, ``su -c STRING``, ``eval WORDS``."""
    found = []
    for i, word in enumerate(words):
        name = word.rsplit("/", 1)[-1]
        if name in SHELLS:
            j, has_c = i + 1, False
            while j < len(words) and words[j][:1] in ("-", "+") and words[j] not in ("-", "--"):
                has_c = has_c or (not words[j].startswith("--") and "c" in words[j])
                j += 2 if words[j] in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file") else 1
            if has_c and j < len(words):
                found.append(words[j])
        elif name in COMMAND_OPTION_TAKERS:
            found += [words[k + 1] for k in range(i + 1, len(words) - 1) if words[k] in ("-c", "--command")]
        elif name == "eval":
            found.append(" ".join(words[i + 1 :]))
    return found


# -- one git invocation --------------------------------------------------------------------------


def _check_git(args: list[str]) -> str | None:
    """``git [global options] SUBCOMMAND ARGS``."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        if arg.startswith("-C") or arg.split("=", 1)[0] in ("--git-dir", "--work-tree"):
            separate = arg in ("-C", "--git-dir", "--work-tree") and i + 1 < len(args)
            return _elsewhere(f"git {arg} {args[i + 1]}" if separate else f"git {arg}")
        if arg == "-c" or arg.startswith("--config-env"):
            value = args[i + 1] if arg == "-c" and i + 1 < len(args) else arg.partition("=")[2]
            key = value.split("=", 1)[0]
            if _CONFIG_KEYS.match(key):
                return _config(key)
            i += 2 if arg == "-c" else 1
            continue
        i += 2 if arg == "--namespace" else 1
    if i >= len(args):
        return None
    return _check_subcommand(args[i], args[i + 1 :])


def _check_subcommand(sub: str, args: list[str]) -> str | None:
    if sub in REMOTE_SUBCOMMANDS:
        return _remote(f"git {sub}")
    if sub in HISTORY_SUBCOMMANDS:
        return _history(sub)
    paths_only = False
    value_is_text = False
    grep_pattern_pending = sub == "grep"
    for arg in args:
        if paths_only:
            break  # after "--" come paths only
        if value_is_text:
            value_is_text = False
            continue
        if arg == "--":
            paths_only = True
            continue
        if arg.startswith("-") and len(arg) > 1:
            refusal = _check_option(sub, arg)
            if refusal:
                return refusal
            option = arg.split("=", 1)[0]
            value_is_text = arg in (GREP_VALUE_OPTIONS if sub == "grep" else TEXT_OPTIONS)
            if sub == "grep" and option in GREP_VALUE_OPTIONS:
                grep_pattern_pending = False
            continue
        if grep_pattern_pending:  # git grep PATTERN [REVISION...]
            grep_pattern_pending = False
            continue
        if sub == "config":
            if _CONFIG_KEYS.match(arg):
                return _config(arg)
            continue
        if _beyond_head(arg):
            return _revision(arg)
    return None


def _check_option(sub: str, arg: str) -> str | None:
    option = arg.split("=", 1)[0]
    if option in ("--git-dir", "--work-tree"):
        return _elsewhere(arg)
    if sub == "archive" and option in ("--remote", "--exec"):
        return _remote(f"git archive {option}")
    if option in HISTORY_OPTIONS and sub not in FILE_COMMANDS:
        return _option(sub, option)
    if option in ("-g", "--walk-reflogs") and sub in REFLOG_WALKERS:
        return _option(sub, option)
    if option == "--stdin" and sub in STDIN_WALKERS:
        return _stdin(sub)
    if option.startswith("--batch") and sub == "cat-file" and option != "--batch-all-objects":
        return _stdin(sub)
    return None


def _beyond_head(token: str) -> bool:
    """Does this argument name a revision other than HEAD (a parent, a reflog entry, another head, a range)?"""
    rev = token.split(":", 1)[0]  # HEAD~1:path -> HEAD~1
    if rev in ("", "..", "..."):
        return False
    if "@{" in rev or any(head in rev for head in OTHER_HEADS):
        return True
    rev = _PEEL.sub("", rev)  # HEAD^{tree} is HEAD's own tree
    if "^" in rev or ("~" in rev and not rev.startswith("~/")):
        return True
    return bool(_RANGE.search(rev))

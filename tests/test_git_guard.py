"""The git guard of run_bash: git that reaches past the workspace's single commit is refused, the rest is not."""

import pytest

from env.tools.git_guard import TOO_DEEP, UNPARSEABLE, check_command

REFUSED = [
    # subcommands that reach other repositories or history
    "git fetch origin",
    "git pull",
    "git clone /srv/upstream copy",
    "git remote -v",
    "git ls-remote .",
    "git push origin main",
    "git submodule update --init",
    "git reflog",
    "git fsck --lost-found",
    "git fast-export HEAD",
    "git bundle create all.bundle HEAD",
    "git filter-branch --tree-filter true",
    "git replace -l",
    "git notes list",
    "git worktree add ../other",
    "git archive --remote=/srv/upstream HEAD",
    "/usr/lib/git-core/git-reflog",
    # revisions beyond HEAD
    "git show HEAD~1",
    "git diff HEAD^",
    "git show HEAD@{1}",
    "git checkout @{-1}",
    "git diff ORIG_HEAD",
    "git show FETCH_HEAD",
    "git log MERGE_HEAD",
    "git log HEAD..main",
    "git diff main...HEAD",
    "git log ^HEAD",
    "git show 'HEAD~1:shop/cart.py'",
    "git reset --hard HEAD~1",
    "git stash show -p stash@{0}",
    # history-wide options
    "git log --all",
    "git log --reflog",
    "git log --branches",
    "git log --remotes=*",
    "git log --tags",
    "git log --glob=refs/*",
    "git log --walk-reflogs",
    "git log -g",
    "git rev-list --all",
    "git cat-file --batch-check --batch-all-objects",
    "echo HEAD~1 | git log --stdin",
    # git pointed elsewhere
    "git -C /srv/upstream log",
    "git --git-dir=/srv/upstream/.git log",
    "git --work-tree=/ status",
    "GIT_DIR=/srv/upstream/.git git log",
    "GIT_WORK_TREE=/ git status",
    "export GIT_OBJECT_DIRECTORY=/srv/upstream/.git/objects",
    "git -c alias.h=reflog h",
    "git config alias.h 'log --all'",
    # behind wrappers, operators and nested shells
    "sudo git reflog",
    "env LANG=C git log --all",
    "ls | xargs git log --all",
    "command git reflog",
    "exec git reflog",
    "time git reflog",
    "nohup git reflog &",
    "timeout 5 git reflog",
    "find . -name x -exec git log --all \\;",
    "echo $(git reflog)",
    "echo `git reflog`",
    'echo "$(git log --all)"',
    "bash -c 'git reflog'",
    'sh -c "git log --all"',
    "bash -lc 'cd . && git reflog'",
    "eval git reflog",
    "true; git reflog",
    "true && git reflog",
    "false || git reflog",
    "cat README.md | git reflog",
    "(git reflog)",
    "{ git reflog; }",
    "diff <(git show HEAD~1:a.py) a.py",
    "git status\ngit reflog",
    "git status # fine\ngit reflog",
    "bash <<EOF\ngit reflog\nEOF",
    "cat <<EOF\n$(git reflog)\nEOF",
    # spelled differently
    "/usr/bin/git reflog",
    "\\git reflog",
    'g""it reflog',
    "'git' reflog",
    "git --no-pager log --all",
]

ALLOWED = [
    "git status",
    "git status --short",
    "git diff",
    "git diff HEAD",
    "git diff --stat HEAD -- shop/",
    "git log",
    "git log -p",
    "git log --oneline -5",
    "git log --grep 'a..b' --author 'x~y'",
    "git show HEAD",
    "git show HEAD:shop/cart.py",
    "git show HEAD^{tree}",
    "git blame shop/cart.py",
    "git blame -L 10,20 shop/cart.py",
    "git grep -n 'def .*(' -- '*.py'",
    "git grep -F 'a..b'",
    "git ls-files",
    "git stash",
    "git stash pop",
    "git add --all && git commit -m 'fix: off-by-one... at ~ and ^'",
    "git checkout -- shop/cart.py",
    "git restore --staged .",
    "git rev-parse HEAD",
    "git archive HEAD | tar -t",
    "git branch -a",
    "git help reflog",
    "git -c color.ui=never log",
    "git diff -- ../outside",
    "cat .github/workflows/ci.yml",
    "grep digit shop/cart.py",
    "grep -rn git .",
    "echo git",
    "python -m pytest -q",
    "sed -i 's/items=\\[\\]/items=None/' shop/cart.py && git diff",
    "cat <<'EOF' > NOTES.md\nUse `git log --all` elsewhere; it's fine here.\nEOF",
    "python - <<'EOF'\nprint(\"don't\")  # git reflog\nEOF",
    "echo 'it''s fine'",
]


@pytest.mark.parametrize("command", REFUSED)
def test_refused(command):
    message = check_command(command)
    assert message is not None and message.startswith("refused by the git guard: ")


@pytest.mark.parametrize("command", ALLOWED)
def test_allowed(command):
    assert check_command(command) is None


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (
            "git reflog",
            "refused by the git guard: `git reflog` reaches history beyond the workspace's single commit; "
            "the workspace has one commit (HEAD) and no other refs",
        ),
        (
            "bash -c 'git log --all'",
            "refused by the git guard: `git log --all` reaches history beyond the workspace's single commit; "
            "the workspace has one commit (HEAD) and no other refs",
        ),
        (
            "git fetch origin",
            "refused by the git guard: `git fetch` reaches other repositories; the workspace has one commit (HEAD), no remotes and no network",
        ),
        (
            "git show HEAD~2:shop/cart.py",
            "refused by the git guard: `HEAD~2:shop/cart.py` names a revision beyond HEAD; "
            "the workspace has one commit (HEAD) and no other refs (`git diff` shows your changes)",
        ),
        (
            "git -C /srv/upstream log",
            "refused by the git guard: `git -C /srv/upstream` points git at another repository or work tree; "
            "git works on the workspace (the repository root) only",
        ),
        (
            "GIT_DIR=/srv/upstream/.git git log",
            "refused by the git guard: `GIT_DIR=` points git at another repository or work tree; git works on the workspace (the repository root) only",
        ),
        (
            "git -c alias.h=reflog h",
            "refused by the git guard: `alias.h` in git's configuration can hide a git command from the guard or point git elsewhere; "
            "run the git command itself",
        ),
    ],
)
def test_exact_messages(command, message):
    assert check_command(command) == message


def test_unparseable_commands_that_mention_git_are_refused():
    assert check_command("echo 'unbalanced; git status") == UNPARSEABLE
    assert UNPARSEABLE == (
        "refused by the git guard: the command mentions git but cannot be parsed "
        "(unbalanced quotes, a trailing backslash or an unclosed `$(`); fix the quoting and try again"
    )
    assert check_command("echo $(git status") == UNPARSEABLE
    # Unparseable but about something else: bash reports the quoting error itself.
    assert check_command("echo 'unbalanced; ls .github") is None


def test_deep_nesting_is_bounded():
    assert check_command("echo " + "$(echo " * 8 + "git status" + ")" * 8) == TOO_DEEP
    assert TOO_DEEP == "refused by the git guard: the command nests shells or substitutions more than 6 levels deep, too deep to check"
    assert check_command("echo " + "$(echo " * 3 + "git status" + ")" * 3) is None
    assert check_command("echo " + "$(echo " * 8 + "hi" + ")" * 8) is None

"""README.md is the front door and docs/ holds the rest: every relative link and #anchor resolves, the README stays
short with a table of contents into every page of docs/, and the Space's metadata stays its first lines."""

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", ROOT / "deploy" / "README.md", *DOCS]
# the subjects issue 37 asks the table of contents for, and phrases of a lab notebook rather than documentation
SUBJECTS = ("tasks", "rewards", "sandbox", "repository-tasks", "interfaces", "procedural-tasks", "evaluation", "training", "deployment")
SUBJECTS += ("performance", "architecture")
DIARY_MORE = ("this loaded machine",)
DIARY = ("this machine", "this 2-core machine", "this session", "before I stopped", "this was developed on", "this shared machine")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def prose(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lowercase, punctuation but '-' and '_' dropped, spaces to '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())  # a link's text
    text = "".join(c for c in text.lower() if c in "-_ " or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading's anchor, a repeated one suffixed -1, -2, ... as GitHub does."""
    seen: dict[str, int] = {}
    found = set()
    for line in prose(path.read_text()):
        match = re.match(r"#{1,6} (.+?)\s*#*\s*$", line)
        if match:
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[str]:
    return [target for line in prose(path.read_text()) for target in LINK.findall(line)]


def test_the_slug_rules_match_githubs():
    assert slug("Validation: OpenEnv's policy v2 (`validator.py --v2`)") == "validation-openenvs-policy-v2-validatorpy---v2"
    assert slug("The sandbox: what it guarantees and where its limits are") == "the-sandbox-what-it-guarantees-and-where-its-limits-are"
    assert slug("The race detector (`hard`)") == "the-race-detector-hard"
    assert slug("Repository tasks (SWE-bench style)") == "repository-tasks-swe-bench-style"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_and_anchor_resolves(page):
    broken = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no file {file.relative_to(ROOT) if file.is_relative_to(ROOT) else file}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading with anchor #{anchor} in {file.relative_to(ROOT)}")
    assert not broken, "\n".join(broken)


def test_links_are_checked_at_all():
    """The link check sees the README's table of contents and the anchors between pages (so a pattern that matched
    nothing cannot pass it)."""
    assert len(links(ROOT / "README.md")) >= len(DOCS)
    assert any("#" in target and not target.startswith("#") for page in DOCS for target in links(page))


def test_the_readme_is_short_and_its_table_of_contents_names_every_page_of_docs():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) < 200
    assert len(DOCS) >= 11
    toc = readme.split("\n## Documentation\n")[1].split("\n## ")[0]
    listed = {target.partition("#")[0] for line in toc.splitlines() for target in LINK.findall(line)}
    assert {f"docs/{page.name}" for page in DOCS} <= listed
    for subject in SUBJECTS:
        assert f"docs/{subject}.md" in listed, subject


def test_the_readme_keeps_its_front_door_parts():
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("\n## Quick start\n")[1].split("\n## ")[0]
    assert "make serve" in quick and "make test" in quick
    assert "<!-- curl-example -->" in readme and "It prints (the `episode_id` differs):" in readme
    flow = readme.split("\n## How an episode flows\n")[1].split("\n## ")[0]
    assert all(step in flow for step in ("/reset", "act", "reward", "submit", "grade"))


def test_the_space_metadata_is_the_first_lines_of_the_readme():
    """Hugging Face reads a Space's configuration from the YAML block that opens README.md."""
    lines = (ROOT / "README.md").read_text().splitlines()
    assert lines[0] == "---"
    end = lines.index("---", 1)
    front = dict(line.split(": ", 1) for line in lines[1:end])
    assert front["sdk"] == "gradio" and front["app_file"] == "app.py" and front["title"] == "AgentDebuggerEnv"
    assert {"sdk_version", "python_version", "license"} <= front.keys()
    assert next(line for line in lines[end + 1 :] if line.strip()) == "# AgentDebuggerEnv"


@pytest.mark.parametrize("page", [ROOT / "README.md", *DOCS], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_pages_read_as_documentation_not_as_a_diary(page):
    text = page.read_text()
    for phrase in DIARY + DIARY_MORE:
        assert phrase not in text, phrase

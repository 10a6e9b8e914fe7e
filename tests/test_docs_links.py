"""Every relative link of the README and of ``docs/*.md`` resolves, on GitHub as in the site.

A link names an existing file (relative to the page, as GitHub reads it) and, with ``#anchor``, a heading
of its target: GitHub's anchors (lower case, punctuation dropped, each space a ``-``, a repeated heading
``-1``, ``-2``...), which mkdocs.yml's ``slugify`` reproduces, so one link works in both. A page of
``docs/`` links only inside ``docs/`` (the site's root) or to a figure in ``bench/``, which
``mkdocs_hooks.py`` serves; ``mkdocs build --strict`` (``nox -s docs``) checks the built site's links too.
The README stays a front page: at most 250 lines, and it links to every page of the documentation.
"""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT
from readme_blocks import DOCS, README, doc_files, headings, name_of

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE = re.compile(r"^```.*?^```|`[^`\n]*`", re.S | re.M)
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)  # https:, mailto:...


def slug(heading: str) -> str:
    """GitHub's anchor of a heading line (``## The `acr` module`` -> ``the-acr-module``)."""
    text = re.sub(r"\s+#+\s*$", "", heading.lstrip("#").strip())
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link's text
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    found: set[str] = set()
    for heading in headings(text):
        base = slug(heading)
        name, n = base, 0
        while name in found:
            n += 1
            name = f"{base}-{n}"
        found.add(name)
    return found


def links(text: str) -> list[str]:
    """The targets of the Markdown links and images of a text, outside code."""
    return LINK.findall(CODE.sub("", text))


def problems(path: Path, text: str | None = None) -> list[str]:
    """One line per link of ``path`` (or of ``text`` as if it were ``path``) that does not resolve."""
    text = path.read_text(encoding="utf-8") if text is None else text
    found = []
    for target in links(text):
        if EXTERNAL.match(target):
            continue
        file_part, _, anchor = target.partition("#")
        where = (path.parent / file_part).resolve() if file_part else path
        problem = None
        if target.startswith("/"):
            problem = "an absolute link (use a relative one)"
        elif file_part and not where.exists():
            problem = "no such file"
        elif path.parent == DOCS and not (where.is_relative_to(DOCS) or where.is_relative_to(ROOT / "bench")):
            problem = "leaves docs/ (the site's root)"
        elif anchor and where.suffix == ".md":
            target_text = text if where == path else where.read_text(encoding="utf-8")
            if anchor not in anchors(target_text):
                problem = f"no heading with the anchor #{anchor}"
        if problem:
            found.append(f"{name_of(path)}: {target}: {problem}")
    return found


def test_every_relative_link_and_anchor_resolves():
    pages = doc_files()
    assert len(pages) >= 12, pages
    assert sum(len(links(p.read_text(encoding="utf-8"))) for p in pages) > 50
    assert [line for page in pages for line in problems(page)] == []


def test_a_broken_file_or_anchor_is_caught_and_its_valid_twin_passes():
    page = DOCS / "a-new-page.md"
    broken = {
        "[x](registry.md#no-such-heading)": "no heading with the anchor #no-such-heading",
        "[x](no-such-page.md)": "no such file",
        "[x](#nowhere)": "no heading with the anchor #nowhere",
        "[x](../README.md)": "leaves docs/",
        "![x](/bench/pbt_2048.png)": "an absolute link",
    }
    for link, problem in broken.items():
        (line,) = problems(page, f"# A new page\n\n{link}\n")
        assert problem in line, line
    valid = ("# A new page\n\n## Second `part` (of it)\n\n[x](registry.md#installing) [y](#second-part-of-it) "
             "[z](learning.md) ![p](../bench/pbt_2048.png) [w](https://example.org/#x) `[c](nowhere.md)`\n")
    assert problems(page, valid) == []
    assert problems(README, "[x](docs/registry.md#index-layout) [y](docs/nothing.md)\n") == [
        "README.md: docs/nothing.md: no such file"]


def test_anchors_follow_githubs_rules():
    quick = "quick-start-what-nox--s-demo-runs-line-by-line"  # each space a "-": "nox -s" gives "nox--s"
    assert slug("## Quick start (what `nox -s demo` runs, line by line)") == quick
    assert slug("### The conformance kit: `agentos.testing`") == "the-conformance-kit-agentostesting"
    dqn = "what-the-quick-starts-dqn-run-can-and-cannot-show"
    assert slug("## What the Quick start's DQN run can and cannot show") == dqn
    assert anchors("# A\n\n```bash\n# not a heading\n```\n\n## A\n") == {"a", "a-1"}


def test_the_readme_is_a_front_page_that_links_every_docs_page():
    readme = README.read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    linked = {target.partition("#")[0] for target in links(readme)}
    pages = {f"docs/{p.name}" for p in DOCS.glob("*.md")}
    assert pages and pages <= linked, pages - linked

"""No ``pip install`` line in the README, the documentation (``docs/*.md``), a plugin's or a template's
README resolves one of our project names on PyPI, where agentos-core is an unrelated project and our
others are missing or could be claimed. Our projects come from the index: its install files, ``agentos
install``, or an index URL."""

from __future__ import annotations

import json
import re
import shlex

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from .conftest import ROOT

PIP_LINE = re.compile(r"pip3? install\b[^`\n]*")
WITH_VALUE = {"-r", "--requirement", "-e", "--editable", "-c", "--constraint", "-i", "--index-url"}
WITH_VALUE |= {"--extra-index-url", "-f", "--find-links", "--report", "-t", "--target", "--prefix", "--root"}
INSTALL_FILE = re.compile(r"/install/([A-Za-z0-9._\-\[\],]+\.txt)")


def our_names() -> set[str]:
    catalogue = json.loads((ROOT / "index" / "catalogue.json").read_text())
    plugins = {p.name for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").exists()}
    return {canonicalize_name(n) for n in (*catalogue["projects"], *plugins, "agentos-core")}


def names_from_pypi(command: str, ours: set[str]) -> list[str]:
    """Our project names that ``command`` (one ``pip install ...``) would look up on PyPI."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    for stop in ("&&", "||", ";", "|"):
        words = words[: words.index(stop)] if stop in words else words
    positional, options, i = [], {}, 2
    while i < len(words):
        word = words[i]
        if word.split("=", 1)[0] in WITH_VALUE:
            key, value = (word.split("=", 1) + [None])[:2] if "=" in word else (word, words[i + 1 : i + 2] or [""])
            options[key] = value if isinstance(value, str) else value[0]
            i += 1 if "=" in word else 2
            continue
        if not word.startswith("-"):
            positional.append(word)
        i += 1
    if ("-i" in options or "--index-url" in options) and "--extra-index-url" not in options:
        return []  # our index alone
    found = []
    for arg in positional:
        if "/" in arg or arg.startswith((".", "$", "~")):
            continue  # a path or URL: a local project or one of our files
        try:
            name = canonicalize_name(Requirement(arg).name)
        except InvalidRequirement:
            continue
        if name in ours:
            found.append(name)
    return found


def readmes():
    yield ROOT / "README.md"
    yield from sorted((ROOT / "docs").glob("*.md"))
    yield from sorted((ROOT / "plugins").glob("*/README.md"))
    yield from sorted((ROOT / "templates").rglob("README.md"))


def test_the_scanner_catches_each_pypi_form_and_accepts_its_safe_twin():
    ours = {"agentos-core", "agentos-academy", "agentos-env-2048"}
    unsafe = {
        "pip install agentos-academy": ["agentos-academy"],
        "pip install 'agentos-core[server]'  # the server": ["agentos-core"],
        "python -m pip install -U Agentos_Env_2048==1.0 numpy": ["agentos-env-2048"],
        "pip install --index-url file:///i/simple --extra-index-url https://pypi.org/simple agentos-core": [
            "agentos-core"
        ],
    }
    safe = [
        'pip install -r "$AGENTOS_INDEX_URL/install/agentos-core[server].txt"',
        "pip install --index-url file://$PWD/index/simple agentos-env-2048",
        "pip install -i http://127.0.0.1:8080/simple/ agentos-academy",
        "pip install -e 'plugins/agentos-env-2048[test]'",
        'pip install -e ".[test]"',
        "pip install torch==2.13.0 nox && python3 -m nox -s tests",
    ]
    for line, names in unsafe.items():
        assert names_from_pypi(PIP_LINE.search(line).group(0), ours) == names, line
    for line in safe:
        assert names_from_pypi(PIP_LINE.search(line).group(0), ours) == [], line


def test_no_readme_pip_line_resolves_our_names_on_pypi():
    ours = our_names()
    offending = [
        f"{path.relative_to(ROOT)}: {cmd.strip()}"
        for path in readmes()
        for cmd in PIP_LINE.findall(path.read_text(encoding="utf-8"))
        if names_from_pypi(cmd, ours)
    ]
    assert offending == []


def test_every_install_file_the_readme_names_is_in_the_index():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    named = {n for page in pages for n in INSTALL_FILE.findall(page.read_text(encoding="utf-8"))}
    assert {"agentos-core[server].txt", "agentos-academy[dask].txt", "agentos-core[dask].txt"} <= named
    assert sorted(n for n in named if not (ROOT / "index" / "install" / n).is_file()) == []

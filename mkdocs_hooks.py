"""MkDocs hooks (mkdocs.yml): the README is the site's home page, and bench/'s figures are served beside the pages.

Both stay where GitHub shows them: the README's links into ``docs/`` and the pages' links to ``../bench/*.png``
are relative links that work on GitHub, and are rewritten here for the site, whose root is ``docs/``.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent


def on_files(files, config):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    files.append(File.generated(config, "index.md", content=readme.replace("](docs/", "](")))
    for figure in sorted((ROOT / "bench").rglob("*.png")):
        name = figure.relative_to(ROOT).as_posix()
        files.append(File(name, str(ROOT), config["site_dir"], config["use_directory_urls"]))
    return files


def on_page_markdown(markdown, page, config, files):
    return markdown.replace("](../bench/", "](bench/")

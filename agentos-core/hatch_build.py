"""Build hook: ship the repository's ``templates/`` (the templates of ``agentos new``).

Wheels carry them as ``agentos/templates``; sdists as ``templates/``, so that a wheel built from
the sdist finds them too. Editable installs read the repository folder directly.
"""

from __future__ import annotations

from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class TemplatesHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if version == "editable":
            return
        root = Path(self.root)
        for candidate in (root / "templates", root.parent / "templates"):
            if (candidate / "policy" / "cookiecutter.json").is_file():
                if self.target_name == "wheel":
                    build_data["force_include"][str(candidate)] = "agentos/templates"
                elif candidate != root / "templates":
                    build_data["force_include"][str(candidate)] = "templates"
                return
        raise FileNotFoundError("the templates of 'agentos new' are missing (templates/ beside agentos-core)")

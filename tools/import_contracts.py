"""A custom import-linter contract: no distribution imports another one's private modules.

``type = private_modules`` (registered in ``.importlinter``). ``distributions`` lists one
distribution per line as its top-level packages (``agentos acr``); a module of one distribution
may import a module of another only when no part of its dotted path after the top-level package
starts with ``_`` (``agentos_env_2048.kernels`` yes, ``agentos_env_2048._kernels`` no). A package's
own private modules are its business. ``tests/test_public_api.py`` checks the same with ``ast``,
private *names* (``from agentos.x import _y``) and templates included.
"""

from __future__ import annotations

from importlinter import Contract, ContractCheck, fields, output


def is_private(module: str) -> bool:
    """Whether ``module`` has a ``_name`` part below its top-level package (dunders are not private)."""
    return any(part.startswith("_") and not part.startswith("__") for part in module.split(".")[1:])


class PrivateModulesContract(Contract):
    """Every import across two distributions reaches only public modules."""

    type_name = "private_modules"
    distributions = fields.ListField(subfield=fields.StringField())

    def check(self, graph, verbose: bool) -> ContractCheck:
        owner = {package: line for line in self.distributions for package in str(line).split()}
        broken = []
        for importer in sorted(graph.modules):
            home = owner.get(importer.split(".")[0])
            for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                there = owner.get(imported.split(".")[0])
                if home and there and there != home and is_private(imported):
                    details = graph.get_import_details(importer=importer, imported=imported)
                    lines = ", ".join(str(d["line_number"]) for d in details) or "?"
                    broken.append(f"{importer} (l.{lines}) imports {imported}")
        return ContractCheck(kept=not broken, metadata={"broken": broken})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for line in check.metadata["broken"]:
            output.print_error(f"- {line}", bold=False)
        output.new_line()
        output.print("Use the other distribution's public API (a module or name without a leading _).")

""" "Did you mean": the closest command, choice, kind or name for a mistyped one (difflib, on error only).

Argument errors are one line (``agentos: error: ...``) with exit code 2, like every other usage
error; nothing here is imported by ``agentos --help`` beyond argparse itself.
"""

from __future__ import annotations

import argparse
import sys


class SuggestingParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line and suggest the closest valid choice.

    Sub-command parsers are made with the same class (argparse uses the parent's class).
    """

    def _check_value(self, action, value):
        if action.choices is None or value in action.choices:
            return
        from ..host import did_you_mean

        choices = list(action.choices)
        hint = did_you_mean(str(value), choices)
        if isinstance(action, argparse._SubParsersAction):
            raise argparse.ArgumentError(None, f"unknown command {value!r}{hint} (see: {self.prog} --help)")
        raise argparse.ArgumentError(action, f"invalid choice {value!r}{hint} (choose from {', '.join(choices)})")

    def error(self, message: str):
        if "--help" not in message:
            message = f"{message} (see: {self.prog} --help)"
        self.exit(2, f"agentos: error: {message}\n")


def search_hint(terms: list[str], components: list[dict]) -> str:
    """Why ``agentos search TERMS`` found nothing: a mistyped kind, else a mistyped component name."""
    from ..host import did_you_mean
    from ..host._names import KIND_ALIASES, KINDS

    if not terms:
        return ""
    kinds = [*KINDS, *KIND_ALIASES]
    hint = "" if terms[0].lower() in kinds else did_you_mean(terms[0], kinds)
    if hint:
        return hint.replace("did you mean", "did you mean the kind")
    return did_you_mean(terms[-1], sorted({row["name"] for row in components}))


def print_error(message: str) -> int:
    print(f"agentos: error: {message}", file=sys.stderr)
    return 2

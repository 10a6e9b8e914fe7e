"""Every command's and subcommand's --help renders (a stray % in a help text made `agentos experiment --help`
a traceback, while `agentos experiment` alone tells the user to run it)."""

from __future__ import annotations

import argparse
import subprocess
import sys

from agentos.cli import build_parser


def _parsers(parser: argparse.ArgumentParser, path=()):
    yield path, parser
    for action in parser._actions:  # argparse keeps subcommands only here
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def test_every_help_text_renders():
    seen = 0
    for path, parser in _parsers(build_parser()):
        assert parser.format_help(), path
        seen += 1
    assert seen > 20


def test_experiment_help_on_the_command_line():
    done = subprocess.run([sys.executable, "-m", "agentos", "experiment", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "95% interval" in done.stdout and "Traceback" not in done.stderr

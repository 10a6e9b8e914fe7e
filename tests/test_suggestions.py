"""Did you mean: a mistyped command, choice, kind or name gets one line with the closest one, exit 2."""

from __future__ import annotations

import textwrap

import pytest

from .conftest import ROOT

INDEX = str(ROOT / "index")


@pytest.fixture(scope="module")
def venv(first_party_venv):
    return first_party_venv


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["instal"], "agentos: error: unknown command 'instal'; did you mean 'install'?"),
        (["serch", "policy"], "agentos: error: unknown command 'serch'; did you mean 'search'?"),
        (
            ["list", "--kind", "polcy"],
            "agentos: error: argument --kind: invalid choice 'polcy'; did you mean 'policy'?",
        ),
        (["search", "polcy", "--index-url", INDEX], "no components match 'polcy'; did you mean the kind 'policy'?"),
        (["search", "environment", "coridor", "--index-url", INDEX], "did you mean 'corridor'?"),
        (["install", "polcy", "random"], "agentos: error: unknown kind 'polcy'; did you mean 'policy'?"),
    ],
)
def test_a_typo_gets_one_line_with_the_closest_name_and_exit_2(venv, tmp_path, argv, expected):
    result = venv.agentos(*argv, cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("agentos: error: "), result.stderr
    assert expected in result.stderr
    assert result.stdout == ""


def test_a_search_that_only_finds_nothing_still_says_so(venv, tmp_path):
    result = venv.agentos("search", "zzzzzz", "--index-url", INDEX, cwd=tmp_path)
    assert (result.returncode, result.stdout.strip()) == (0, "no components found")


def test_an_unknown_installed_name_suggests_the_closest(venv, tmp_path):
    venv.agentos("init", "a", cwd=tmp_path)
    code = """
        import acr
        try:
            acr.environment["coridor"]
        except LookupError as exc:
            print(exc)
    """
    result = venv.run("python", "-c", textwrap.dedent(code), cwd=tmp_path / "a")
    assert "no environment named 'coridor'; did you mean 'corridor'?" in result.stdout, result.stderr


def test_help_stays_fast_no_difflib(venv, tmp_path):
    code = """
        import contextlib, io, sys
        from agentos.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                main(["--help"])
            except SystemExit:
                pass
        print("difflib" in sys.modules)
    """
    result = venv.run("python", "-c", textwrap.dedent(code), cwd=tmp_path)
    assert result.stdout.strip() == "False", result.stderr

"""agent.ini: typed values, located errors, comment-preserving atomic edits."""

from __future__ import annotations

import os

import pytest
from agentos.config import AgentConfig, IniDocument, format_value, parse_value
from agentos.errors import ConfigError

GOOD = """\
# my agent
[agentos]
requirements = requirements.txt

[environment]
default = corridor   ; the default environment

[environment.corridor]
package = agentos-env-corridor
version = 1.0.0
length = 12
slip = 0.25
noisy = true
name = "long corridor"
sizes = [64, 64]
names = [a, "b, c", 3.5]
limit = none
"""


def test_typed_values_and_defaults(tmp_path):
    path = tmp_path / "agent.ini"
    path.write_text(GOOD)
    config = AgentConfig.load(str(path))
    assert config.default("environment") == "corridor"
    assert config.default("env") == "corridor"
    assert config.default("policy") is None
    comp = config.component("environment", "corridor")
    assert (comp.package, comp.version) == ("agentos-env-corridor", "1.0.0")
    assert comp.kwargs() == {
        "length": 12,
        "slip": 0.25,
        "noisy": True,
        "name": "long corridor",
        "sizes": [64, 64],
        "names": ["a", "b, c", 3.5],
        "limit": None,
    }
    assert comp.settings["length"].line == 11


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("[environment]\ndefault = corridor\nfoo = 1\n", 3, "unknown key 'foo' in [environment]"),
        ("[environment]\ndefualt = corridor\n", 2, "did you mean 'default'"),
        ("[environmnet]\ndefault = x\n", 1, "unknown section [environmnet]"),
        ("[environment.corridor]\nsizes = [1, 2\n", 2, "unclosed list"),
        ('[environment.corridor]\nname = "abc\n', 2, "unclosed quote"),
        ("[environment.corridor]\nx = 1\nx = 2\n", 3, "duplicate key 'x'"),
        ("[policy]\ndefault = a\n[policy]\ndefault = b\n", 3, "duplicate section [policy]"),
        ("default = corridor\n", 1, "outside of any [section]"),
        ("[environment]\nthis is not a setting\n", 2, "cannot parse line"),
        ("[policy]\n", 1, "needs 'default = <name>'"),
        ("[agentos]\nvenvv = .venv\n", 2, "did you mean 'venv'"),
    ],
)
def test_errors_name_file_and_line(tmp_path, text, line, fragment):
    path = tmp_path / "agent.ini"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        AgentConfig.load(str(path))
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert fragment in message
    assert "\n" not in message


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        AgentConfig.load(str(tmp_path / "nope" / "agent.ini"))


def test_edits_keep_comments_and_unrelated_lines(tmp_path):
    path = tmp_path / "agent.ini"
    path.write_text(GOOD)
    config = AgentConfig.load(str(path))
    config.add_component(
        "policy",
        "q_table",
        package="agentos-policy-q-table",
        version="1.0.0",
        settings={"alpha": 0.1, "hidden": [32, 32]},
    )
    config.set_default("policy", "q_table")
    config.save()
    text = path.read_text()
    assert "# my agent" in text and "; the default environment" in text
    again = AgentConfig.load(str(path))
    assert again.default("policy") == "q_table"
    assert again.component("policy", "q-table").kwargs() == {"alpha": 0.1, "hidden": [32, 32]}
    again.remove_component("policy", "q_table")
    again.set_default("policy", None)
    again.save()
    assert path.read_text() == GOOD


def test_save_is_atomic_and_leaves_no_temporary_files(tmp_path):
    path = tmp_path / "agent.ini"
    path.write_text(GOOD)
    doc = IniDocument.read(str(path))
    doc.set("environment.corridor", "length", "20")
    doc.save()
    assert sorted(os.listdir(tmp_path)) == ["agent.ini"]
    assert "length = 20" in path.read_text()


def test_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "agent.ini"
    path.write_text(GOOD)
    doc = IniDocument.read(str(path))
    doc.set("environment.corridor", "length", "99")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        doc.save()
    assert path.read_text() == GOOD
    assert sorted(os.listdir(tmp_path)) == ["agent.ini"]


@pytest.mark.parametrize("value", [0, -3, 2.5, 1e-4, True, False, None, "PPO", "has space", "", [1, 2.5, "x"], []])
def test_format_and_parse_round_trip(value):
    assert parse_value(format_value(value)) == value


# -- agent.ini as people write it (issue 9, point 2) ------------------------------------------------


def _edit(path) -> None:
    config = AgentConfig.load(str(path))
    config.add_component("policy", "q_table", package="agentos-policy-q-table", settings={"alpha": 0.5})
    config.set_default("policy", "q_table")
    config.save()


def test_a_utf8_byte_order_mark_is_accepted_and_kept(tmp_path):
    path = tmp_path / "agent.ini"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.encode())
    config = AgentConfig.load(str(path))
    assert config.default("environment") == "corridor"
    assert config.component("environment", "corridor").settings["length"].line == 11
    _edit(path)
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and data.count(b"\xef\xbb\xbf") == 1
    assert AgentConfig.load(str(path)).default("policy") == "q_table"


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_line_endings_are_kept_on_edit(tmp_path, newline):
    path = tmp_path / "agent.ini"
    path.write_bytes(GOOD.replace("\n", newline).encode())
    _edit(path)
    data = path.read_bytes().decode()
    assert "[policy.q_table]" in data
    rest = data.replace(newline, "")
    assert "\r" not in rest and "\n" not in rest  # every line ends as the file's lines ended
    assert data.count(newline) == len(AgentConfig.load(str(path)).document.lines)
    config = AgentConfig.load(str(path))
    config.remove_component("policy", "q_table")
    config.set_default("policy", None)
    config.save()
    assert path.read_bytes() == GOOD.replace("\n", newline).encode()


def test_a_symlinked_agent_ini_is_written_through_to_its_target(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    target = shared / "real.ini"
    target.write_text(GOOD)
    agent = tmp_path / "agent"
    agent.mkdir()
    link = agent / "agent.ini"
    link.symlink_to(os.path.relpath(target, agent))
    _edit(link)
    assert link.is_symlink() and os.readlink(link) == os.path.relpath(target, agent)
    assert "[policy.q_table]" in target.read_text()
    assert sorted(os.listdir(agent)) == ["agent.ini"] and sorted(os.listdir(shared)) == ["real.ini"]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\f", "\v", "\x1c", "\x85"])
def test_only_newlines_split_lines(tmp_path, separator):
    text = f"# notes{separator}more notes\n[environment]\ndefault = corridor\n[environment.corridor]\nlenght = 3\n"
    path = tmp_path / "agent.ini"
    path.write_text(text, encoding="utf-8", newline="")
    config = AgentConfig.load(str(path))
    assert config.component("environment", "corridor").settings["lenght"].line == 5
    bad = text.replace("lenght = 3", "lenght = [1,")
    path.write_text(bad, encoding="utf-8", newline="")
    with pytest.raises(ConfigError) as caught:
        AgentConfig.load(str(path))
    assert str(caught.value).startswith(f"{path}:5:")

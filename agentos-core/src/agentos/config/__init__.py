"""``agent.ini`` files: parsing with typed values, validation, comment-preserving atomic edits."""

from ._agent_ini import AgentConfig, ComponentConfig, Setting
from ._ini import IniDocument, atomic_write
from ._values import format_value, parse_value

__all__ = ["AgentConfig", "ComponentConfig", "IniDocument", "Setting", "atomic_write", "format_value", "parse_value"]

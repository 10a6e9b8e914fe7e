"""Sandboxed evaluation: the policy in a bubblewrap sandbox choosing actions, the environment, seeds and
recorder in the verifier (see docs/security.md, "What verified means").

Public: :func:`sandbox_problem` (why no sandbox can run here, or None), :func:`play_job` (play a job
with the environment in this process and the policy sandboxed), :class:`PolicyFailed`.
"""

from __future__ import annotations

from ._bwrap import problem as sandbox_problem
from ._env_side import play_job
from ._remote import PolicyFailed

__all__ = ["PolicyFailed", "play_job", "sandbox_problem"]

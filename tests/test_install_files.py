"""``install/<project>.txt``: hash-pinned requirements files that the index keeps up to date on publish and yank."""

from __future__ import annotations

import hashlib

from agentos.registry import publish, yank


def _lib(make_package, version):
    return make_package("agentos-core", version=version, modules={"acr_fake/__init__.py": ""}, entry_points={})


def test_install_files_follow_publish_and_yank(tmp_path, make_package):
    index = tmp_path / "index"
    env = make_package(
        "agentos-env-demo",
        version="1.0.0",
        dependencies=("agentos-core>=0.3", "numpy>=1.24"),
        entry_points={"agentos.environment": {"demo": "agentos_env_demo:Env"}},
        modules={"agentos_env_demo/__init__.py": "class Env:\n    pass\n"},
    )
    publish([str(env)], str(index))
    demo = index / "install" / "agentos-env-demo.txt"
    lines = [line for line in demo.read_text().splitlines() if not line.startswith("#")]
    sha = hashlib.sha256(env.read_bytes()).hexdigest()
    assert lines == [f"agentos-env-demo @ ${{AGENTOS_INDEX_URL}}/files/agentos-env-demo/{env.name}#sha256={sha}"]

    old, new = _lib(make_package, "0.3.0"), _lib(make_package, "0.4.0")
    publish([str(old), str(new)], str(index), library=True)  # a dependency published later updates the file
    lines = [line for line in demo.read_text().splitlines() if not line.startswith("#")]
    core_sha = hashlib.sha256(new.read_bytes()).hexdigest()
    assert lines[0] == f"agentos-core @ ${{AGENTOS_INDEX_URL}}/files/agentos-core/{new.name}#sha256={core_sha}"
    assert lines[1].startswith("agentos-env-demo @ ") and "numpy" not in demo.read_text()  # PyPI's, not ours

    yank("agentos-core", "0.4.0", "broken", str(index))
    assert f"/{old.name}#sha256=" in demo.read_text() and new.name not in demo.read_text()
    assert "agentos_core-0.3.0" in (index / "install" / "agentos-core.txt").read_text()

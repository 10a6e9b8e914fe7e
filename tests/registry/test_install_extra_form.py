"""``agentos install KIND NAME[EXTRA,...]``: the component with its extra, every project of ours from the
index's exact files, recorded as ``name[extra] @ url#sha256=`` in requirements.txt."""

from __future__ import annotations

from agentos.registry import publish
from conftest import build_wheel, write_package


def _wheel(tmp_path, dist, *, extras="", entry_points=None, module):
    folder = write_package(
        tmp_path / "src", dist, version="1.0.0", entry_points=entry_points or {}, modules={f"{module}/__init__.py": ""}
    )
    if extras:
        with open(folder / "pyproject.toml", "a") as f:
            f.write(f"\n[project.optional-dependencies]\n{extras}\n")
    out = tmp_path / "wheels"
    out.mkdir(exist_ok=True)
    return build_wheel(folder, out)


def _installed(venv, dist):
    code = f"import importlib.metadata as m\ntry: print(m.version({dist!r}))\nexcept m.PackageNotFoundError: print('-')"
    return venv.run("python", "-c", code, check=True).stdout.strip()


def test_install_with_an_extra_brings_the_extras_requirements_from_the_index(tmp_path, core_venv):
    index = tmp_path / "index"
    dep = _wheel(tmp_path, "agentos-dep-fast", module="agentos_dep_fast")
    env = _wheel(
        tmp_path,
        "agentos-env-xtra",
        extras='fast = ["agentos-dep-fast>=1"]',
        entry_points={"agentos.environment": {"xtra": "agentos_env_xtra:Env"}},
        module="agentos_env_xtra",
    )
    publish([str(dep)], str(index), library=True)
    publish([str(env)], str(index))
    venv = core_venv("extra-form")
    assert venv.agentos("init", "a", "--no-install", cwd=tmp_path).returncode == 0

    def install(name):
        return venv.agentos("install", "environment", name, "--index-url", index, "--agent", "a", cwd=tmp_path)

    plain = install("xtra")  # valid twin without the extra: its requirement stays out
    assert plain.returncode == 0, plain.stderr
    assert (_installed(venv, "agentos-env-xtra"), _installed(venv, "agentos-dep-fast")) == ("1.0.0", "-")

    for hostile, expected in (
        ("xtra[nope]", "has no extra 'nope' (its extras: fast)"),
        ("xtra[../x]", "malformed extras in 'xtra[../x]'"),
        ("xtra[fast", "malformed extras"),
    ):
        bad = install(hostile)
        lines = [x for x in bad.stderr.splitlines() if x.strip()]
        assert bad.returncode != 0 and len(lines) == 1 and expected in lines[0], bad.stderr
        assert "Traceback" not in bad.stderr

    withextra = install("xtra[fast]")  # the component is installed already: the extra still gets installed
    assert withextra.returncode == 0, withextra.stderr
    assert _installed(venv, "agentos-dep-fast") == "1.0.0"
    requirements = (tmp_path / "a" / "requirements.txt").read_text()
    assert f"agentos-env-xtra[fast] @ {(index / 'files').as_uri()}/agentos-env-xtra/{env.name}#sha256=" in requirements
    assert f"/agentos-dep-fast/{dep.name}#sha256=" in requirements, requirements

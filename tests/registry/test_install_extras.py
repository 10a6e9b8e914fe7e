"""``install/<project>[<extra>].txt``: the safe form of ``pip install 'agentos-core[server]'``.

Our projects are pinned to the index's exact files with the extras asked of them; the extras'
third-party dependencies come from pip's usual index, which here is a local stand-in for PyPI that
also holds a hostile ``agentos-core 99.0.0`` (PyPI really has an unrelated agentos-core).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from agentos.registry import publish

from ..conftest import build_wheel, write_package


def _wheel(tmp_path, dist, version, *, extras="", deps=(), entry_points=None, module="pkg_x"):
    folder = write_package(
        tmp_path / f"src-{dist}-{version}",
        dist,
        version=version,
        dependencies=deps,
        entry_points=entry_points or {},
        modules={f"{module}/__init__.py": "class Env:\n    pass\n"},
    )
    if extras:
        with open(folder / "pyproject.toml", "a") as f:
            f.write(f"\n[project.optional-dependencies]\n{extras}\n")
    out = tmp_path / "wheels"
    out.mkdir(exist_ok=True)
    return build_wheel(folder, out)


def _dry_run(*args, env) -> dict[str, tuple[str, str]]:
    """Real pip's plan, without installing: name -> (version, where from)."""
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps", "-q"]
    cmd += ["--report", "-", "--disable-pip-version-check", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    return {i["metadata"]["name"]: (i["metadata"]["version"], i["download_info"]["url"]) for i in report["install"]}


def test_extras_get_hash_pinned_install_files_that_pip_installs_from_our_index(tmp_path):
    ours, pypi = tmp_path / "index", tmp_path / "pypi"
    web = _wheel(tmp_path, "thirdparty-web", "1.0.0", module="thirdparty_web")
    hostile = _wheel(tmp_path, "agentos-core", "99.0.0", extras='server = ["thirdparty-web"]', module="acr_evil")
    publish([str(web), str(hostile)], str(pypi), library=True)
    core = _wheel(
        tmp_path,
        "agentos-core",
        "0.3.0",
        extras='server = ["thirdparty-web>=1"]\ndask = ["thirdparty-web>=1"]',
        module="acr_fake",
    )
    publish([str(core)], str(ours), library=True)
    demo = _wheel(
        tmp_path,
        "agentos-env-demo",
        "1.0.0",
        deps=("agentos-core>=0.3",),
        extras='dask = ["agentos-core[dask]>=0.3"]',
        entry_points={"agentos.environment": {"demo": "agentos_env_demo:Env"}},
        module="agentos_env_demo",
    )
    publish([str(demo)], str(ours))

    install = ours / "install"
    assert sorted(p.name for p in install.iterdir()) == [
        "agentos-core.txt",
        "agentos-core[dask].txt",
        "agentos-core[server].txt",
        "agentos-env-demo.txt",
        "agentos-env-demo[dask].txt",
    ]
    lines = [x for x in (install / "agentos-env-demo[dask].txt").read_text().splitlines() if not x.startswith("#")]
    assert [x.split(" @ ")[0] for x in lines] == ["agentos-core[dask]", "agentos-env-demo[dask]"]
    assert all(x.split(" @ ")[1].startswith("${AGENTOS_INDEX_URL}/files/") and "#sha256=" in x for x in lines)

    env = {**os.environ, "PIP_INDEX_URL": (pypi / "simple").as_uri(), "AGENTOS_INDEX_URL": ours.as_uri()}
    env.pop("PIP_EXTRA_INDEX_URL", None)
    plan = _dry_run("-r", f"{ours.as_uri()}/install/agentos-core[server].txt", env=env)
    assert plan["agentos-core"] == ("0.3.0", f"{ours.as_uri()}/files/agentos-core/{core.name}")
    deps = _dry_run("thirdparty-web>=1", env=env)  # the extra's third-party dependency: pip's usual index
    assert deps["thirdparty-web"][1].startswith(pypi.as_uri())
    plain = _dry_run("agentos-core[server]", env=env)  # what the file protects from: the other index's project
    assert plain["agentos-core"][0] == "99.0.0"

    full = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "-q", "--report", "-"]
        + ["--disable-pip-version-check", "-r", f"{ours.as_uri()}/install/agentos-env-demo[dask].txt"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert full.returncode == 0, full.stderr
    got = {i["metadata"]["name"]: i["metadata"]["version"] for i in json.loads(full.stdout)["install"]}
    assert got == {"agentos-core": "0.3.0", "agentos-env-demo": "1.0.0", "thirdparty-web": "1.0.0"}

    newer = _wheel(  # a release without the extra: its stale install file goes
        tmp_path,
        "agentos-env-demo",
        "1.1.0",
        deps=("agentos-core>=0.3",),
        entry_points={"agentos.environment": {"demo": "agentos_env_demo:Env"}},
        module="agentos_env_demo",
    )
    publish([str(newer)], str(ours))
    assert not (install / "agentos-env-demo[dask].txt").exists() and (install / "agentos-core[dask].txt").exists()


def test_extra_names_outside_pep_685_get_no_file_beside_their_valid_twin():
    from agentos.registry._install_files import MAX_EXTRAS, extras

    hostile = ["x; extra == '../../evil'", 'y; extra == "a b"', "z; extra == '.hidden'", "w; extra == 'sub/dir'"]
    valid = ["x; extra == 'Server'", "y; extra == 'the_dask.extra'"]
    assert extras({"requires": hostile + valid}) == ["server", "the-dask-extra"]
    many = [f"x; extra == 'e{i:03d}'" for i in range(500)]
    assert len(extras({"requires": many})) == MAX_EXTRAS

"""``agentos publish``/``yank`` write the folder that a local ``$AGENTOS_INDEX_URL`` names.

Before, with agentos-core installed from a wheel (no checkout, so no embedded index/), both said
``no index folder: pass --index DIR`` even with ``AGENTOS_INDEX_URL=file://...`` set, which the
README's Registry block relies on.
"""

from __future__ import annotations

import json

from registry.wheelmaker import env_wheel


def test_publish_and_yank_use_a_file_index_url(core_venv, index_copy, tmp_path):
    venv = core_venv("publish-env")
    wheel = env_wheel(tmp_path / "wheels", "envurl", "1.0.0")
    for url in (index_copy.as_uri(), str(index_copy / "simple")):  # a file:// URL, a folder (…/simple too)
        env = {"AGENTOS_INDEX_URL": url}
        published = venv.agentos("publish", wheel, env=env)
        assert published.returncode == 0, published.stderr
        assert f"index: {index_copy}\n" in published.stdout, published.stdout
    catalogue = json.loads((index_copy / "catalogue.json").read_text())
    assert "agentos-env-envurl" in json.dumps(catalogue)
    env = {"AGENTOS_INDEX_URL": index_copy.as_uri()}
    yanked = venv.agentos("yank", "agentos-env-envurl", "1.0.0", "--reason", "test", env=env)
    assert yanked.returncode == 0, yanked.stderr
    assert "data-yanked" in (index_copy / "simple" / "agentos-env-envurl" / "index.html").read_text()


def test_an_http_index_url_is_not_a_folder_to_write(core_venv, tmp_path):
    venv = core_venv("publish-http")
    wheel = env_wheel(tmp_path / "wheels", "envurl", "1.0.0")
    refused = venv.agentos("publish", wheel, env={"AGENTOS_INDEX_URL": "http://127.0.0.1:9/"})
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.strip().splitlines() == [
        "agentos: error: no index folder: pass --index DIR (or set AGENTOS_INDEX_URL to a file:// URL)"]

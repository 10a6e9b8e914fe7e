"""Load: 20 concurrent uploads of distinct projects and 200 concurrent page reads, all succeed."""

from __future__ import annotations

import asyncio
import hashlib
import time

import httpx
from agentos.registry import check_index
from registry.wheelmaker import env_wheel


def test_concurrent_uploads_and_reads(seeded_index, tmp_path):
    from server.conftest import Server

    # 220 concurrent connections from one address: over the default limit per client (32)
    server = Server(seeded_index, tmp_path / "server.log", "--max-client-connections", "256")
    try:
        _concurrent_uploads_and_reads(server, tmp_path)
    finally:
        server.stop()


def _concurrent_uploads_and_reads(server, tmp_path):
    owners = [server.token(f"author{i}") for i in range(4)]
    tokens = [owners[i % 4] for i in range(20)]
    wheels = [env_wheel(tmp_path / "w", f"load{i}", "1.0") for i in range(20)]

    async def upload(client, token, wheel):
        data = wheel.read_bytes()
        fields = {":action": "file_upload", "protocol_version": "1", "sha256_digest": hashlib.sha256(data).hexdigest()}
        return await client.post(
            "/legacy/", data=fields, files={"content": (wheel.name, data)}, auth=("__token__", token)
        )

    async def read(client, i):
        path = ["/", "/simple/", "/simple/agentos-env-seed/", "/components/environment/seed.html"][i % 4]
        return await client.get(path, headers={"Accept": "application/vnd.pypi.simple.v1+json"} if i % 8 == 2 else {})

    async def main():
        limits = httpx.Limits(max_connections=250)
        async with httpx.AsyncClient(base_url=server.url, timeout=60, limits=limits) as client:
            jobs = [upload(client, t, w) for t, w in zip(tokens, wheels, strict=True)]
            jobs += [read(client, i) for i in range(200)]
            return await asyncio.wait_for(asyncio.gather(*jobs), timeout=120)

    start = time.monotonic()
    responses = asyncio.run(main())
    elapsed = time.monotonic() - start
    print(f"220 requests in {elapsed:.1f} s")
    assert [r.status_code for r in responses] == [200] * 220, [r.text for r in responses if r.status_code != 200]
    assert elapsed < 120
    assert check_index(str(server.root)) == []
    for i in range(20):
        assert (server.root / "files" / f"agentos-env-load{i}" / wheels[i].name).exists()
    page = httpx.get(f"{server.url}/", timeout=10).text
    assert all(f">load{i}<" in page for i in range(20))

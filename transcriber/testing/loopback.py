"""Serve a fake's aiohttp application on a free loopback port."""

from __future__ import annotations

from typing import Any

from aiohttp import web


async def start_on_loopback(
    app: web.Application, **runner_options: Any
) -> tuple[web.AppRunner, str]:
    """Start `app` on 127.0.0.1 with a port the kernel picks; returns the runner and base URL."""
    runner = web.AppRunner(app, access_log=None, **runner_options)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, f"http://127.0.0.1:{port}"

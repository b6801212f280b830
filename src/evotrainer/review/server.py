"""``evotrainer review RUN_DIR``: serve the review page with waitress (a multi-threaded WSGI
server; concurrent reviewers are served in parallel and SQLite serialises their writes).

Bound to 127.0.0.1 by default: only this machine can reach it. Bound to any other address the
page is reachable by others, so an access token is required (``--token``, or a random one that
is printed in the address to share).
"""

from __future__ import annotations

import errno
import ipaddress
import random
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evotrainer.errors import ConfigError

REVIEW_HINT = "pip install 'evotrainer[review]' (Flask and waitress)"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def access_token_for(host: str, token: str | None) -> str | None:
    """The token the server requires: the given one, a fresh one off the loopback, else none."""
    if token is not None and not token.strip():
        raise ConfigError("--token: give a non-empty token")
    if token is None and not is_loopback(host):
        return secrets.token_urlsafe(18)
    return token


def make_server(
    run_dir: Path,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    rng: random.Random | None = None,
) -> tuple[Any, str, str | None]:
    """(waitress server, its address, the access token); ``server.run()`` serves until
    ``server.close()``. Port 0 picks a free port; ``rng``: the pair draws (tests pass a seeded
    one, the command line none: a system random source)."""
    try:
        # lazy: optional dependency (extra review: waitress, flask)
        from waitress import create_server

        # lazy: optional dependency (review/app.py imports flask)
        from evotrainer.review.app import create_app
    except ImportError:
        raise ConfigError(f"evotrainer review needs Flask and waitress: {REVIEW_HINT}") from None
    access = access_token_for(host, token)
    app = create_app(run_dir, access_token=access, rng=rng, host=host)
    try:
        server = create_server(app, host=host, port=port, threads=8, ident="evotrainer-review")
    except OSError as exc:
        raise ConfigError(_cannot_listen(host, port, exc)) from None
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{server.effective_port}/"
    return server, url, access


def _cannot_listen(host: str, port: int, exc: OSError) -> str:
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if exc.errno == errno.EADDRINUSE:
        return (
            f"cannot serve the review page on {where}: the port is in use by another program; "
            "choose another with --port (--port 0 picks a free one)"
        )
    return f"cannot serve the review page on {where} (--host, --port): {exc.strerror or exc}"


def serve(
    run_dir: Path,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    say: Callable[[str], None] = print,
) -> None:
    server, url, access = make_server(run_dir, host, port, token)
    say(f"review page: {url}" + (f"?token={access}" if access else ""))
    if access and not is_loopback(host):
        say("bound to a non-loopback address: share the address with its token only with reviewers")
    say(f"ratings are written to {Path(run_dir) / 'ratings.sqlite'}; Ctrl-C stops the server")
    try:
        server.run()
    finally:
        server.close()

"""Running the installer (uv): the binary its wheel ships, a minimal environment, a timeout.

Only the settings speak to uv: its own configuration files and ``UV_``/``PIP_`` variables
of the worker are ignored, so what is installed depends on nothing but the request and the
configured index or wheelhouse.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

import uv as uv_package

from activities.environments.errors import EnvironmentProblem, explain


@dataclass(frozen=True)
class Sources:
    """Where packages come from.

    Attributes:
        index_url: the package index (none: uv's default, PyPI).
        find_links: a local wheelhouse; without an index URL it is the only source.
    """

    index_url: str | None = None
    find_links: Path | None = None

    def args(self) -> list[str]:
        """Uv's options for these sources."""
        args: list[str] = []
        if self.index_url:
            args += ["--index-url", self.index_url]
        if self.find_links is not None:
            args += ["--find-links", str(self.find_links)]
            if not self.index_url:
                args.append("--no-index")
        return args

    def describe(self) -> str:
        """``the package index https://...`` or ``the wheelhouse /path``."""
        if self.find_links is not None and not self.index_url:
            return f"the wheelhouse {self.find_links}"
        return f"the package index {self.index_url or 'https://pypi.org/simple'}"

    def canonical(self) -> str:
        """A stable text of these sources, part of an environment's key."""
        return f"index={self.index_url or ''};links={self.find_links or ''}"


PASSED_ENV = ("PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE", "SSL_CERT_FILE",
              "SSL_CERT_DIR", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
"""What the installer inherits from the worker (proxies in either case); nothing else, so no
secret of the worker's (a model key, a database URL) reaches it."""


def installer_env(cache_dir: Path) -> dict[str, str]:
    """The installer's environment: locale, paths, proxies and certificates, and uv's own."""
    env = {k: v for k, v in os.environ.items() if k.upper() in PASSED_ENV}
    env.update(UV_CACHE_DIR=str(cache_dir), UV_NO_CONFIG="1", UV_NO_PROGRESS="1",
               UV_PYTHON_DOWNLOADS="never", NO_COLOR="1")
    return env


async def run_uv(args: list[str], *, cache_dir: Path, sources: Sources, timeout_s: float,
                 stdin: bytes | None = None) -> str:
    """Run ``uv <args>`` and return its stdout.

    Raises:
        EnvironmentProblem: uv failed (the reason read from what it printed) or timed out.
    """
    proc = await asyncio.create_subprocess_exec(
        uv_package.find_uv_bin(), *args, env=installer_env(cache_dir),
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin), timeout_s)
    except TimeoutError as exc:
        raise EnvironmentProblem("unreachable", f"the installer took over {timeout_s:g} s "
                                 f"talking to {sources.describe()}; check the network") from exc
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    if proc.returncode != 0:
        raise explain(err.decode(errors="replace"), index=sources.describe())
    return out.decode(errors="replace")

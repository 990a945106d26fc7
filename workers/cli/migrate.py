"""``assay migrate``: bring the database schema to the newest revision, or check that it is.

Stores migrate their database when they open, so a worker at start (and ``assay up``) needs
no separate step; this command does it on demand, before a deployment's workers start, and
``--check`` lets a health check or a deploy script ask whether the database is behind.
"""

from __future__ import annotations

from typing import Annotated

import typer

from workers.cli.common import EXIT_UNAVAILABLE, fail, run_async
from workers.settings import Settings

UrlOption = Annotated[str | None, typer.Option(
    "--database-url", help="The database to migrate (default: the configured one).")]
CheckOption = Annotated[bool, typer.Option(
    "--check", help="Change nothing; exit 1 if the database is behind the newest revision.")]


def migrate(database_url: UrlOption = None, check: CheckOption = False) -> None:
    """Upgrade the database schema to the newest revision (stores also do it when they open)."""
    from sqlalchemy import make_url
    from sqlalchemy.exc import DBAPIError
    from sqlalchemy.ext.asyncio import create_async_engine

    from database.engine import unreachable
    from database.migrations import SchemaUnknown, revisions, upgrade
    from workers.stack.launcher import database_url as configured

    async def go() -> tuple[str, str | None, str]:
        url = database_url or configured(Settings(), start=False)
        where = make_url(url).render_as_string(hide_password=True)
        engine = create_async_engine(url)
        try:
            return where, *await (revisions if check else upgrade)(engine)
        except (OSError, DBAPIError) as err:
            fail(unreachable(url, "database", err), EXIT_UNAVAILABLE)
        except SchemaUnknown as err:
            fail(f"{where}: {err}")
        finally:
            await engine.dispose()

    where, before, after = run_async(go())
    if before == after:
        typer.echo(f"{where}: schema revision {after}, the newest")
    elif check:
        fail(f"{where}: schema revision {before or 'none'}, behind the newest ({after}); "
             "run `assay migrate`")
    else:
        typer.echo(f"{where}: schema revision {before or 'none'} -> {after}")

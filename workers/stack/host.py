"""What ``assay check`` reports of this host rather than of a service.

The sandbox's isolation, the job environments, free space where Assay writes, and whether the
data directory's run data is private (see ``files``). Each is a :class:`HealthItem`.
"""

from __future__ import annotations

from dataclasses import dataclass

from workers.settings import Settings
from workers.stack.files import modes_problem, space_report


@dataclass(frozen=True)
class HealthItem:
    """One line of ``assay check``."""

    name: str
    ok: bool
    detail: str
    warning: bool = False
    """Worth acting on, though nothing is down (``assay check`` still exits 0)."""


def host_items(settings: Settings) -> list[HealthItem]:
    """Sandbox, environments, free space, and the data directory's modes (if it exists)."""
    items = [sandbox_item(settings), environments_item(settings)]
    items += [HealthItem(name, ok, detail) for name, ok, detail in space_report(settings)]
    if settings.root.is_dir():
        problem = modes_problem(settings)
        items.append(HealthItem("file modes", True, problem or f"{settings.root} is private",
                                warning=problem is not None))
    return items


def sandbox_item(settings: Settings) -> HealthItem:
    """Which isolation sandboxed jobs get here, measured by running a probe job."""
    from activities.sandbox.job import isolation_status  # its probe imports are not needed above

    status = isolation_status(settings.sandbox_isolation)
    return HealthItem("sandbox", status.ok, status.summary)


def environments_item(settings: Settings) -> HealthItem:
    """Job environments: the named sets, how many are provisioned and their size, and uv."""
    import uv

    environments = settings.environments()
    names = ", ".join(environments.catalog.names()) or "none"
    records = environments.records()
    size = sum(int(r.get("size", 0)) for r in records) / 2**20
    detail = (f"named sets: {names}; {len(records)} provisioned ({size:.1f} MiB) in "
              f"{environments.root}")
    try:
        found = uv.find_uv_bin()
    except FileNotFoundError:
        return HealthItem("environments", False, f"{detail}; uv is missing, so jobs naming an "
                          "environment are refused: reinstall Assay (uv is a dependency)")
    return HealthItem("environments", True, f"{detail}; uv at {found}")

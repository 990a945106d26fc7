"""The activity catalogue: one declaration per activity, matched by every implementation."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import typing
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from temporalio import activity

import activities
import skills
from workers.pools.builders import SERVED_POOLS
from workflows.catalogue import (
    CATALOGUE,
    EXECUTE_JOB,
    REVIEW_INFRASTRUCTURE,
    REVIEW_OPS,
    REVIEWERS,
    ActivityDecl,
    RegistrationError,
    check_registrations,
    declaration_of,
)
from workflows.contracts.pools import Pool


def implementations() -> Iterator[tuple[ActivityDecl[Any, Any], Callable[..., Any]]]:
    """Every function or method under activities/ and skills/ tied to a declaration."""
    for package in (activities, skills):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if ".migrations" in info.name:  # Alembic scripts run only inside Alembic
                continue
            module = importlib.import_module(info.name)
            for _, obj in inspect.getmembers(module):
                if getattr(obj, "__module__", None) != module.__name__:
                    continue
                members = inspect.getmembers(obj) if inspect.isclass(obj) else [("", obj)]
                for _, fn in members:
                    decl = declaration_of(fn) if callable(fn) else None
                    if decl is not None:
                        yield decl, fn


def test_names_are_unique_and_every_pool_is_served() -> None:
    names = [d.name for d in CATALOGUE]
    assert len(names) == len(set(names))
    assert {d.pool for d in CATALOGUE} == set(SERVED_POOLS)
    assert [d.pool for d in REVIEWERS] == [Pool.AGENTS, Pool.AGENTS, Pool.SANDBOX]


def test_every_declaration_has_exactly_one_implementation_with_its_types() -> None:
    found: dict[str, list[Callable[..., Any]]] = {}
    for decl, fn in implementations():
        found.setdefault(decl.name, []).append(fn)
        hints = typing.get_type_hints(fn)
        params = [p for p in inspect.signature(fn).parameters if p != "self"]
        assert hints["return"] == decl.result, decl.name
        if decl.arg is None:
            assert params == [], decl.name
        else:
            assert len(params) == 1 and hints[params[0]] == decl.arg, decl.name
    assert sorted(found) == sorted(d.name for d in CATALOGUE)
    assert all(len(fns) == 1 for fns in found.values()), {
        name: [f.__qualname__ for f in fns] for name, fns in found.items() if len(fns) > 1}


def test_a_declaration_names_its_temporal_activity() -> None:
    @REVIEW_OPS.defn
    async def review(req: Any) -> Any:
        return req

    definition = activity._Definition.must_from_callable(review)  # pyright: ignore[reportPrivateUsage, reportUnknownMemberType]
    assert definition.name == "review_ops"
    assert declaration_of(review) is REVIEW_OPS


def fake(decl: ActivityDecl[Any, Any]) -> Callable[..., Any]:
    @decl.defn
    async def impl(req: Any) -> Any:
        return req

    return impl


def undeclared(req: Any) -> Any:
    return req


def test_a_pool_registering_exactly_its_declarations_passes() -> None:
    sandbox = [fake(d) for d in CATALOGUE if d.pool is Pool.SANDBOX]
    check_registrations(Pool.SANDBOX, sandbox)


@pytest.mark.parametrize(("extra", "drop", "expected"), [
    (undeclared, None, "undeclared is not declared in the catalogue"),
    (fake(REVIEW_OPS), None, "review_ops belongs to pool assay-agents, not assay-sandbox"),
    (fake(EXECUTE_JOB), None, "execute_job is registered twice"),
    (None, "review_infrastructure", "review_infrastructure is declared for assay-sandbox but "
                                    "not registered"),
])
def test_a_pool_that_misses_or_adds_an_activity_is_refused(
        extra: Callable[..., Any] | None, drop: str | None, expected: str) -> None:
    sandbox = [fake(d) for d in CATALOGUE if d.pool is Pool.SANDBOX and d.name != drop]
    if extra is not None:
        sandbox.append(extra)
    with pytest.raises(RegistrationError, match=expected):
        check_registrations(Pool.SANDBOX, sandbox)
    assert REVIEW_INFRASTRUCTURE.pool is Pool.SANDBOX

"""``assay memory``: rules listed, shown, switched and edited; templates, episodes, ledger.

Every command runs against a database of its own, seeded through MemoryStore. Malformed input
exits 2 with a message naming the problem; an unknown or unusable rule exits 1.
"""

from __future__ import annotations

import asyncio
import json
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from typer.testing import CliRunner, Result

from activities.memory.store import LedgerEntry, MemoryStore
from workers.cli.main import app
from workflows.contracts.memory import Episode, MemoryRule, Recommendation
from workflows.contracts.plan import JobSpec

runner = CliRunner()
db = pytest.mark.integration
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def make_rule(rule_id: str, task_type: str, root_cause: str, *, batch: int = 16,
              confidence: float = 0.8, status: str = "active") -> MemoryRule:
    return MemoryRule.model_validate({
        "rule_id": rule_id, "task_type": task_type, "root_cause": root_cause,
        "pattern": f"{root_cause} in 3 tasks", "observation": "a smaller batch fixed it",
        "recommendation": Recommendation(action="cap the batch size",
                                         parameters={"args.batch_size": batch},
                                         limits={"args.batch_size": "max"}),
        "occurrences": 3, "success_count": 3, "failure_count": 1, "confidence": confidence,
        "status": status, "created_at": T0})


async def seed(url: str) -> None:
    async with MemoryStore(url) as store:
        await store.save_rule(make_rule("rule-oom", "train-model", "out_of_memory"))
        await store.save_rule(make_rule("rule-slow", "train-model", "timeout", batch=8,
                                        confidence=0.9))
        await store.save_rule(make_rule("rule-off", "profile-table", "timeout",
                                        status="disabled"))
        await store.save_rule(make_rule("rule-bent", "profile-table", "out_of_memory",
                                        confidence=0.4))
        job = JobSpec(code="print('fit')", args={"batch_size": 32})
        for _ in range(2):
            await store.note_clean_success("train-model", "Train the model", job, [], T0)
        await store.record_episodes([
            Episode(episode_id=f"ep-{n}", recorded_at=T0 - timedelta(days=n), run_id="run-1",
                    task_id="a", task_type="train-model", phase="execution", attempt=n,
                    root_cause="out_of_memory", outcome="fixed", patch_id=f"patch-{n}")
            for n in range(1, 4)])
        await store.append_ledger([
            LedgerEntry(entry_id=f"entry-{n}", kind="rule", run_id=f"run-{n}",
                        body={"rule_id": "rule-oom", "n": n}) for n in range(1, 4)])


def sql(url: str, *statements: str) -> None:
    """Run statements straight against the database, as someone bypassing Assay would."""

    async def go() -> None:
        async with MemoryStore(url) as store, store.engine.begin() as conn:
            for statement in statements:
                await conn.execute(text(statement))

    asyncio.run(go())


@pytest.fixture
async def memory(fresh_database_url: str, monkeypatch: pytest.MonkeyPatch,
                 tmp_path: Path) -> str:
    """A seeded memory database the CLI is pointed at; returns its URL."""
    await seed(fresh_database_url)
    monkeypatch.setenv("ASSAY_DATABASE_URL", fresh_database_url)
    monkeypatch.setenv("ASSAY_DATA_DIR", str(tmp_path / "assay"))
    monkeypatch.setenv("ASSAY_USER", "tester")
    return fresh_database_url


def memory_cli(*args: str) -> Result:
    return runner.invoke(app, ["memory", *args])


def shown_rule(rule_id: str) -> dict[str, Any]:
    result = memory_cli("show", rule_id, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@db
def test_rules_are_listed_most_confident_first(memory: str) -> None:
    sql(memory, """UPDATE memory_rules SET body = jsonb_set(body, '{confidence}', '0.99')
                   WHERE rule_id = 'rule-bent'""")
    result = memory_cli("rules")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["rule", "task", "type", "root", "cause", "recommendation",
                                "s/f", "confidence", "status"]
    assert lines[1].split() == ["rule-slow", "train-model", "timeout", "args.batch_size=8",
                                "(max)", "3/1", "0.90", "active"]
    assert lines[2].split() == ["rule-oom", "train-model", "out_of_memory",
                                "args.batch_size=16", "(max)", "3/1", "0.80", "active"]
    assert lines[3].startswith("warning: rule rule-bent was changed outside Assay "
                               "(checksum mismatch)")
    assert len(lines) == 4, "the disabled rule is left out"

    everything = memory_cli("rules", "--all", "--type", "profile-table").stdout.splitlines()
    assert [line.split()[0] for line in everything[1:]] == ["rule-off", "warning:"]
    assert memory_cli("rules", "--type", "nothing").stdout == "no rules for task type nothing\n"


@db
def test_show_gives_everything_about_a_rule(memory: str) -> None:
    result = memory_cli("show", "rule-oom")
    assert result.exit_code == 0, result.output
    fields = dict(line.split(":", 1) for line in result.stdout.splitlines())
    assert fields["recommendation"].strip() == "cap the batch size: args.batch_size=16 (max)"
    assert fields["evidence"].strip() == "3 occurrences, 3 successes, 1 failure"
    assert fields["pattern"].strip() == "out_of_memory in 3 tasks"
    assert fields["created"].strip() == "2026-03-01T12:00:00+00:00"
    assert fields["last validated"].strip() == "-"
    assert fields["updated by"].strip() == "reflection"
    assert len(fields["sha256"].strip()) == 64
    as_json = shown_rule("rule-oom")
    assert MemoryRule.model_validate(as_json).recommendation.parameters == {
        "args.batch_size": 16}

    result = memory_cli("show", "rule-nope")
    assert result.exit_code == 1
    assert "no rule 'rule-nope'; `assay memory rules --all` lists them" in result.stderr


@db
def test_rules_are_disabled_and_enabled_in_someones_name(memory: str) -> None:
    result = memory_cli("disable", "rule-oom", "--by", "ada")
    assert (result.exit_code, result.stdout) == (0, "rule rule-oom disabled by ada\n")
    assert (shown_rule("rule-oom")["status"], shown_rule("rule-oom")["updated_by"]) == (
        "disabled", "ada")
    assert "rule-oom" not in memory_cli("rules").stdout

    result = memory_cli("enable", "rule-oom")
    assert (result.exit_code, result.stdout) == (0, "rule rule-oom enabled by tester\n")
    assert shown_rule("rule-oom")["status"] == "active"

    result = memory_cli("enable", "rule-bent")
    assert result.exit_code == 0
    assert "note: its confidence 0.40 is below 0.5" in result.stderr

    result = memory_cli("disable", "rule-nope")
    assert result.exit_code == 1 and "no rule 'rule-nope'" in result.stderr


@db
def test_candidate_rules_and_templates_are_approved_in_someones_name(memory: str) -> None:
    async def candidates() -> str:
        async with MemoryStore(memory) as store:
            await store.save_rule(make_rule("rule-new", "train-model", "missing_dependency",
                                            status="candidate"))
            job = JobSpec(code="print('plot')", args={"dpi": 90})
            await store.note_clean_success("train-model", "Plot it", job, [], T0, "person")
            held = await store.note_clean_success("train-model", "Plot it", job, [], T0,
                                                  "person")
            return held.template_id

    tid = asyncio.run(candidates())
    assert "rule-new" in memory_cli("rules").stdout  # listed, waiting
    assert shown_rule("rule-new")["status"] == "candidate"
    result = memory_cli("approve", "rule-new", "--by", "ada")
    assert (result.exit_code, result.stdout) == (0, "rule rule-new enabled by ada\n")
    assert shown_rule("rule-new")["status"] == "active"

    assert tid not in memory_cli("templates").stdout  # not cached: listed with --all only
    assert tid in memory_cli("templates", "--all").stdout
    result = memory_cli("approve", tid)
    assert (result.exit_code, result.stdout) == (
        0, f"template {tid} approved by tester: it is cached\n")
    assert tid in memory_cli("templates").stdout

    result = memory_cli("approve", "tpl-nope")
    assert result.exit_code == 1 and "no template 'tpl-nope'" in result.stderr


@db
def test_edit_sets_values_read_as_json_scalars(memory: str) -> None:
    result = memory_cli("edit", "rule-oom", "--set", "args.batch_size=12",
                        "--set", "resources.cpus=0.5", "--set", "args.shuffle=true",
                        "--set", "args.mode=fast", "--limit", "resources.cpus=min",
                        "--observation", "12 fits", "--by", "ada")
    assert result.exit_code == 0, result.output
    assert result.stdout == ("rule rule-oom edited by ada: args.batch_size=12 (max), "
                             "resources.cpus=0.5 (min), args.shuffle=true, args.mode=fast\n")
    rule = shown_rule("rule-oom")
    assert rule["recommendation"]["parameters"] == {
        "args.batch_size": 12, "resources.cpus": 0.5, "args.shuffle": True, "args.mode": "fast"}
    assert (rule["observation"], rule["updated_by"]) == ("12 fits", "ada")
    assert "rule-oom" in memory_cli("rules").stdout, "an edited rule is still applied"


@db
@pytest.mark.parametrize(("args", "code", "message"), [
    (["--set", "args.batch_size"], 2,
     "--set 'args.batch_size': expected FIELD=VALUE, e.g. --set args.batch_size=12"),
    (["--set", "=12"], 2, "expected FIELD=VALUE"),
    (["--limit", "args.batch_size"], 2, "--limit 'args.batch_size': expected FIELD=VALUE"),
    (["--set", "entry=other.py"], 2, "field 'entry' cannot be edited: use args.<name>, "
                                     "resources.memory_mb, resources.timeout_s or "
                                     "resources.cpus"),
    (["--set", "resources.memory_mb=4"], 2, "resources.memory_mb=4 is out of range"),
    (["--set", "resources.timeout_s=NaN"], 2, "resources.timeout_s must be a number, not 'NaN'"),
    (["--limit", "args.batch_size=often"], 2, "limit of args.batch_size must be max, min or set"),
    (["--limit", "args.epochs=max"], 2, "limit of args.epochs has no value"),
    ([], 2, "nothing to change"),
])
def test_a_malformed_edit_exits_2_and_changes_nothing(memory: str, args: list[str], code: int,
                                                      message: str) -> None:
    before = shown_rule("rule-oom")
    result = memory_cli("edit", "rule-oom", *args)
    assert result.exit_code == code
    assert message in result.stderr
    assert shown_rule("rule-oom") == before


@db
def test_editing_an_unknown_or_unreadable_rule_exits_1(memory: str) -> None:
    result = memory_cli("edit", "rule-nope", "--set", "args.batch_size=4")
    assert result.exit_code == 1 and "no rule 'rule-nope'" in result.stderr

    sql(memory, "UPDATE memory_rules SET body = jsonb_set(body, '{confidence}', '7') "
                "WHERE rule_id = 'rule-oom'")
    result = memory_cli("edit", "rule-oom", "--set", "args.batch_size=4")
    assert result.exit_code == 1
    assert "rule rule-oom is unreadable: confidence: Input should be less than or equal to 1" \
        in result.stderr
    result = memory_cli("show", "rule-oom")
    assert result.exit_code == 1 and "is unreadable" in result.stderr
    assert "warning: rule rule-oom is unreadable" in memory_cli("rules").stdout


@db
def test_a_rule_changed_outside_assay_is_shown_and_adopted_by_an_edit(memory: str) -> None:
    sql(memory, """UPDATE memory_rules SET body = jsonb_set(body,
                   '{recommendation,parameters,args.batch_size}', '64')
                   WHERE rule_id = 'rule-oom'""")
    result = memory_cli("show", "rule-oom")
    assert result.exit_code == 0
    assert "warning: rule rule-oom was changed outside Assay" in result.stderr
    assert "args.batch_size=64 (max)" in result.stdout

    result = memory_cli("edit", "rule-oom", "--observation", "checked by hand")
    assert result.exit_code == 0, result.output
    assert "note: rule rule-oom had been changed outside Assay" in result.stderr
    assert "warning" not in memory_cli("rules").stdout
    assert shown_rule("rule-oom")["recommendation"]["parameters"] == {"args.batch_size": 64}


@db
def test_templates_episodes_and_prune(memory: str) -> None:
    lines = memory_cli("templates").stdout.splitlines()
    assert lines[0].split() == ["template", "task", "type", "cached", "clean", "uses",
                                "successes", "last", "used", "action"]
    assert lines[1].split()[1:6] == ["train-model", "yes", "2", "0", "0"]
    assert memory_cli("templates", "--type", "profile-table").stdout.startswith("no templates")

    lines = memory_cli("episodes", "--type", "train-model", "--limit", "2").stdout.splitlines()
    assert [line.split()[-1] for line in lines] == ["patch", "patch-1", "patch-2"]
    assert memory_cli("episodes", "--type", "nothing").stdout == "no episodes\n"

    result = memory_cli("prune", "--keep", "1", "--max-age-days", "100000")
    assert (result.exit_code, result.stdout) == (0, "pruned 2 episodes\n")
    assert len(memory_cli("episodes").stdout.splitlines()) == 2
    assert memory_cli("prune", "--keep", "-1").exit_code == 2


@db
def test_ledger_is_listed_and_verified(memory: str) -> None:
    lines = memory_cli("ledger").stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["seq", "1", "2", "3"]
    lines = memory_cli("ledger", "--run", "run-2").stdout.splitlines()
    assert len(lines) == 2 and "entry-2" in lines[1]
    assert memory_cli("ledger", "--run", "run-9").stdout == "no ledger entries for run run-9\n"
    result = memory_cli("ledger", "--verify")
    assert (result.exit_code, result.stdout) == (0, "memory ledger intact: 3 entries\n")

    sql(memory, "ALTER TABLE memory_ledger DISABLE TRIGGER ALL",
        "UPDATE memory_ledger SET body = '{\"n\": 99}' WHERE seq = 2",
        "ALTER TABLE memory_ledger ENABLE TRIGGER ALL")
    result = memory_cli("ledger", "--verify")
    assert result.exit_code == 1
    assert "memory ledger broken at seq 2 (entry entry-2)" in result.stderr


def test_an_unreachable_database_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    monkeypatch.setenv("ASSAY_DATABASE_URL",
                       f"postgresql+asyncpg://ada:secret@127.0.0.1:{port}/assay")
    result = memory_cli("rules")
    assert result.exit_code == 3
    assert "cannot open the memory store at postgresql+asyncpg://ada:***@" in result.stderr
    assert "secret" not in result.stderr

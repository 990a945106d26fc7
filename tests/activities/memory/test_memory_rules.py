"""Memory turned into changes: recommendations, rules applied under guardrails, proven fixes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from activities.memory.rules import (
    apply_rules,
    limits_of,
    matching_template,
    proven_fix,
    recommended_changes,
    rule_from_episodes,
)
from workflows.contracts.memory import (
    Episode,
    Limit,
    MemoryRule,
    ProceduralTemplate,
    Recommendation,
    RuleStatus,
)
from workflows.contracts.plan import JobSpec, Resources, Scalar
from workflows.contracts.policy import ReviewPolicy
from workflows.contracts.reflection import PatchChange

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TYPE = "train-classifier"
BATCH = "args.batch_size"
POLICY = ReviewPolicy()


def job(args: dict[str, Scalar] | None = None, *, memory_mb: int = 1024,
        timeout_s: float = 600) -> JobSpec:
    return JobSpec(code="print(1)", source="print(1)", filename="job.py",
                   args={"batch_size": 64} if args is None else args,
                   resources=Resources(memory_mb=memory_mb, timeout_s=timeout_s))


def rec(parameters: dict[str, Scalar], limits: dict[str, Limit] | None = None) -> Recommendation:
    return Recommendation(action="avoid out_of_memory", parameters=parameters,
                          limits=limits or {})


def rule(rule_id: str, parameters: dict[str, Scalar] | None = None, *,
         limits: dict[str, Limit] | None = None, confidence: float = 0.8,
         status: RuleStatus = "active", root_cause: str = "out_of_memory") -> MemoryRule:
    return MemoryRule(rule_id=rule_id, task_type=TYPE, root_cause=root_cause,
                      pattern=f"{TYPE}: {root_cause}", observation="seen in 3 tasks",
                      recommendation=rec(parameters or {BATCH: 16},
                                         {BATCH: "max"} if limits is None else limits),
                      occurrences=3, success_count=3, confidence=confidence, status=status)


# --- recommended_changes -------------------------------------------------------------------


def test_max_lowers_a_field_above_the_value_and_leaves_one_below() -> None:
    changes, problem = recommended_changes(job(), rec({BATCH: 16}, {BATCH: "max"}))
    assert problem == ""
    assert [(c.field, c.old_value, c.new_value) for c in changes] == [(BATCH, 64, 16)]
    assert changes[0].reason == "avoid out_of_memory (max 16)"
    assert recommended_changes(job({"batch_size": 8}), rec({BATCH: 16}, {BATCH: "max"})) \
        == ([], "")


def test_min_raises_a_field_below_the_value_and_leaves_one_above() -> None:
    raise_it = rec({"resources.timeout_s": 1200}, {"resources.timeout_s": "min"})
    changes, _ = recommended_changes(job(timeout_s=600), raise_it)
    assert [(c.old_value, c.new_value) for c in changes] == [(600, 1200)]
    assert recommended_changes(job(timeout_s=1800), raise_it) == ([], "")


def test_set_is_the_default_and_changes_only_a_different_value() -> None:
    changes, _ = recommended_changes(job({"solver": "lbfgs"}), rec({"args.solver": "saga"}))
    assert [(c.old_value, c.new_value) for c in changes] == [("lbfgs", "saga")]
    assert changes[0].reason == "avoid out_of_memory (set 'saga')"
    assert recommended_changes(job({"solver": "saga"}), rec({"args.solver": "saga"})) \
        == ([], "")
    lowered, _ = recommended_changes(job({"batch_size": 8}), rec({BATCH: 16}))
    assert [c.new_value for c in lowered] == [16], "set also raises a numeric field"


@pytest.mark.parametrize(("parameters", "reason"), [
    ({BATCH: 16}, "the job has no args.batch_size"),
    ({"entry": "other.py"}, "the job has no entry"),
    ({"resources.gpus": 1}, "the job has no resources.gpus"),
])
def test_a_field_the_job_lacks_is_a_reason(parameters: dict[str, Scalar], reason: str) -> None:
    assert recommended_changes(job({"n": 5}), rec(parameters)) == ([], reason)


@pytest.mark.parametrize(("current", "value", "reason"), [
    ("big", 16, "the job's args.batch_size is 'big', not a int like the rule's 16"),
    (True, 16, "the job's args.batch_size is True, not a int like the rule's 16"),
    (64, "16", "the job's args.batch_size is 64, not a str like the rule's '16'"),
    (64, False, "the job's args.batch_size is 64, not a bool like the rule's False"),
])
def test_a_value_of_another_type_is_a_reason(current: Scalar, value: Scalar,
                                             reason: str) -> None:
    changes = recommended_changes(job({"batch_size": current}), rec({BATCH: value},
                                                                    {BATCH: "max"}))
    assert changes == ([], reason)


def test_a_whole_float_for_an_int_field_becomes_an_int() -> None:
    changes, _ = recommended_changes(job(), rec({BATCH: 16.0}, {BATCH: "max"}))
    assert [c.new_value for c in changes] == [16]
    assert type(changes[0].new_value) is int
    half, _ = recommended_changes(job(), rec({BATCH: 16.5}, {BATCH: "max"}))
    assert type(half[0].new_value) is float


def test_every_parameter_must_fit_or_none_is_changed() -> None:
    both = rec({BATCH: 16, "args.epochs": 5}, {BATCH: "max"})
    assert recommended_changes(job(), both) == ([], "the job has no args.epochs")


# --- apply_rules ---------------------------------------------------------------------------


def test_a_confident_rule_patches_the_job_and_is_recorded() -> None:
    applied = apply_rules(job(), [rule("r1")], POLICY, min_confidence=0.75)
    assert applied.job.args == {"batch_size": 16}
    [use] = applied.uses
    assert (use.rule_id, use.root_cause, use.confidence) == ("r1", "out_of_memory", 0.8)
    assert [(c.field, c.old_value, c.new_value) for c in use.changes] == [(BATCH, 64, 16)]
    assert applied.skipped == []


def test_a_rule_below_the_confidence_asked_for_is_skipped() -> None:
    applied = apply_rules(job(), [rule("r1", confidence=0.6)], POLICY, min_confidence=0.75)
    assert applied.job == job() and applied.uses == []
    assert applied.skipped == ["rule r1 has confidence 0.60, below 0.75"]


@pytest.mark.parametrize("status", ["disabled", "demoted"])
def test_a_rule_not_active_is_skipped(status: RuleStatus) -> None:
    applied = apply_rules(job(), [rule("r1", confidence=0.95, status=status)], POLICY,
                          min_confidence=0.75)
    assert applied.job == job() and applied.uses == []
    assert applied.skipped == [f"rule r1 is {status}"]


def test_of_two_conflicting_rules_the_more_confident_applies() -> None:
    rules = [rule("r-low", {BATCH: 8}, confidence=0.8, root_cause="timeout"),
             rule("r-high", {BATCH: 16}, confidence=0.9)]
    applied = apply_rules(job(), rules, POLICY, min_confidence=0.75)
    assert applied.job.args == {"batch_size": 16}
    assert [u.rule_id for u in applied.uses] == ["r-high"]
    assert applied.skipped == ["rule r-low conflicts with r-high on args.batch_size: the more "
                               "confident r-high applies"]


def test_two_conflicting_rules_of_equal_confidence_are_both_skipped() -> None:
    rules = [rule("r1", {BATCH: 8}, root_cause="timeout"), rule("r2", {BATCH: 16})]
    applied = apply_rules(job(), rules, POLICY, min_confidence=0.75)
    assert applied.job == job() and applied.uses == []
    assert applied.skipped == ["rules r1 and r2 conflict on args.batch_size with equal "
                               "confidence: neither applied"]


def test_a_rule_raising_memory_is_refused_and_nothing_is_applied() -> None:
    rules = [rule("r-batch"),
             rule("r-memory", {"resources.memory_mb": 4096}, limits={"resources.memory_mb": "min"},
                  root_cause="timeout")]
    applied = apply_rules(job(memory_mb=1024), rules, POLICY, min_confidence=0.75)
    assert applied.job == job(memory_mb=1024), "not even the acceptable rule is applied"
    assert applied.uses == []
    assert len(applied.skipped) == 2
    for rule_id, why in zip(("r-batch", "r-memory"), applied.skipped, strict=True):
        assert why.startswith(f"rule {rule_id} refused by the guardrails: ")
        assert "raises resources.memory_mb from 1024 to 4096 MiB" in why


def test_a_rule_naming_an_argument_the_job_no_longer_has_is_skipped() -> None:
    applied = apply_rules(job({"chunk_size": 100}), [rule("r1")], POLICY, min_confidence=0.75)
    assert applied.job == job({"chunk_size": 100}) and applied.uses == []
    assert applied.skipped == ["rule r1 no longer applies: the job has no args.batch_size"]


def test_a_rule_the_job_already_satisfies_is_skipped() -> None:
    applied = apply_rules(job({"batch_size": 8}), [rule("r1")], POLICY, min_confidence=0.75)
    assert applied.uses == []
    assert applied.skipped == ["rule r1 is already satisfied by the job"]


def test_rules_on_different_fields_are_applied_together() -> None:
    rules = [rule("r1"), rule("r2", {"resources.timeout_s": 1200},
                              limits={"resources.timeout_s": "min"}, root_cause="timeout")]
    applied = apply_rules(job(), rules, POLICY, min_confidence=0.75)
    assert applied.job.args == {"batch_size": 16}
    assert applied.job.resources.timeout_s == 1200
    assert sorted(u.rule_id for u in applied.uses) == ["r1", "r2"]


def test_two_rules_agreeing_on_a_field_are_both_applied() -> None:
    rules = [rule("r1", confidence=0.9), rule("r2", confidence=0.8, root_cause="timeout")]
    applied = apply_rules(job(), rules, POLICY, min_confidence=0.75)
    assert applied.job.args == {"batch_size": 16}
    assert sorted(u.rule_id for u in applied.uses) == ["r1", "r2"]


# --- proven_fix and limits_of --------------------------------------------------------------


def episode(n: int, fix: dict[str, Scalar] | None = None, *, outcome: str = "fixed",
            root_cause: str = "out_of_memory", run: str = "run-1",
            changes: list[PatchChange] | None = None) -> Episode:
    return Episode(episode_id=f"ep-{n}", recorded_at=T0 + timedelta(minutes=n), run_id=run,
                   task_id=f"task-{n}", task_type=TYPE, phase="execution", attempt=1,
                   root_cause=root_cause, outcome=outcome,
                   fix={BATCH: 32} if fix is None else fix,
                   changes=changes if changes is not None
                   else [PatchChange(field=BATCH, old_value=64, new_value=32)])


def test_proven_fix_prefers_an_active_rule_to_an_episode() -> None:
    found = proven_fix(job(), "out_of_memory", [rule("r1")], [episode(1)])
    assert found is not None
    changes, source, ref = found
    assert (source, ref) == ("semantic_rule", "r1")
    assert [c.new_value for c in changes] == [16]


def test_proven_fix_falls_back_to_the_newest_fitting_fixed_episode() -> None:
    newest_first = [
        episode(6, root_cause="timeout"),
        episode(5, outcome="unfixed", fix={}),
        episode(4, fix={}),
        episode(3, {"args.chunk_size": 10}),  # the job has no chunk_size
        episode(2, {BATCH: 16}, changes=[PatchChange(field=BATCH, old_value=64, new_value=32),
                                         PatchChange(field=BATCH, old_value=32,
                                                     new_value=16)]),
        episode(1),
    ]
    found = proven_fix(job(), "out_of_memory",
                       [rule("r-off", status="disabled"), rule("r-timeout",
                                                               root_cause="timeout")],
                       newest_first)
    assert found is not None
    changes, source, ref = found
    assert (source, ref) == ("episodic", "ep-2")
    assert [(c.field, c.old_value, c.new_value) for c in changes] == [(BATCH, 64, 16)]


def test_proven_fix_is_none_when_nothing_fits() -> None:
    small = job({"batch_size": 8})  # every fix below asks for more than this
    assert proven_fix(small, "out_of_memory", [rule("r1")], [episode(1)]) is None
    assert proven_fix(job(), "timeout", [rule("r1")], [episode(1)]) is None
    assert proven_fix(job({"n": 1}), "out_of_memory", [rule("r1")], [episode(1)]) is None
    assert proven_fix(job(), "out_of_memory", [], []) is None


def test_limits_of_says_how_each_fix_moved_its_field() -> None:
    ep = episode(1, {BATCH: 16, "resources.timeout_s": 1200, "args.solver": "saga",
                     "args.seed": 7, "args.shuffle": False},
                 changes=[PatchChange(field=BATCH, old_value=64, new_value=32),
                          PatchChange(field=BATCH, old_value=32, new_value=16),
                          PatchChange(field="resources.timeout_s", old_value=600,
                                      new_value=1200),
                          PatchChange(field="args.solver", old_value="lbfgs",
                                      new_value="saga"),
                          PatchChange(field="args.seed", old_value=7, new_value=7),
                          PatchChange(field="args.shuffle", old_value=True,
                                      new_value=False)])
    assert limits_of(ep) == {BATCH: "max", "resources.timeout_s": "min", "args.solver": "set",
                             "args.seed": "set", "args.shuffle": "set"}
    assert limits_of(episode(2, {"args.epochs": 5}, changes=[])) == {"args.epochs": "set"}


# --- rule_from_episodes --------------------------------------------------------------------


def test_a_rule_counts_distinct_fixed_and_unfixed_tasks_and_takes_the_newest_fix() -> None:
    newest_first = [
        episode(5, {BATCH: 16}, run="run-3").model_copy(update={"task_id": "a"}),
        episode(4, run="run-2").model_copy(update={"task_id": "a"}),
        episode(3, run="run-2").model_copy(update={"task_id": "a"}),  # a second attempt
        episode(2, outcome="unfixed", fix={}, run="run-1"),
        episode(1, {BATCH: 4}, root_cause="timeout"),
    ]
    made = rule_from_episodes("sem-1", TYPE, "out_of_memory", newest_first, occurrences=3)
    assert made is not None
    assert (made.success_count, made.failure_count) == (2, 1)
    assert made.confidence == pytest.approx(3 / 5)  # Laplace: (2 + 1) / (2 + 1 + 2)
    assert made.recommendation.parameters == {BATCH: 16}
    assert made.recommendation.limits == {BATCH: "max"}
    assert (made.rule_id, made.task_type, made.root_cause, made.occurrences, made.status) == (
        "sem-1", TYPE, "out_of_memory", 3, "active")
    assert made.created_at == made.last_validated == T0 + timedelta(minutes=5)


def test_no_rule_without_a_fix_that_worked() -> None:
    never_fixed = [episode(1, outcome="unfixed", fix={}), episode(2, fix={}),
                   episode(3, root_cause="timeout")]
    assert rule_from_episodes("sem-1", TYPE, "out_of_memory", never_fixed, 3) is None


# --- matching_template ---------------------------------------------------------------------


def template(template_id: str, *inputs: str) -> ProceduralTemplate:
    return ProceduralTemplate(template_id=template_id, task_type=TYPE, action="Train",
                              job=job(), job_sha256="0" * 64, input_names=list(inputs),
                              clean_successes=2, cached=True)


def test_the_first_template_whose_inputs_the_task_has_is_chosen() -> None:
    skipped: list[str] = []
    both, one = template("tpl-both", "a.csv", "b.csv"), template("tpl-one", "a.csv")
    assert matching_template([both, one], ["a.csv", "c.csv"], skipped) == one
    assert skipped == ["template tpl-both needs inputs the task lacks: b.csv"]
    assert matching_template([both, one], ["b.csv", "a.csv"], []) == both


def test_no_template_when_the_task_lacks_their_inputs() -> None:
    skipped: list[str] = []
    assert matching_template([template("tpl-1", "a.csv")], [], skipped) is None
    assert skipped == ["template tpl-1 needs inputs the task lacks: a.csv"]
    assert matching_template([template("tpl-any")], [], []) is not None

"""The answer contract: an answer in the goal's format, checked against the metrics it cites.

When a goal names an answer format (``@mean_age[mean_age], rounded to two decimal places``),
the output processor is asked, besides its answer in words, for the answer written in that
format and, for each field, the task and verified metric its value comes from. The check here
holds each field against that metric (within the format's rounding) and keeps what fails as
the answer's ``problems``: a missing, uncited or unequal field is reported, never fatal.
"""

from __future__ import annotations

from activities.agents.prompting import section
from workflows.common.answer_format import (
    AnswerFormatError,
    as_number,
    field_decimals,
    format_names,
    parse_fields,
    same_value,
)
from workflows.contracts.context import TaskDigest
from workflows.contracts.goal import FormattedAnswer, RunAnswer, RunAnswerInFormat


def format_section(answer_format: str) -> str:
    """The prompt section that names the format and what to fill in."""
    return section("Answer format", "\n\n".join([
        answer_format,
        "Besides your answer in words, fill `in_format` with the answer written exactly in "
        "this format: every @name[value] it names, the value alone between the brackets. "
        "Fill `cites` with one entry per name: the task and the metric of its verified "
        "results the value comes from. Write only values a completed task's metrics show, "
        "rounded as the format says."]))


def checked(out: RunAnswerInFormat, answer_format: str, tasks: list[TaskDigest]) -> RunAnswer:
    """The plain answer carrying its formatted field and the field's problems."""
    values = parse_fields(out.in_format)
    field = FormattedAnswer(format=answer_format, text=out.in_format, values=values,
                            cites=list(out.cites),
                            problems=problems(answer_format, values, out, tasks))
    plain = RunAnswer(answer=out.answer, analysis=out.analysis, caveats=list(out.caveats))
    return plain.model_copy(update={"formatted": field})


def problems(answer_format: str, values: dict[str, str], out: RunAnswerInFormat,
             tasks: list[TaskDigest]) -> list[str]:
    """What keeps the formatted answer from holding: one line per field that fails."""
    try:
        names = format_names(answer_format)
    except AnswerFormatError as err:
        return [str(err)]
    places = field_decimals(answer_format)
    cited = {c.name: c for c in out.cites}
    done = {t.task_id: t for t in tasks if t.status == "completed"}
    found: list[str] = []
    for name in names:
        if name not in values:
            found.append(f"@{name}: missing from the formatted answer")
            continue
        cite = cited.get(name)
        if cite is None:
            found.append(f"@{name}: cites no verified metric")
            continue
        task = done.get(cite.task_id)
        if task is None or cite.metric not in task.metrics:
            found.append(f"@{name}: cites {cite.task_id}.{cite.metric}, which no completed "
                         "task's verified metrics hold")
            continue
        metric = task.metrics[cite.metric]
        number = as_number(metric)
        if number is None and not isinstance(metric, str):
            found.append(f"@{name}: {cite.task_id}.{cite.metric} is not a value")
        elif not same_value(values[name], metric, places.get(name)):
            found.append(f"@{name}: {values[name]} differs from {cite.task_id}."
                         f"{cite.metric} = {number if isinstance(metric, dict) else metric}")
    return found

"""Static safety analysis of a job's Python code, each finding with its line.

``check`` walks the syntax tree; ``calls`` classifies calls (network, subprocess, writes and
deletions outside the working directory, secrets, dynamic code); ``memory`` flags unbounded
allocations; ``flow`` follows names and aliases; ``rules`` holds the module tables.
"""


from activities.review.safety.check import review_quality_safety_source

__all__ = [
    "review_quality_safety_source",
]

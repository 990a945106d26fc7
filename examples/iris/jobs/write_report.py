"""Combine the findings of the hypothesis test and the regression into a Markdown report.

Standard library only. Reads the JSON findings its dependencies left as artifacts (under
``deps/<task_id>/``) and writes ``findings.md`` and ``metrics.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def load_finding(path: Path) -> dict[str, Any]:
    """A dependency's finding; exits with a clear message when it is absent."""
    if not path.is_file():
        sys.exit(f"{path} not found: is its task a dependency, and is the file among its "
                 "expected_artifacts?")
    return json.loads(path.read_text(encoding="utf-8"))


def verdict(finding: dict[str, Any]) -> str:
    return "supported" if finding["supported"] else "not supported"


def comparison_section(c: dict[str, Any]) -> list[str]:
    return [
        "## Hypothesis test",
        "",
        f"*{c['hypothesis']}* — **{verdict(c)}** at alpha = {c['alpha']}.",
        "",
        f"- groups of {c['n_a']} and {c['n_b']}; difference in means {c['mean_difference']:+.3f}",
        f"- Welch's t = {c['t_statistic']:.3f} on {c['df']:.1f} df, p = {c['welch_p_value']:.2e}",
        f"- permutation test ({c['permutations']} permutations, seed {c['seed']}): "
        f"p = {c['p_value']:.2e}",
        f"- effect size: Cohen's d = {c['cohens_d']:.2f}",
        "",
    ]


def regression_section(r: dict[str, Any]) -> list[str]:
    low, high = r["slope_ci95"]
    return [
        "## Regression",
        "",
        f"*{r['hypothesis']}* — **{verdict(r)}**.",
        "",
        f"- model: {r['model']} (n = {r['n']})",
        f"- slope {r['slope']:.4f} (95 % CI {low:.4f} to {high:.4f}), "
        f"intercept {r['intercept']:.4f}",
        f"- r² = {r['r2']:.4f}, residual standard error {r['residual_se']:.4f}",
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--comparison", default="deps/2/comparison.json")
    parser.add_argument("--regression", default="deps/3/regression.json")
    parser.add_argument("--title", default="Iris findings")
    args = parser.parse_args()

    comparison = load_finding(Path(args.comparison))
    regression = load_finding(Path(args.regression))
    findings = [comparison, regression]
    supported = sum(1 for f in findings if f["supported"])
    lines = [
        f"# {args.title}",
        "",
        f"{supported} of {len(findings)} hypotheses supported by the data.",
        "",
        *comparison_section(comparison),
        *regression_section(regression),
    ]
    Path("findings.md").write_text("\n".join(lines), encoding="utf-8")
    metrics = {"findings_total": len(findings), "findings_supported": supported}
    Path("metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    print(f"{supported} of {len(findings)} hypotheses supported; report in findings.md")


if __name__ == "__main__":
    main()

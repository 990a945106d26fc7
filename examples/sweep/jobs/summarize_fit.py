"""Summarise a fit against the line the data were drawn around, in Markdown.

Reads the fit's ``fit.json`` and the data's ``truth.json`` (dependency artifacts) and writes
``summary.md`` and ``metrics.json`` (``r2``, ``slope_error``, ``intercept_error``, ``rows``).
Standard library only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def read_object(path: Path, what: str) -> dict[str, Any]:
    """A JSON object from a dependency's artifact."""
    if not path.is_file():
        sys.exit(f"{path} not found in {Path.cwd()}: the summary needs the {what}")
    found = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(found, dict):
        sys.exit(f"{path} holds no JSON object")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fit", default="deps/fit/fit.json")
    parser.add_argument("--truth", default="deps/data/truth.json")
    args = parser.parse_args()

    fit = read_object(Path(args.fit), "fit task's fit.json")
    truth = read_object(Path(args.truth), "data task's truth.json")
    slope_error = abs(fit["w"] - truth["slope"])
    intercept_error = abs(fit["b"] - truth["intercept"])
    first, last = fit["loss_curve"][0], fit["loss_curve"][-1]
    lines = [
        f"# Gradient-descent fit, learning rate {fit['lr']}",
        "",
        f"- Fitted: y = {fit['w']:.4f} x + {fit['b']:.4f} after {fit['steps']} steps "
        f"over {fit['rows']} rows.",
        f"- Drawn around: y = {truth['slope']} x + {truth['intercept']} "
        f"(noise sd {truth['noise']}).",
        f"- r² = {fit['r2']:.4f}; slope off by {slope_error:.4f}, intercept by "
        f"{intercept_error:.4f}.",
        f"- Loss {first[1]:.4f} at step {first[0]}, {last[1]:.4f} at step {last[0]}.",
        "",
    ]
    Path("summary.md").write_text("\n".join(lines), encoding="utf-8")
    metrics = {"r2": fit["r2"], "slope_error": round(slope_error, 6),
               "intercept_error": round(intercept_error, 6), "rows": fit["rows"]}
    Path("metrics.json").write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    print(lines[2].removeprefix("- "))


if __name__ == "__main__":
    main()

"""Fit a polynomial of ``--degree`` to ``x, y`` rows by least squares; report how well it fits.

Standard library only: the normal equations solved by Gaussian elimination with partial
pivoting. Writes ``fit.json`` (the coefficients, lowest power first) and ``metrics.json``
(``r2``, ``rmse``, ``degree``, ``rows``).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
from pathlib import Path


def load(path: Path) -> tuple[list[float], list[float]]:
    """The ``x`` and ``y`` columns of the data."""
    if not path.is_file():
        sys.exit(f"{path} not found in {Path.cwd()}: the fit needs the data task's data.csv")
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return [float(r["x"]) for r in rows], [float(r["y"]) for r in rows]


def solve(matrix: list[list[float]], rhs: list[float]) -> list[float]:
    """``matrix @ x = rhs`` by Gaussian elimination with partial pivoting."""
    n = len(rhs)
    rows = [[*matrix[i], rhs[i]] for i in range(n)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(rows[r][col]))
        if abs(rows[pivot][col]) < 1e-12:
            sys.exit("the normal equations are singular: too few distinct x for this degree")
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(col + 1, n):
            factor = rows[r][col] / rows[col][col]
            rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col], strict=True)]
    out = [0.0] * n
    for i in reversed(range(n)):
        out[i] = (rows[i][n] - sum(rows[i][j] * out[j] for j in range(i + 1, n))) / rows[i][i]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default="deps/data/data.csv")
    parser.add_argument("--degree", type=int, default=1)
    args = parser.parse_args()
    if not 1 <= args.degree <= 6:
        sys.exit(f"--degree={args.degree}: give a degree from 1 to 6")
    xs, ys = load(Path(args.data))
    n = args.degree + 1
    gram = [[sum(x ** (i + j) for x in xs) for j in range(n)] for i in range(n)]
    moments = [sum(y * x ** i for x, y in zip(xs, ys, strict=True)) for i in range(n)]
    coef = solve(gram, moments)
    fitted = [sum(c * x ** i for i, c in enumerate(coef)) for x in xs]
    residual = sum((y - f) ** 2 for y, f in zip(ys, fitted, strict=True))
    total = sum((y - statistics.fmean(ys)) ** 2 for y in ys)
    r2 = 1 - residual / total
    rmse = math.sqrt(residual / len(ys))
    Path("fit.json").write_text(json.dumps({"degree": args.degree,
                                            "coefficients": [round(c, 6) for c in coef]},
                                           indent=2) + "\n", encoding="utf-8")
    metrics = {"r2": round(r2, 4), "rmse": round(rmse, 4), "degree": args.degree,
               "rows": len(ys)}
    Path("metrics.json").write_text(json.dumps(metrics) + "\n", encoding="utf-8")
    print(f"degree {args.degree}: r2 {r2:.4f}, rmse {rmse:.4f}")


if __name__ == "__main__":
    main()

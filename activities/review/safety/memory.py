"""Allocations too large for the job's memory limit, read from constant sizes.

``[0] * 10**10``, ``bytearray(10**11)``, ``' ' * 2**40`` or ``np.zeros((N, N))`` with a
constant ``N``: the size is a constant expression, so the bytes it asks for can be estimated
before the job runs and compared with the memory the job was given.
"""

from __future__ import annotations

import ast

from activities.reports.numbers import byte_size
from activities.review.safety.calls import Scan
from activities.review.safety.rules import ALLOCATORS


def _shape_elements(scan: Scan, node: ast.expr) -> int | None:
    if isinstance(node, ast.Tuple | ast.List):
        total = 1
        for element in node.elts:
            size = scan.flow.const_int(element)
            if size is None:
                return None
            total *= max(size, 0)
        return total
    return scan.flow.const_int(node)


def allocation_call(scan: Scan, call: ast.Call, name: str) -> int | None:
    """Bytes a call such as ``bytearray(10**11)`` or ``np.zeros((n, m))`` allocates."""
    if name in ALLOCATORS and call.args:
        elements = _shape_elements(scan, call.args[0])
        return None if elements is None else elements * ALLOCATORS[name]
    if name in ("list", "tuple") and call.args and isinstance(call.args[0], ast.Call):
        inner = call.args[0]
        if scan.flow.qualname(inner.func) == "range" and inner.args:
            stop = scan.flow.const_int(inner.args[-1] if len(inner.args) < 3 else inner.args[1])
            start = scan.flow.const_int(inner.args[0]) if len(inner.args) > 1 else 0
            return None if stop is None or start is None else max(stop - start, 0) * 8
    return None


def sequence_bytes(scan: Scan, node: ast.expr) -> int | None:
    """Bytes of ``[0] * n``, ``' ' * n`` or ``b'x' * n`` (and products of those)."""
    if isinstance(node, ast.List | ast.Tuple):
        return 8 * len(node.elts)  # one pointer per element; the elements are shared
    if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
        return len(node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        for seq, count in ((node.left, node.right), (node.right, node.left)):
            unit = sequence_bytes(scan, seq)
            times = scan.flow.const_int(count)
            if unit is not None and times is not None:
                return unit * max(times, 0)
    return None


def report_allocation(scan: Scan, node: ast.AST, size: int | None) -> None:
    """Warn about one allocation larger than the job's whole memory limit."""
    line = scan.line(node)
    if size is None or size <= scan.memory_bytes or line in scan.alloc_lines:
        return
    if line is not None:
        scan.alloc_lines.add(line)
    scan.warn("bounded_resources", "huge_allocation",
              f"allocates about {byte_size(size)} in one expression, more than the job's memory "
              f"limit of {scan.memory_bytes >> 20} MiB", node)


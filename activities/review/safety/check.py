"""The quality and safety reviewer: what would this job's code do if it ran?

A pure, static reading of the job's Python source with :mod:`ast`; nothing is executed.
Every finding names the line and why it matters: network use, starting programs, forking,
writing or deleting outside the working directory, reading secrets, running code read at run
time, native code, and resource requests without bound. It is a first filter, not the
boundary: code it cannot see (built at run time, fetched by a computed name) passes it, and the
sandbox enforces the limits whatever it said. It refuses a job that would hit them before it
spends a run doing so, and tells the author which line to change; every verdict says so.
"""

from __future__ import annotations

import ast

from activities.review.common import (
    MAX_SOURCE_BYTES,
    Findings,
    ParseFailure,
    parse_job,
    verdict,
)
from activities.review.safety.calls import (
    Scan,
    argument,
    capability_call,
    delete_call,
    env_call,
    env_key,
    leaves_loop,
    limits_call,
    literal_arguments,
    literal_text,
    reflected_call,
    write_call,
)
from activities.review.safety.flow import Flow
from activities.review.safety.memory import allocation_call, report_allocation, sequence_bytes
from activities.review.safety.rules import (
    DYNAMIC_CODE,
    DYNAMIC_IMPORT,
    ENVIRON,
    NATIVE_MODULES,
    NETWORK_MODULES,
    PROCESS_MODULES,
    module_hits,
)
from workflows.contracts.verdicts import ReviewInput, ReviewVerdict

SAFETY_CHECKS = ("source_parses", "no_network", "no_subprocess", "no_privilege_change",
                 "writes_inside_workspace", "deletes_inside_workspace", "no_secret_access",
                 "no_dynamic_code", "bounded_resources", "no_native_code")
SCOPE = ("Static review is a first filter: it reads the source for what it can name (network, "
         "programs, forks, native code, writes and deletions outside the working directory, "
         "secrets, dynamic code, unbounded resources) and can be evaded by code it cannot "
         "see; the sandbox is the boundary, and enforces the limits whatever the review said.")
"""What this review claims, said in every verdict it gives."""
MAX_NESTED_CODE = 2
"""How deep literal code passed to exec/eval is itself analysed."""

_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def review_quality_safety_source(req: ReviewInput) -> ReviewVerdict:
    """Review a job's source statically and return the structured verdict."""
    findings = Findings()
    findings.start(*SAFETY_CHECKS)
    source = req.job.source or ""
    details: dict[str, object] = {"source_bytes": len(source.encode()), "scope": SCOPE}
    tree = _parse(req, findings)
    if tree is not None:
        scan = Scan(flow=Flow(tree), findings=findings,
                    memory_bytes=req.job.resources.memory_mb << 20)
        try:
            SafetyVisitor(scan).visit(tree)
        except RecursionError:
            findings.fail("source_parses", "source_too_complex",
                          "the job source nests expressions too deeply to be reviewed; split "
                          "long expressions into steps")
        details["lines"] = source.count("\n") + 1
    given = verdict("quality_safety", findings, "the job's source", details=details)
    given.reasoning = f"{given.reasoning} {SCOPE}"
    return given


def _parse(req: ReviewInput, findings: Findings) -> ast.Module | None:
    source = req.job.source
    if not source or not source.strip():
        findings.fail("source_parses", "missing_source", "the job has no source code to review")
        return None
    size = len(source.encode())
    if size > MAX_SOURCE_BYTES:
        findings.fail("source_parses", "source_too_large",
                      f"the job source is {size:,} bytes, over the {MAX_SOURCE_BYTES:,}-byte "
                      "limit for review; keep data in input files, not in the code")
        return None
    parsed = parse_job(source, req.job.filename or "job.py")
    if isinstance(parsed, ParseFailure):
        findings.fail("source_parses", "syntax_error", parsed.message, parsed.line)
        return None
    return parsed


class SafetyVisitor(ast.NodeVisitor):
    """Walks a module in source order, keeping the dataflow current, applying every rule."""

    def __init__(self, scan: Scan, depth: int = 0) -> None:
        self.scan = scan
        self.flow = scan.flow
        self.depth = depth

    # --- imports -------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:  # noqa: D102 (visitor protocol)
        for alias in node.names:
            self._module(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:  # noqa: D102
        if node.level or not node.module:
            return  # relative imports name the job's own files
        for alias in node.names:
            self._module(node.module if alias.name == "*" else f"{node.module}.{alias.name}",
                         node)

    def _module(self, name: str, node: ast.AST) -> None:
        if hit := module_hits(name, NETWORK_MODULES):
            self.scan.fail("no_network", "network_import",
                           f"imports {hit}, a network module; jobs run without network, so "
                           "put the data in the task's inputs", node)
        if hit := module_hits(name, PROCESS_MODULES):
            self.scan.fail("no_subprocess", "subprocess_import",
                           f"imports {hit}, which starts other programs; jobs may run only "
                           "Python code", node)
        if hit := module_hits(name, NATIVE_MODULES):
            self.scan.fail("no_native_code", "native_code",
                           f"imports {hit}: native calls bypass everything this review "
                           "checks; use a packaged library instead", node)

    # --- scopes and bindings -------------------------------------------------------------

    def _function(self, node: _FunctionNode) -> None:
        self.flow.push()
        arguments = node.args
        for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                    *filter(None, (arguments.vararg, arguments.kwarg))]:
            self.flow.bind(ast.Name(id=arg.arg), None)  # parameters hide module names
        self.generic_visit(node)
        self.flow.pop()

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function
    visit_Lambda = _function

    def visit_Assign(self, node: ast.Assign) -> None:  # noqa: D102
        self.visit(node.value)
        for target in node.targets:
            self.visit(target)
            self.flow.bind(target, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:  # noqa: D102
        if node.value is not None:
            self.visit(node.value)
            self.flow.bind(node.target, node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:  # noqa: D102
        self.generic_visit(node)
        self.flow.bind(node.target, None)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:  # noqa: D102
        self.visit(node.value)
        self.flow.bind(node.target, node.value)

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:  # noqa: D102
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self.flow.bind(item.optional_vars, item.context_expr)
        for statement in node.body:
            self.visit(statement)

    visit_AsyncWith = visit_With

    # --- loops ---------------------------------------------------------------------------

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:  # noqa: D102
        self.visit(node.iter)
        self.flow.bind(node.target, None)
        self._loop_body(node.body)
        for statement in node.orelse:
            self.visit(statement)

    visit_AsyncFor = visit_For

    def visit_While(self, node: ast.While) -> None:  # noqa: D102
        self.visit(node.test)
        forever = isinstance(node.test, ast.Constant) and bool(node.test.value)
        if forever and not any(leaves_loop(self.flow, s) for s in node.body):
            self.scan.warn("bounded_resources", "infinite_loop",
                           "`while True` loop with no break, return or raise never ends by "
                           "itself; the job would run until its timeout", node)
        self._loop_body(node.body)
        for statement in node.orelse:
            self.visit(statement)

    def _loop_body(self, body: list[ast.stmt]) -> None:
        self.scan.loops += 1
        for statement in body:
            self.visit(statement)
        self.scan.loops -= 1

    # --- calls and expressions -----------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> None:  # noqa: D102
        name = self.flow.qualname(node.func) or ""
        method = node.func.attr if isinstance(node.func, ast.Attribute) else None
        capability_call(self.scan, node, name)
        if name == "getattr":
            reflected_call(self.scan, node)
        write_call(self.scan, node, name, method)
        delete_call(self.scan, node, name, method)
        env_call(self.scan, node, name, method)
        limits_call(self.scan, node, name)
        literal_arguments(self.scan, node, name, method)
        report_allocation(self.scan, node, allocation_call(self.scan, node, name))
        self._dynamic(node, name)
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:  # noqa: D102
        if isinstance(node.op, ast.Mult):
            report_allocation(self.scan, node, sequence_bytes(self.scan, node))
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:  # noqa: D102
        if self.flow.qualname(node.value) in ENVIRON:
            self.scan.env_ok.add(id(node.value))
            if isinstance(node.ctx, ast.Load):
                env_key(self.scan, node.slice, node)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:  # noqa: D102
        if all(isinstance(op, ast.In | ast.NotIn) for op in node.ops):
            for side in node.comparators:
                if self.flow.qualname(side) in ENVIRON:
                    self.scan.env_ok.add(id(side))  # "X" in os.environ reveals no value
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:  # noqa: D102
        self._environ_dump(node)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:  # noqa: D102
        self._environ_dump(node)

    def _environ_dump(self, node: ast.Attribute | ast.Name) -> None:
        if (isinstance(node.ctx, ast.Load) and id(node) not in self.scan.env_ok
                and self.flow.qualname(node) in ENVIRON):
            self.scan.fail("no_secret_access", "environment_dump",
                           "reads the whole environment (os.environ), which may hold secrets; "
                           "read only the variables the job needs", node)

    def _dynamic(self, node: ast.Call, name: str) -> None:
        """exec/eval/compile and imports by computed name."""
        if name not in DYNAMIC_CODE and name not in DYNAMIC_IMPORT:
            return
        payload = argument(node, 0, "source", "name", "path_name", "mod_name")
        if payload is None:
            return
        text = literal_text(payload)
        if name in DYNAMIC_IMPORT and text is not None:
            self._module(text, node)
        elif text is not None:
            self._nested(text, node)
        elif (source := self.flow.taint(payload)) is not None:
            self.scan.fail("no_dynamic_code", "untrusted_code",
                           f"{name}() runs code read from {source}; code must be in the job's "
                           "source, where it is reviewed", node)
        elif name in DYNAMIC_IMPORT:
            self.scan.warn("no_dynamic_code", "dynamic_import",
                           f"{name}() imports a module named at run time "
                           f"({ast.unparse(payload)[:60]}), which this review cannot see", node)
        else:
            self.scan.warn("no_dynamic_code", "dynamic_code",
                           f"{name}() runs code built at run time "
                           f"({ast.unparse(payload)[:60]}), which this review cannot see", node)

    def _nested(self, code: str, call: ast.Call) -> None:
        """Literal code given to exec/eval is reviewed like the rest, at the call's line."""
        if self.depth >= MAX_NESTED_CODE:
            return
        parsed = parse_job(code, "<exec>")
        if isinstance(parsed, ParseFailure):
            return  # it fails when it runs, harmlessly
        flow = Flow(parsed)
        flow.aliases = {**self.flow.aliases, **flow.aliases}
        scan = Scan(flow=flow, findings=self.scan.findings, memory_bytes=self.scan.memory_bytes,
                    line_override=self.scan.line(call))
        SafetyVisitor(scan, self.depth + 1).visit(parsed)

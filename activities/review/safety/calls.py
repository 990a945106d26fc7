"""The safety rules that look at one call: network, processes, files, secrets and memory.

Each rule is a function of the scan state and the call; :mod:`activities.review.safety.check` walks
the source and applies them. A rule records at most what it can name: the call, the line and
the literal that decided it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from activities.review.common import Findings
from activities.review.safety.flow import Flow
from activities.review.safety.rules import (
    ARGUMENT_WRITES,
    DELETE_CALLS,
    ENV_HARMLESS_METHODS,
    ENV_READS,
    ENVIRON,
    EXIT_CALLS,
    FORK_CALLS,
    LIMIT_CALLS,
    NETWORK_CALLS,
    NETWORK_MODULES,
    OPEN_CALLS,
    PRIVILEGE_CALLS,
    PROCESS_CALLS,
    PROCESS_PREFIXES,
    RECEIVER_DELETES,
    RECEIVER_WRITES,
    REFLECTED_MODULES,
    SECRET_FILE,
    SECRET_KEY,
    URL,
    URL_HARMLESS_CALLS,
    WRITE_CALLS,
    module_hits,
)

_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC")
_MODE = re.compile(r"^[rwxabt+]{1,4}$")


@dataclass
class Scan:
    """State of one walk over a source: where we are and what has been found."""

    flow: Flow
    findings: Findings
    memory_bytes: int
    line_override: int | None = None
    """Set when scanning code passed to exec/eval as a literal: findings land on that call."""
    loops: int = 0
    env_ok: set[int] = field(default_factory=set[int])
    """``os.environ`` nodes already judged as part of a single-variable read."""
    alloc_lines: set[int] = field(default_factory=set[int])

    def line(self, node: ast.AST) -> int | None:
        """The line a finding about ``node`` is reported on."""
        return self.line_override or getattr(node, "lineno", None)

    def fail(self, check: str, code: str, message: str, node: ast.AST) -> None:
        """A critical finding at ``node``."""
        self.findings.fail(check, code, message, self.line(node))

    def warn(self, check: str, code: str, message: str, node: ast.AST) -> None:
        """A warning at ``node``."""
        self.findings.warn(check, code, message, self.line(node))


def argument(call: ast.Call, index: int, *names: str) -> ast.expr | None:
    """Positional argument ``index`` of a call, or the keyword of one of ``names``."""
    if len(call.args) > index and not isinstance(call.args[index], ast.Starred):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg in names), None)


def literal_text(node: ast.expr | None) -> str | None:
    """The value of a string literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def capability_call(scan: Scan, call: ast.Call, name: str) -> None:
    """Starting programs, forking, changing privileges and reaching the network."""
    if name in FORK_CALLS:
        if scan.loops:
            scan.fail("no_subprocess", "fork_bomb",
                      f"calls {name}() inside a loop, which multiplies processes without "
                      "bound (a fork bomb)", call)
        else:
            scan.fail("no_subprocess", "process_fork",
                      f"calls {name}(); jobs may not fork, do the work in one process", call)
    elif name in PROCESS_CALLS or name.startswith(PROCESS_PREFIXES):
        scan.fail("no_subprocess", "subprocess_call",
                  f"calls {name}(), which runs another program; jobs may run only Python "
                  "code, so do this work in Python", call)
    elif name in PRIVILEGE_CALLS:
        scan.fail("no_privilege_change", "privilege_change",
                  f"calls {name}(), which changes the process's identity or root; remove it",
                  call)
    elif module_hits(name, NETWORK_MODULES) or name in NETWORK_CALLS:
        scan.fail("no_network", "network_call",
                  f"calls {name}(): jobs run without network; put the data in the task's "
                  "inputs instead", call)


def reflected_call(scan: Scan, call: ast.Call) -> None:
    """``getattr(os, "fork")``: an attribute of a process or network module fetched by name.

    A literal name is judged as the direct use would be (``os.fork``); a name computed at run
    time is a warning, since this review cannot see what it fetches.
    """
    target = argument(call, 0, "")
    base = scan.flow.qualname(target) if target is not None else None
    if base is None or module_hits(base, REFLECTED_MODULES) is None:
        return
    named = argument(call, 1, "")
    attribute = literal_text(named)
    if attribute is not None:
        capability_call(scan, call, f"{base}.{attribute}")
    elif named is not None:
        scan.warn("no_dynamic_code", "dynamic_attribute",
                  f"getattr() fetches an attribute of {base} named at run time "
                  f"({ast.unparse(named)[:60]}), which this review cannot see", call)


def _write_target(call: ast.Call, name: str, method: str | None) -> ast.expr | None:
    """The path a call writes to, if it is a write we recognise."""
    if name in OPEN_CALLS or (method == "open" and name != "os.open"):
        mode = literal_text(argument(call, 1 if name in OPEN_CALLS else 0, "mode"))
        if mode is None or not _MODE.match(mode) or not any(c in mode for c in "wax+"):
            return None  # reading, a mode computed at run time, or not a file mode at all
        if name in OPEN_CALLS:
            return argument(call, 0, "file")
        return call.func.value if isinstance(call.func, ast.Attribute) else None
    if name == "os.open":
        flags = argument(call, 1, "flags")
        text = ast.unparse(flags) if flags is not None else ""
        return argument(call, 0, "path") if any(f in text for f in _WRITE_FLAGS) else None
    if name in WRITE_CALLS:
        return argument(call, WRITE_CALLS[name], "dst", "path", "file", "name", "f")
    if method in RECEIVER_WRITES and isinstance(call.func, ast.Attribute):
        return call.func.value
    if method in ARGUMENT_WRITES:
        return argument(call, 0, "path_or_buf", "path", "fname")
    if method in ("rename", "replace") and len(call.args) == 1 and not call.keywords:
        return call.args[0]  # Path.rename(target); str.replace needs two arguments
    return None


def write_call(scan: Scan, call: ast.Call, name: str, method: str | None) -> None:
    """Writes to literal paths outside the working directory."""
    target = _write_target(call, name, method)
    if target is None:
        return
    kind, text = scan.flow.path_kind(target)
    if kind == "outside":
        scan.fail("writes_inside_workspace", "write_outside",
                  f"writes to {text!r}, outside the working directory; write to a relative "
                  "path inside it instead", call)
    elif kind == "tmp":
        scan.warn("writes_inside_workspace", "write_tmp",
                  f"writes to {text!r}; use the tempfile module (its TMPDIR is inside the "
                  "working directory) or a relative path", call)


def delete_call(scan: Scan, call: ast.Call, name: str, method: str | None) -> None:
    """Deletions outside the working directory, or of paths only known at run time."""
    if name in DELETE_CALLS:
        target = argument(call, 0, "path")
    elif method in RECEIVER_DELETES and isinstance(call.func, ast.Attribute) and not call.args:
        target = call.func.value
    else:
        return
    if target is None:
        return
    kind, text = scan.flow.path_kind(target)
    shown = name or f".{method}()"
    if kind == "outside":
        scan.fail("deletes_inside_workspace", "delete_outside",
                  f"{shown} deletes {text!r}, outside the working directory", call)
    elif kind in ("unknown", "tmp"):
        scan.warn("deletes_inside_workspace", "delete_unknown_path",
                  f"{shown} deletes {ast.unparse(target)[:80]}, a path not fixed in the "
                  "source; make sure it stays inside the working directory", call)


def env_key(scan: Scan, key: ast.expr | None, node: ast.AST) -> None:
    """One environment variable read: secrets are refused, computed names are noted."""
    if key is None:
        return
    text = literal_text(key)
    if text is None:
        scan.warn("no_secret_access", "env_dynamic_key",
                  f"reads the environment variable named by {ast.unparse(key)[:60]}, "
                  "computed at run time; read only fixed, non-secret names", node)
    elif SECRET_KEY.search(text):
        scan.fail("no_secret_access", "secret_env",
                  f"reads the environment variable {text!r}, which looks like a secret; jobs "
                  "get no secrets, pass what the job needs as args or inputs", node)


def env_call(scan: Scan, call: ast.Call, name: str, method: str | None) -> None:
    """``os.getenv`` / ``os.environ.get`` and friends."""
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    on_environ = receiver is not None and scan.flow.qualname(receiver) in ENVIRON
    if receiver is not None and on_environ and method in ENV_HARMLESS_METHODS:
        scan.env_ok.add(id(receiver))
    if name in ENV_READS or (on_environ and method in ("get", "pop", "setdefault")):
        env_key(scan, argument(call, 0, "key"), call)


def limits_call(scan: Scan, call: ast.Call, name: str) -> None:
    """``resource.setrlimit``: raising limits escapes the sandbox's budget."""
    if name not in LIMIT_CALLS:
        return
    text = " ".join(ast.unparse(a) for a in call.args)
    if "RLIM_INFINITY" in text or "getrlimit" in text:
        scan.fail("bounded_resources", "raises_limits",
                  f"{name}() raises a resource limit; the sandbox sets the job's limits, "
                  "ask for more in resources instead", call)
    else:
        scan.warn("bounded_resources", "changes_limits",
                  f"{name}() changes the job's resource limits; the sandbox already sets "
                  "them", call)


def literal_arguments(scan: Scan, call: ast.Call, name: str, method: str | None) -> None:
    """Credential file paths (refused) and URLs (noted) passed to a call."""
    callee = method or name.rsplit(".", 1)[-1]
    values = [*call.args, *(k.value for k in call.keywords)]
    for value in values:
        for node in ast.walk(value):
            text = literal_text(node) if isinstance(node, ast.expr) else None
            if text is not None and SECRET_FILE.search(text):
                scan.fail("no_secret_access", "secret_file",
                          f"uses the path {text[:80]!r}, which holds credentials; jobs must "
                          "not read secrets", call)
        text = literal_text(value)
        if text is not None and URL.match(text) and callee not in URL_HARMLESS_CALLS:
            scan.warn("no_network", "url_argument",
                      f"passes the URL {text[:80]!r} to {callee or 'a call'}; jobs run "
                      "without network, so add the data to the task's inputs", call)


def leaves_loop(flow: Flow, node: ast.AST, *, inner_loop: bool = False) -> bool:
    """Whether ``node`` can leave the loop around it (break, return, raise, exit, yield)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
        return False
    if isinstance(node, ast.Break):
        return not inner_loop
    if isinstance(node, ast.Return | ast.Raise | ast.Yield | ast.YieldFrom):
        return True
    if isinstance(node, ast.Call) and flow.qualname(node.func) in EXIT_CALLS:
        return True
    nested = inner_loop or isinstance(node, ast.For | ast.AsyncFor | ast.While)
    return any(leaves_loop(flow, c, inner_loop=nested) for c in ast.iter_child_nodes(node))

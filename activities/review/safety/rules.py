"""The tables behind the quality and safety review, and how a literal path is judged.

Which names mean network, processes, writes, deletions, secrets or dynamic code, kept apart
from the analysis so the rules can be read (and extended) in one place. Names are fully
qualified after import aliases are resolved (``import numpy as np`` makes ``np.zeros`` read
as ``numpy.zeros``).
"""

from __future__ import annotations

import re
from typing import Literal

NETWORK_MODULES = frozenset({
    "socket", "socketserver", "urllib.request", "urllib2", "urllib3", "http.client",
    "http.server", "http.cookiejar", "requests", "httpx", "aiohttp", "ftplib", "smtplib",
    "poplib", "imaplib", "nntplib", "telnetlib", "websocket", "websockets", "xmlrpc.client",
    "xmlrpc.server", "paramiko", "pycurl", "grpc", "asyncssh", "zmq", "tornado", "twisted",
    "mechanize", "webbrowser", "_socket", "_ssl",
})
NETWORK_CALLS = frozenset({"asyncio.open_connection", "asyncio.start_server",
                           "asyncio.open_unix_connection", "asyncio.start_unix_server"})

PROCESS_MODULES = frozenset({"subprocess", "pty", "pexpect", "sh", "plumbum",
                             "asyncio.subprocess", "_posixsubprocess"})
PROCESS_CALLS = frozenset({"os.system", "os.popen", "os.posix_spawn", "os.posix_spawnp",
                           "os.startfile", "pty.spawn", "pty.fork", "platform.popen",
                           "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell"})
PROCESS_PREFIXES = ("os.exec", "os.spawn", "posix.exec", "posix.spawn", "posix.system",
                    "posix.posix_spawn", "subprocess.", "_posixsubprocess.")
FORK_CALLS = frozenset({"os.fork", "os.forkpty", "posix.fork", "posix.forkpty"})
PRIVILEGE_CALLS = frozenset({"os.setuid", "os.setgid", "os.seteuid", "os.setegid",
                             "os.setreuid", "os.setregid", "os.setresuid", "os.setresgid",
                             "os.setgroups", "os.chroot", "os.unshare", "os.setns"})
NATIVE_MODULES = frozenset({"ctypes", "_ctypes", "cffi", "_cffi_backend"})
REFLECTED_MODULES = frozenset({"os", "posix", "socket", "_socket", "subprocess",
                               "_posixsubprocess", "pty"})
"""Modules whose attributes, fetched with ``getattr`` by name, are judged like a direct use."""
LIMIT_CALLS = frozenset({"resource.setrlimit", "resource.prlimit"})

OPEN_CALLS = frozenset({"open", "io.open", "codecs.open", "builtins.open"})
WRITE_CALLS: dict[str, int] = {
    "shutil.copy": 1, "shutil.copy2": 1, "shutil.copyfile": 1, "shutil.copytree": 1,
    "shutil.move": 1, "os.rename": 1, "os.replace": 1, "os.renames": 1, "os.link": 1,
    "os.symlink": 1, "os.makedirs": 0, "os.mkdir": 0, "os.mkfifo": 0, "os.chmod": 0,
    "os.chown": 0, "os.truncate": 0, "os.utime": 0, "numpy.save": 0, "numpy.savetxt": 0,
    "numpy.savez": 0, "numpy.savez_compressed": 0, "torch.save": 1, "joblib.dump": 1,
}
"""Functions that write, with the position of the path they write to."""
RECEIVER_WRITES = frozenset({"write_text", "write_bytes", "touch", "mkdir", "symlink_to",
                             "hardlink_to", "chmod"})
"""Path methods that write to the path they are called on."""
ARGUMENT_WRITES = frozenset({"to_csv", "to_json", "to_parquet", "to_excel", "to_pickle",
                             "to_feather", "to_hdf", "to_html", "to_markdown", "to_latex",
                             "savefig", "write_image", "write_html"})
"""Methods (pandas, matplotlib, plotly) whose first argument is the file they write."""
DELETE_CALLS = frozenset({"os.remove", "os.unlink", "os.rmdir", "os.removedirs",
                          "shutil.rmtree"})
RECEIVER_DELETES = frozenset({"unlink", "rmdir"})

ENVIRON = frozenset({"os.environ", "os.environb"})
ENV_READS = frozenset({"os.getenv", "os.getenvb", "os.environ.get", "os.environ.pop",
                       "os.environ.setdefault", "os.environb.get"})
ENV_HARMLESS_METHODS = frozenset({"get", "pop", "setdefault", "update", "__contains__"})
SECRET_KEY = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH", re.IGNORECASE)
SECRET_FILE = re.compile(
    r"(^|/)\.ssh(/|$)|\.aws/credentials|(^|/)\.netrc$|\.pgpass|/etc/shadow|/etc/gshadow"
    r"|\.git-credentials|\.docker/config\.json|\.kube/config|(^|/)id_(rsa|dsa|ecdsa|ed25519)"
    r"|(^|/)\.gnupg(/|$)|/proc/(self|\d+)/environ|/run/secrets|/var/run/secrets")
URL = re.compile(r"^(https?|ftp|wss?)://", re.IGNORECASE)
URL_HARMLESS_CALLS = frozenset({"print", "add_argument", "format", "startswith", "endswith",
                                "replace", "join", "split", "write", "append", "debug",
                                "info", "warning", "error", "exception", "critical"})

DYNAMIC_CODE = frozenset({"exec", "eval", "compile", "builtins.exec", "builtins.eval",
                          "runpy.run_path"})
DYNAMIC_IMPORT = frozenset({"__import__", "importlib.import_module", "runpy.run_module"})
READ_METHODS = frozenset({"read", "read_text", "read_bytes", "readline", "readlines", "recv",
                          "recvfrom", "recv_into", "getvalue", "json"})
"""Methods whose result is content from a file, a socket or a response."""
STDIN_CALLS = frozenset({"input"})

EXIT_CALLS = frozenset({"sys.exit", "exit", "quit", "os._exit", "os.abort"})

PATH_CONSTRUCTORS = frozenset({"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath",
                               "pathlib.PurePosixPath", "Path", "PurePath", "os.path.join",
                               "os.path.abspath", "os.path.normpath", "os.path.realpath",
                               "os.fspath", "str", "os.path.expanduser"})
TEMP_CALLS = frozenset({"tempfile.mkdtemp", "tempfile.mkstemp", "tempfile.gettempdir",
                        "tempfile.NamedTemporaryFile", "tempfile.TemporaryDirectory"})

ALLOCATORS: dict[str, int] = {
    "bytearray": 1, "bytes": 1, "numpy.zeros": 8, "numpy.ones": 8, "numpy.empty": 8,
    "numpy.full": 8, "numpy.random.rand": 8, "numpy.random.randn": 8, "torch.zeros": 4,
    "torch.ones": 4, "torch.empty": 4, "torch.rand": 4, "torch.randn": 4,
}
"""Calls whose first argument is a size or shape, with the bytes each element takes."""

PathKind = Literal["inside", "outside", "tmp", "device", "unknown"]
_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


def module_hits(name: str, table: frozenset[str]) -> str | None:
    """The entry of ``table`` that ``name`` or one of its parent packages is, if any."""
    parts = name.split(".")
    for end in range(1, len(parts) + 1):
        candidate = ".".join(parts[:end])
        if candidate in table:
            return candidate
    return None


def classify_text(path: str) -> PathKind:
    """Where a literal path points relative to the job's working directory."""
    if path in _DEVICES:
        return "device"
    if re.match(r"^(/tmp|/var/tmp|/dev/shm)(/|$)", path):
        return "tmp"
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", path):
        return "outside"
    if ".." in re.split(r"[\\/]", path):
        return "outside"
    return "inside"

"""Turning ``--record FILE`` and ``--replay FILE`` into what a run may name: no host path.

Any Temporal client can start a run, so the agents worker opens no path a run names. On the
submitting machine a replay's file is checked and put in the artifact store, and the run names
its sha256; a record destination becomes a *name*, written by the agents worker inside its own
data directory (``<data dir>/recordings/recorded/<name>.jsonl``). The user still finds the
recording where they asked: ``FILE`` is made a link to that file, so it grows as the run
records (an existing recording at ``FILE`` is carried over, and the run appends after it).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

from temporalio.exceptions import ApplicationError

from activities.artifacts.store import StoreError
from workers.settings import Settings
from workflows.contracts.policy import ModelRecording


class PolicyError(ValueError):
    """A policy file or flag is wrong; the message says what and where."""


def recordings_folder(settings: Settings) -> Path:
    """The agents workers' recordings folder in the stack's data directory (absolute)."""
    return settings.data_dir.expanduser().absolute() / "recordings"


def recording_for_run(settings: Settings, recording: ModelRecording | None,
                      ) -> ModelRecording | None:
    """The recording a run names: a replay by digest, a record by name; never a path.

    A recording given by ``path`` (``--record``/``--replay``, or a policy file) is checked
    here; one given by name or digest is the caller's own and passes as it is.

    Raises:
        PolicyError: the file is unusable, or a recording lacks its name or digest.
    """
    if recording is None:
        return None
    if recording.path is None:
        if recording.mode == "record" and recording.name is None:
            raise PolicyError("agents.recording: a record names its recording (\"name\"), "
                              "or give --record FILE")
        if recording.mode == "replay" and recording.sha256 is None:
            raise PolicyError("agents.recording: a replay names its recording's \"sha256\" "
                              "in the artifact store, or give --replay FILE")
        return recording
    path = Path(recording.path).expanduser().absolute()
    if recording.mode == "replay":
        _check_replay(path)
        return ModelRecording(mode="replay", sha256=_stored(settings, path))
    from activities.llm.recording import recorded_path  # the gateway's package: load it late

    _check_record(path)
    name = recording_name(path)
    _link(path, recorded_path(recordings_folder(settings), name))
    return ModelRecording(mode="record", name=name)


def recording_name(path: Path) -> str:
    """The name a ``--record`` file's recording takes: the same file, the same name.

    So recording twice to one file appends to one recording, as a file would.
    """
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:16]
    stem = re.sub(r"\.{2,}", ".", re.sub(r"[^A-Za-z0-9._-]", "-", path.stem))[:60]
    return f"{digest}-{stem}".rstrip(".-")


def _link(path: Path, target: Path) -> None:
    """Make ``path`` a link to the worker's recording ``target`` (carrying a file over)."""
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.is_symlink():
        if os.path.realpath(path) != os.path.realpath(target):
            raise PolicyError(f"--record {path}: is a link to {os.readlink(path)}, not to "
                              f"this stack's recording {target}; remove it or name another "
                              "file")
        return
    try:
        if path.exists():  # a recording made before: the run appends after its exchanges
            if target.exists() and target.stat().st_size:
                raise PolicyError(f"--record {path}: exists, and so does this stack's "
                                  f"recording for it ({target}); move one of them away")
            shutil.copyfile(path, target)
            os.chmod(target, 0o600)
            temporary = path.with_name(f".{path.name}.{os.getpid()}.link")
            os.symlink(target, temporary)
            os.replace(temporary, path)
        else:
            os.symlink(target, path)
    except OSError as err:
        raise PolicyError(f"--record {path}: cannot link it to the recording {target} "
                          f"({err.strerror})") from err


def _stored(settings: Settings, path: Path) -> str:
    """Put a replay's recording in the artifact store, so agents on any host can read it."""
    try:
        return settings.artifact_store().put(path).sha256
    except (StoreError, OSError) as err:
        raise PolicyError(f"--replay {path}: could not be put in the artifact store: "
                          f"{err}") from err


def _check_replay(path: Path) -> None:
    from activities.llm.recording import parse_recording

    if not path.is_file():
        what = "is a directory" if path.is_dir() else "does not exist"
        raise PolicyError(f"--replay {path}: {what}; give a recording made with --record")
    try:
        exchanges = parse_recording(path)
    except ApplicationError as err:
        raise PolicyError(f"--replay: {err.message}") from err
    except UnicodeDecodeError as err:
        raise PolicyError(f"--replay {path}: not a recording (not UTF-8 text at byte "
                          f"{err.start})") from err
    except OSError as err:
        raise PolicyError(f"--replay {path}: cannot read it ({err.strerror})") from err
    except (RecursionError, MemoryError) as err:  # a hostile line: nested or huge
        raise PolicyError(f"--replay {path}: not a recording: a line is too deeply nested "
                          f"or too large to parse ({type(err).__name__}); give a recording "
                          "made with --record") from None
    if not exchanges:
        raise PolicyError(f"--replay {path}: the recording holds no exchanges; record a run "
                          "with --record first")


def _check_record(path: Path) -> None:
    if path.is_dir():
        raise PolicyError(f"--record {path}: is a directory; name a file to record into")
    folder = path.parent
    if not folder.is_dir():
        raise PolicyError(f"--record {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists()
                                                    and not os.access(path, os.W_OK)):
        raise PolicyError(f"--record {path}: cannot write there (permission denied)")

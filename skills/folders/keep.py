"""Every file of an imported folder, kept by digest in the artifact store and given back whole.

Import lists each file of a folder (scripts, references, assets, fonts, licences, anything)
with its sha256 and size in the pattern (``KeptFile``) and puts its bytes in the artifact
store, so what Assay does not understand still travels with the skill. Export fetches them
back byte for byte. The folder's bounds (``limits``: files, bytes per file, bytes in all)
were checked by ``scan`` before anything is read here. Files are opened without following
links, and a file that changes between its hash and its copy is refused.
"""

from __future__ import annotations

from activities.artifacts.store import ArtifactStore, StoreError
from activities.common.digests import hash_file
from skills.folders.errors import Problem
from skills.folders.flags import flag_text
from skills.folders.limits import DOCUMENTS, MAX_FILE, MAX_REFERENCE, SCRIPTS, SKILL_FILE
from skills.folders.scan import Source, read_text
from workflows.contracts.patterns import MAX_FLAGS, KeptFile


def keep_files(src: Source, store: ArtifactStore | None, skip: frozenset[str]
               ) -> list[KeptFile]:
    """Each file of ``src`` but those in ``skip``, hashed and (with a store) stored.

    Args:
        src: a folder that passed ``scan``.
        store: where the bytes go; ``None`` lists the files without keeping their bytes.
        skip: relative paths not kept (what import regenerates on export).

    Raises:
        Problem: a file cannot be read, or changed while it was imported.
    """
    kept: list[KeptFile] = []
    for relative in sorted(set(src.files) - skip):
        path = src.folder / relative
        try:
            size, digest = hash_file(path)
            if store is not None and store.put(path).sha256 != digest:
                raise Problem(f"{path}: changed while it was imported; import it again")
        except (OSError, StoreError) as err:
            raise Problem(f"{path}: cannot be kept ({getattr(err, 'strerror', None) or err})"
                          ) from err
        kept.append(KeptFile(path=relative, sha256=digest, size=size))
    return kept


def stored_bytes(files: list[KeptFile], store: ArtifactStore | None, skill: str
                 ) -> dict[str, bytes]:
    """The content of each kept file, fetched from ``store`` and checked against its digest.

    Raises:
        Problem: there is no store, or a file is not in it (naming every such file).
    """
    if files and store is None:
        raise Problem(f"{skill} keeps {len(files)} file(s) in the artifact store; export it "
                      "with the store (assay skills export does)")
    contents: dict[str, bytes] = {}
    missing: list[str] = []
    for kept in files:
        try:
            with store.open(kept.sha256) as handle:  # pyright: ignore[reportOptionalMemberAccess]
                contents[kept.path] = handle.read(MAX_FILE + 1)
        except (OSError, StoreError):
            missing.append(kept.path)
    if missing:
        raise Problem(f"{skill}: the artifact store lacks {', '.join(missing[:5])}"
                      + (" …" if len(missing) > 5 else "") + "; import the folder again")
    return contents


def source_flags(src: Source, body_line: int) -> list[str]:
    """Lines of ``SKILL.md``'s body and the folder's documents that try to instruct a model.

    Args:
        src: a folder that passed ``scan``.
        body_line: the line of ``SKILL.md`` its body starts on.
    """
    flags = flag_text(SKILL_FILE, src.body, first_line=body_line)
    for relative in sorted(src.files):
        if (len(flags) >= MAX_FLAGS or relative.startswith(f"{SCRIPTS}/")
                or relative == SKILL_FILE or not relative.lower().endswith(DOCUMENTS)
                or src.files[relative] > MAX_REFERENCE):
            continue
        try:
            text = read_text(src.folder / relative, MAX_REFERENCE)
        except Problem:
            continue
        flags += flag_text(relative, text, MAX_FLAGS - len(flags))
    return flags

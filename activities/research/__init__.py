"""The offline researcher: documentation the coder and debuggers may look up.

``tool.DocsResearcher`` answers the ``lookup_docs`` tool the model gateway offers them
(``activities.llm.helpers``): signatures, docstrings and source of installed packages, read
from their files without importing them (``symbols``), and text files of the operator's
documentation folder (``docs``), bounded, stripped of credentials and marked as data. No
network is ever used.
"""

from activities.research.tool import LOOKUP_TOOL, DocsResearcher

__all__ = [
    "LOOKUP_TOOL",
    "DocsResearcher",
]

"""The generated CLI and settings references list every command, option and setting."""

from __future__ import annotations

import importlib.util
import re
from types import ModuleType

from tests.docs.blocks import DOCS


def hooks() -> ModuleType:
    """``docs/hooks.py``, the module MkDocs loads to generate the reference pages."""
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sections(page: str) -> dict[str, str]:
    """A generated page's sections by heading text (backticks removed)."""
    parts = re.split(r"^## (.+)$", page, flags=re.MULTILINE)
    return {parts[i].strip("`"): parts[i + 1] for i in range(1, len(parts), 2)}


def test_the_cli_reference_has_every_command_and_option() -> None:
    from workers.cli.lazy import LAZY
    from workers.cli.main import app

    module = hooks()
    page = sections(module.cli_reference())
    own = {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}
    assert {f"assay {name}" for name in (*own, *LAZY)} <= set(page)
    for name, command in module.cli_commands():
        assert name in page, name
        for param in command.params:
            if param.name in module.SHELL_OPTIONS:
                continue
            shown = param.opts if param.param_type_name == "option" else [
                param.metavar or param.name.upper()]
            assert all(f"`{opt}`" in page[name] for opt in shown), (name, param.name)
            if getattr(param, "help", None):
                assert module.text(param.help) in page[name], (name, param.name)
    assert {"assay study start", "assay memory rules", "assay skills import",
            "assay envs prune"} <= set(page)


def test_the_settings_reference_has_every_setting_with_its_docstring() -> None:
    from workers.settings import Settings

    module = hooks()
    page = sections(module.settings_reference())
    docs = module.field_docstrings(Settings)
    undocumented = sorted(set(Settings.model_fields) - set(docs))
    assert undocumented == [], "settings with no docstring"
    for name, field in Settings.model_fields.items():
        variable = module.setting_variables(name, field)[0]
        assert variable in page, variable
        assert module.text(docs[name]) in page[variable], variable
    assert "ANTHROPIC_API_KEY" in page["ASSAY_ANTHROPIC_API_KEY"]

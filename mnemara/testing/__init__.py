"""Test kit for agents built on Mnemara: a scripted Messages API (``ScriptedAPI``) on 127.0.0.1,
and a loopback stand-in for Ollama (``mnemara.testing.ollama``).

    from mnemara.testing import ScriptedAPI, reply, tool_use

``python -m mnemara.testing`` serves scripted replies for a ``mnemara run`` in another shell.
"""
from __future__ import annotations

from mnemara.testing.scripted_api import *  # noqa: F403  (the public names of the scripted API, by its __all__)
from mnemara.testing.scripted_api import __all__ as __all__

"""A clinician's approval carried with an MCP write call: the app signs what its clinician approved, the tool server
checks the signature before it writes.

Over MCP the server cannot see the approval card, so the approved action travels in the call's ``_meta``
(:data:`META_KEY`): the card's identity (``scope``, the pending action's id), the override reason, the approver and
the conversation, signed with HMAC-SHA256 over the tool's name and its exact arguments (canonical JSON) under a key
the app and the server share (``DOCGEMMA_MCP_APPROVAL_KEY``; the app makes a fresh one for the stdio server it
starts). A call without a valid signature, or whose arguments differ from the signed ones, carries no approval.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any

from docgemma.ehr.service import canonical_args
from docgemma.tools.spec import ToolContext

#: Where the approval travels in an MCP request's ``_meta``.
META_KEY = "docgemma/approval"
#: Shortest approval key accepted (bytes of text): a guessable key would let anyone sign an approval.
MIN_KEY_CHARS = 32
_FIELDS = ("scope", "override_reason", "approved_by", "conversation")


def _signature(key: str, tool: str, args: dict[str, Any], fields: Mapping[str, str]) -> str:
    message = json.dumps({"tool": tool, "args": canonical_args(args), **{f: fields.get(f, "") for f in _FIELDS}},
                         sort_keys=True)
    return hmac.new(key.encode(), message.encode(), hashlib.sha256).hexdigest()


def signed_approval(key: str, tool: str, args: dict[str, Any], context: ToolContext) -> dict[str, str]:
    """The ``_meta`` entry for an approved write of ``tool`` with ``args`` (``context.scope`` names the card)."""
    fields = {"scope": context.scope, "override_reason": context.override_reason,
              "approved_by": context.approved_by, "conversation": context.conversation}
    return {**fields, "signature": _signature(key, tool, args, fields)}


def verified_approval(key: str | None, tool: str, args: dict[str, Any], meta: Any) -> ToolContext | None:
    """The approved action's context when ``meta`` carries an approval of exactly ``tool`` and ``args`` signed under
    ``key``; None otherwise (no key, no approval, another tool or other arguments, a forged signature)."""
    if not key or not isinstance(meta, Mapping) or not isinstance(meta.get(META_KEY), Mapping):
        return None
    given = meta[META_KEY]
    fields = {f: str(given.get(f) or "") for f in _FIELDS}
    if not fields["scope"] or not hmac.compare_digest(str(given.get("signature") or ""),
                                                      _signature(key, tool, args, fields)):
        return None
    return ToolContext(scope=fields["scope"], override_reason=fields["override_reason"],
                       approved_by=fields["approved_by"], conversation=fields["conversation"])

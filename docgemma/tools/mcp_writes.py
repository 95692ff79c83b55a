"""What the MCP tool server does with a write call: the same checks as the app's card, and a write only with a
clinician's approval, or in the deployer's explicit unattended mode.

* ``approved`` (``mcp --allow-writes``): a write needs the app's signed approval (:mod:`docgemma.tools.mcp_approval`)
  of exactly these arguments. The record's write check (``ehr_tools.record_write_check``: patient identity and the
  tool's own ``pre_write_check``) runs again before anything is written: a severe finding passes only when the
  approval carries the clinician's override reason.
* ``unattended`` (``mcp --unattended-writes``, HTTP with a token of 32+ characters only): a client may write with
  no clinician; every such write is logged, the checks run, and any severe finding refuses it (no override).

Either way the write itself is the tool's executor, keyed by the card's identity and its exact arguments
(``record_io.write``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from docgemma.tools.mcp_approval import verified_approval
from docgemma.tools.outcome import ToolOutcome, failure
from docgemma.tools.review_types import WriteCheck
from docgemma.tools.spec import ToolContext, ToolSpec

log = logging.getLogger(__name__)

WriteMode = Literal["approved", "unattended"]
#: Who the Provenance names for a write made in the unattended mode.
UNATTENDED_APPROVER = "unattended MCP client (no clinician approval)"


def _refused(why: str) -> ToolOutcome:
    return failure("invalid_args", missing_fields=[f"{why}; nothing was written"])


@dataclass(frozen=True)
class WriteGuard:
    """The server's write policy: ``mode``, the app's approval key, and the record's write check."""

    mode: WriteMode
    approval_key: str | None
    write_check: WriteCheck | None

    def run(self, spec: ToolSpec, args: BaseModel, meta: Any) -> ToolOutcome:
        """Check, then write ``args`` with ``spec`` when the policy allows; a refusal names why."""
        dumped = args.model_dump()
        approved = verified_approval(self.approval_key, spec.name, dumped, meta)
        if approved is None and self.mode == "approved":
            log.warning("MCP write of %s refused: no valid clinician approval", spec.name)
            return _refused("a clinician's approval signed by the app (this server writes only approved actions)")
        if self.write_check is None:  # a server built without the record's checks must not write at all
            return _refused("the record's write checks, which this server was started without")
        review = self.write_check(spec, dumped, None)
        if review.get("blocked"):
            return _refused(str(review["blocked"]))
        severe = list(review.get("severe", []))
        if severe and (approved is None or not approved.override_reason):
            log.warning("MCP write of %s refused: %d severe finding(s)", spec.name, len(severe))
            return _refused(f"no severe finding ({severe[0]})")
        context = approved or ToolContext(scope="", approved_by=UNATTENDED_APPROVER)
        if approved is None:
            log.warning("UNATTENDED MCP write of %s (no clinician approval; checks ran, no severe finding)", spec.name)
        return spec.run(args, context)

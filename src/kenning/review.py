"""Review: pending memories wait for a reviewer (seed 001 phase 3), mixed into
:class:`~kenning.engine.Memory`.

A memory is pending when it was written as ``pending_review``, when a
lifecycle policy holds extracted facts for review, or when the directory asks
for approval of its scope (the organization's ``review`` switch for the
organization layer, a team's or persona's for their shared scope; writes by
the scope's own reviewers go straight in, except on the organization layer,
where every write waits). Reviewers are chosen by
:meth:`~kenning.access.AccessPolicy.can_review`: admins, team leads, persona
leads, and users for their own personal scopes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .audit import audited
from .errors import Conflict, InvalidInput, KenningError, NotFound
from .facade import Facade
from .models import MemoryFilter, MemoryRecord, Page, Principal, ScopesArg, Status
from .paging import page
from .validation import clean_k, clean_text

__all__ = ["ReviewMethods"]


class ReviewMethods(Facade):
    """Review-queue methods of :class:`~kenning.engine.Memory` (see the module docstring).
    The review gate itself is a stage of the write pipeline (:mod:`kenning.write`)."""

    @audited("review.queue", read=True, target=lambda result, args: None)
    def review_queue(
        self,
        *,
        scopes: ScopesArg = None,
        limit: int = 50,
        cursor: str | None = None,
        principal: Principal | None = None,
    ) -> Page:
        """Pending memories the caller may review, newest first, one page at a time.

        ``scopes``: None for every scope the caller reviews, or named scopes
        (each must be one the caller reviews).
        """
        who = self.core.who(principal)
        if scopes is None or scopes == "all":
            named: Any = sorted(self.core.policy.reviewable(who).scopes, key=lambda s: s.key)
            if who.is_admin:
                named = "all"
            elif not named:
                return Page([], None)
        else:
            named = scopes
            view = self.core.policy.resolve(who, scopes)
            for scope in view.scopes:
                self.core.policy.check_review(who, scope)
        limit = clean_k(limit, self.core.settings.max_k, "limit")
        view = self.core.policy.resolve(who, named)
        pending = MemoryFilter(statuses=frozenset({Status.PENDING_REVIEW}))
        return page(self.core, view, pending, limit, cursor)

    @audited("review.approve")
    def approve(
        self,
        memory_id: str,
        *,
        changes: Mapping[str, Any] | None = None,
        principal: Principal | None = None,
    ) -> MemoryRecord:
        """Make a pending memory active, optionally editing it on the way (``changes``
        as :meth:`update` takes them); the history records ``approve``."""
        who = self.core.who(principal)
        record = self._pending(memory_id, who)
        if changes is not None and not isinstance(changes, Mapping):
            raise InvalidInput("changes must be an object", field="changes")
        return self.writes.edit(
            who, record.id, dict(changes or {}), op="approve", status=Status.ACTIVE
        )

    @audited(
        "review.reject",
        target=lambda result, args: args[0] if args else None,
        detail=lambda kwargs: {"reason": kwargs["reason"]} if kwargs.get("reason") else {},
    )
    def reject(
        self, memory_id: str, *, reason: str | None = None, principal: Principal | None = None
    ) -> None:
        """Delete a pending memory; its history keeps who rejected it and when (and the
        audit log the reason)."""
        who = self.core.who(principal)
        record = self._pending(memory_id, who)
        if reason is not None:
            clean_text(reason, "reason", 1000)
        if not self.core.store.delete(record.org_id, record.id, who.user_id, self.core.clock.now()):
            raise NotFound(f"memory {memory_id!r} not found")

    def review_many(
        self,
        ids: Sequence[str],
        action: str,
        *,
        reason: str | None = None,
        principal: Principal | None = None,
    ) -> tuple[dict[str, str], dict[str, str]]:
        """Approve or reject several pending memories, each on its own: returns
        ``(done, failed)``, id → ``approved``/``rejected`` and id → the error."""
        if action not in ("approve", "reject"):
            raise InvalidInput(f"action must be approve or reject, got {action!r}", field="action")
        done: dict[str, str] = {}
        failed: dict[str, str] = {}
        for memory_id in dict.fromkeys(ids):
            try:
                if action == "approve":
                    self.approve(memory_id, principal=principal)
                else:
                    self.reject(memory_id, reason=reason, principal=principal)
                done[memory_id] = action + "d"  # approved, rejected
            except KenningError as exc:
                failed[memory_id] = str(exc)
        return done, failed

    def _pending(self, memory_id: str, who: Principal) -> MemoryRecord:
        record = self.core.visible(memory_id, who)
        self.core.policy.check_review(who, record.scope)
        if record.status is not Status.PENDING_REVIEW:
            raise Conflict(f"memory {record.id!r} is {record.status.value}, not pending_review")
        return record

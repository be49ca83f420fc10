"""Who may do what to a record: the one decision (docs/sharing.md).

A record has its owner (who uploaded it; full rights, always) and may be in
one space, whose members hold a role there; it may also be shared with one
person directly. What a person may do is the most their grant allows:
`may(action, grant)`. The grant is a typed read of the record's owner, space
and the asking person's roles (`transcriber.db.reads.access.grant`), built in
one place; every door asks this function, never a role by itself.

A person with no grant at all is told what a record that does not exist
tells (`NOT_FOUND`): a stranger cannot learn that an id is taken. A person
who may see the record but not do this to it is told `FORBIDDEN` (403): they
know the record already, so a 404 would hide nothing and only puzzle them.

No I/O. Imports: `core` and `domain` only.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class AccessRole(StrEnum):
    """A role in a space (all three) or on a direct share (viewer, editor)."""

    VIEWER = "viewer"
    EDITOR = "editor"
    ADMIN = "admin"


SPACE_ROLES = tuple(role.value for role in AccessRole)
SPACE_NAME_MAX = 64
SHARE_ROLES = (AccessRole.VIEWER.value, AccessRole.EDITOR.value)


class Action(StrEnum):
    """What can be done to a record (or, for MEMBERS and SPACE_WEBHOOKS, its space)."""

    LIST = "list"
    OPEN = "open"
    LISTEN = "listen"
    SEARCH = "search"
    EXPORT = "export"
    EDIT = "edit"
    """The transcript, title, brief, topics and speaker names."""
    RETRANSCRIBE = "retranscribe"
    RESUME = "resume"
    MOVE = "move"
    """Into a space or out of it."""
    SHARE = "share"
    """Share with a person, revoke a share, see the shares (and links)."""
    DELETE = "delete"
    VOICES = "voices"
    """Teach the person's own voice profiles from the record (biometric: owner only)."""
    MEMBERS = "members"
    SPACE_WEBHOOKS = "space_webhooks"


_VIEW = frozenset({Action.LIST, Action.OPEN, Action.LISTEN, Action.SEARCH, Action.EXPORT})
_EDIT = _VIEW | {Action.EDIT, Action.RETRANSCRIBE, Action.RESUME}
_ADMIN = _EDIT | {Action.DELETE, Action.SHARE, Action.MEMBERS, Action.SPACE_WEBHOOKS}
_OWNER = frozenset(Action) - {Action.MEMBERS, Action.SPACE_WEBHOOKS}

ROLE_ACTIONS: dict[AccessRole, frozenset[Action]] = {
    AccessRole.VIEWER: _VIEW,
    AccessRole.EDITOR: _EDIT,
    AccessRole.ADMIN: _ADMIN,
}
"""What each role allows on a record of the space (or shared with that role)."""


class AccessAnswer(StrEnum):
    ALLOWED = "allowed"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"


@dataclass(frozen=True, slots=True, kw_only=True)
class Grant:
    """What one person holds on one record."""

    record_id: str
    owner_id: str
    space_id: str | None
    is_owner: bool
    space_role: AccessRole | None
    """The person's role in the record's space (None: not a member, or no space)."""
    share_role: AccessRole | None
    """The role the record is shared with the person directly (None: not shared)."""

    def sees(self) -> bool:
        return self.is_owner or self.space_role is not None or self.share_role is not None


def allowed(action: Action, grant: Grant | None) -> bool:
    """Whether the grant allows the action (see `may`)."""
    return may(action, grant) is AccessAnswer.ALLOWED


def may(action: Action, grant: Grant | None) -> AccessAnswer:
    """The one decision: ALLOWED, FORBIDDEN (sees the record, may not do this) or
    NOT_FOUND (no grant: the same answer as for an id that does not exist)."""
    if grant is None or not grant.sees():
        return AccessAnswer.NOT_FOUND
    actions: set[Action] = set()
    if grant.is_owner:
        actions |= _OWNER
    if grant.space_role is not None:
        actions |= ROLE_ACTIONS[grant.space_role]
    if grant.share_role is not None:
        # A direct share never hands out the space's or the record's keys.
        actions |= ROLE_ACTIONS[grant.share_role] & _EDIT
    return AccessAnswer.ALLOWED if action in actions else AccessAnswer.FORBIDDEN


def may_in_space(action: Action, role: AccessRole | None) -> AccessAnswer:
    """A space's own actions (members, webhooks, putting a record in it): by the
    person's role there; a non-member is told the space does not exist."""
    if role is None:
        return AccessAnswer.NOT_FOUND
    if action is Action.MOVE:
        # Filing a record into a space shows it to every member: editors and admins.
        filing = role in (AccessRole.EDITOR, AccessRole.ADMIN)
        return AccessAnswer.ALLOWED if filing else AccessAnswer.FORBIDDEN
    return AccessAnswer.ALLOWED if action in ROLE_ACTIONS[role] else AccessAnswer.FORBIDDEN


def role_of(value: str | None) -> AccessRole | None:
    """A stored role (None stays None); an unknown one raises ValueError."""
    return None if value is None else AccessRole(value)


def role_name(grant: Grant) -> str:
    """The most the person holds, as the card names it: owner, admin, editor, viewer."""
    if grant.is_owner:
        return "owner"
    held = [role for role in (grant.space_role, grant.share_role) if role is not None]
    order = list(AccessRole)
    return max(held, key=order.index).value if held else "viewer"

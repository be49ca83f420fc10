"""The one access decision (`domain.access.may`), against the roles table of
docs/sharing.md."""

from __future__ import annotations

import pytest

from transcriber.domain.access import (
    AccessAnswer,
    AccessRole,
    Action,
    Grant,
    may,
    may_in_space,
    role_name,
)

VIEW = {Action.LIST, Action.OPEN, Action.LISTEN, Action.SEARCH, Action.EXPORT}
EDIT = VIEW | {Action.EDIT, Action.RETRANSCRIBE, Action.RESUME}


def _grant(*, owner: bool = False, space: AccessRole | None = None,
           share: AccessRole | None = None) -> Grant:
    return Grant(record_id="r", owner_id="o" if not owner else "me", space_id="s",
                 is_owner=owner, space_role=space, share_role=share)


@pytest.mark.parametrize(("grant", "allowed"), [
    (_grant(owner=True), set(Action) - {Action.MEMBERS, Action.SPACE_WEBHOOKS}),
    (_grant(space=AccessRole.ADMIN), EDIT | {Action.DELETE, Action.SHARE, Action.MEMBERS,
                                       Action.SPACE_WEBHOOKS}),
    (_grant(space=AccessRole.EDITOR), EDIT),
    (_grant(space=AccessRole.VIEWER), VIEW),
    (_grant(share=AccessRole.EDITOR), EDIT),
    (_grant(share=AccessRole.VIEWER), VIEW),
    # The most of the two: a space viewer the record is shared with as editor edits.
    (_grant(space=AccessRole.VIEWER, share=AccessRole.EDITOR), EDIT),
])
def test_each_role_allows_its_row_of_the_table(grant: Grant, allowed: set[Action]) -> None:
    for action in Action:
        expected = AccessAnswer.ALLOWED if action in allowed else AccessAnswer.FORBIDDEN
        assert may(action, grant) is expected, action


def test_no_grant_is_the_answer_of_a_record_that_does_not_exist() -> None:
    for action in Action:
        assert may(action, None) is AccessAnswer.NOT_FOUND
        assert may(action, _grant()) is AccessAnswer.NOT_FOUND


def test_a_direct_share_never_hands_out_the_records_keys() -> None:
    """Even an admin role on a share (the schema refuses one) gives no more than edit."""
    grant = _grant(share=AccessRole.ADMIN)
    for action in (Action.DELETE, Action.SHARE, Action.MOVE, Action.MEMBERS, Action.VOICES):
        assert may(action, grant) is AccessAnswer.FORBIDDEN


def test_only_the_owner_teaches_voices_and_moves_the_record() -> None:
    for grant in (_grant(space=AccessRole.ADMIN), _grant(share=AccessRole.EDITOR)):
        assert may(Action.VOICES, grant) is AccessAnswer.FORBIDDEN
        assert may(Action.MOVE, grant) is AccessAnswer.FORBIDDEN
    assert may(Action.VOICES, _grant(owner=True)) is AccessAnswer.ALLOWED


def test_filing_into_a_space_takes_an_editor_or_admin() -> None:
    assert may_in_space(Action.MOVE, None) is AccessAnswer.NOT_FOUND
    assert may_in_space(Action.MOVE, AccessRole.VIEWER) is AccessAnswer.FORBIDDEN
    assert may_in_space(Action.MOVE, AccessRole.EDITOR) is AccessAnswer.ALLOWED
    assert may_in_space(Action.MEMBERS, AccessRole.EDITOR) is AccessAnswer.FORBIDDEN
    assert may_in_space(Action.MEMBERS, AccessRole.ADMIN) is AccessAnswer.ALLOWED
    assert may_in_space(Action.LIST, AccessRole.VIEWER) is AccessAnswer.ALLOWED


def test_the_card_names_the_most_the_person_holds() -> None:
    assert role_name(_grant(owner=True, space=AccessRole.VIEWER)) == "owner"
    assert role_name(_grant(space=AccessRole.VIEWER, share=AccessRole.EDITOR)) == "editor"
    assert role_name(_grant(space=AccessRole.ADMIN, share=AccessRole.VIEWER)) == "admin"

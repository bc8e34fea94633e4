"""User prefixes reach rt_default.conf as regular expressions: whatever the inventory holds is
either refused with a reason or written as a literal ERE without quotes or backslashes."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from imsdr.diameter import _ere_literal
from imsdr.inventory.schema import UserPrefix

ADAPTER = TypeAdapter(UserPrefix)


@given(st.text(max_size=80))
def test_a_user_prefix_is_refused_or_written_as_a_plain_literal(text: str) -> None:
    try:
        value = ADAPTER.validate_python(text)
    except ValidationError as exc:
        assert "invalid user prefix" in str(exc)
        return
    ere = _ere_literal(value)
    assert re.fullmatch(r"(?:[A-Za-z0-9_@-]|\[[+.]\])+", ere)
    assert re.match("^" + ere, value)  # Python's re reads this subset of ERE the same way

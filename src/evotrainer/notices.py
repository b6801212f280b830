"""Notices: what a run says about a fallback it takes (synthetic data instead of a missing
default file, a confirmation part smaller than asked) is an event for its observers and, for a
Python API user without one, a logged warning too."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def announce(message: str) -> None:
    """A fallback the run also reports as an event: logged as a warning too, so that a Python
    API user without an observer sees it (the command line shows the event and skips the
    record: ``extra on_console``)."""
    log.warning(message, extra={"on_console": True})

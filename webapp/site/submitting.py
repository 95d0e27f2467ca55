"""How the site's forms submit jobs (the upload page without JavaScript, and "Run again"): the API's
parser and refusals (webapp.jobs.submission, webapp.jobs.refusals), with what differs on the site.

Its forms send every face number they hold, in hidden fields, whichever choice is made; and the
person to match is picked on the photo, so a missing pick is said under the faces choice.
"""

from __future__ import annotations

import logging

from django.http import HttpRequest, QueryDict
from django.utils.translation import gettext, gettext_noop

from webapp.jobs.choices import FaceSelection
from webapp.jobs.refusals import Refusal, refusal_for
from webapp.jobs.submission import OptionsRefused, Submission, parse_submission

logger = logging.getLogger(__name__)

# The face number each choice of `faces` goes with (the form posts both).
FACE_NUMBERS = {"face_index": FaceSelection.ONE, "reference_face_index": FaceSelection.REFERENCE}
PICK_THE_PERSON = gettext_noop("Pick the person to match on the photo.")


def parse_form(request: HttpRequest) -> Submission:
    """The options and consent a site form posted. Raises OptionsRefused."""
    fields: QueryDict = request.POST.copy()
    chosen = fields.get("faces") or FaceSelection.ONE  # the parser's default too
    for name, choice in FACE_NUMBERS.items():
        if chosen != choice:
            fields.pop(name, None)
    return parse_submission(fields, channel="site")


def form_errors(exc: OptionsRefused) -> dict[str, str]:
    """Field → one line to show next to it."""
    errors = {field: " ".join(messages) for field, messages in exc.errors.items()}
    if errors.pop("reference_face_index", None) is not None:
        errors["faces"] = gettext(PICK_THE_PERSON)
    return errors


def refused(exc: Exception, *, what: str) -> Refusal:
    """The site's answer to a refused submission (one of webapp.jobs.refusals.REFUSALS)."""
    refusal = refusal_for(exc)
    if refusal is None:
        raise exc
    if refusal.status == 503:
        logger.warning("%s refused: storage unavailable", what, exc_info=exc)
    return refusal


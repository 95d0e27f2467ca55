"""Request bodies: JSON with a nesting limit, so `[[[[…]]]]` is a 400 problem, never a 500.

Python's json module recurses once per level and raises RecursionError around 1,000 levels; a
structure just under that still makes every later walk over it (validation, json.dumps into the
job's options) a recursion hazard. No field of this API nests more than a few levels, so anything
deeper than MAX_JSON_DEPTH (webapp/jobs/json_nesting.py, which the multipart `face_sources` field
uses too) is refused before any view sees it.
"""

from __future__ import annotations

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from webapp.jobs.json_nesting import MAX_JSON_DEPTH, json_too_deep


def nesting_error() -> ParseError:
    return ParseError(f"JSON nested more than {MAX_JSON_DEPTH} levels deep is not accepted.")


class BoundedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise nesting_error() from exc
        if json_too_deep(data):
            raise nesting_error()
        return data

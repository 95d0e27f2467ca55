"""One JSON object per log line (VISAGE_LOG_FORMAT=json, the default): the message, the level, the
logger, the bound context (webapp.telemetry.context) and any `extra=` fields such as durations."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from . import context

# Attributes every LogRecord has; anything else on a record came from `extra=` and is logged.
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "ts": datetime.fromtimestamp(record.created, tz=UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
        }
        line.update(context.current())
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                line[key] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


class ContextFilter(logging.Filter):
    """For the plain format: expose the bound context as `%(context)s`."""

    def filter(self, record: logging.LogRecord) -> bool:
        bound = context.current()
        record.context = " ".join(f"{k}={v}" for k, v in bound.items()) if bound else ""
        return True

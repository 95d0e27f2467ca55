"""Print the requirements of Visage's core and the named extras (from pyproject.toml), one a line.

The image build installs them offline from the wheelhouse before the source is copied in, so a
code change does not reinstall the dependencies:

    python3 requirements.py pyproject.toml cpu video > /tmp/requirements.txt
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

SELF_REFERENCE = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+)\[(?P<extras>[^\]]+)\]$")


def requirements(pyproject: Path, extras: list[str]) -> list[str]:
    project = tomllib.loads(pyproject.read_text())["project"]
    optional = project.get("optional-dependencies", {})
    result = list(project["dependencies"])
    pending, seen = list(extras), set()
    while pending:
        extra = pending.pop(0)
        if extra in seen:
            continue
        seen.add(extra)
        if extra not in optional:
            raise SystemExit(f"unknown extra {extra!r}; pyproject.toml has: {', '.join(sorted(optional))}")
        for requirement in optional[extra]:
            nested = SELF_REFERENCE.match(requirement.replace(" ", ""))
            if nested and nested["name"] == project["name"]:  # "visage[cpu,video]"
                pending.extend(nested["extras"].split(","))
            elif requirement not in result:
                result.append(requirement)
    return result


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    print("\n".join(requirements(Path(sys.argv[1]), sys.argv[2:])))

"""Status GET rates with wrk (a C client: a Python client on the same 2 cores measures itself, not
the server), shared by bench/api.py and bench/jobpath.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path


def status_rate(url: str, headers: dict, *, etag: str | None, concurrency: int, seconds: int,
                server_pid: int | None = None) -> str:
    """GET `url` for `seconds` at `concurrency` connections (with If-None-Match when `etag`): one line."""
    if shutil.which("wrk") is None:
        return "skipped: needs wrk on PATH (apt-get install wrk)"
    command = ["wrk", "-t2", f"-c{concurrency}", f"-d{seconds}s", "--latency"]
    for name, value in {**headers, **({"If-None-Match": etag} if etag else {})}.items():
        command += ["-H", f"{name}: {value}"]
    cpu_before = server_cpu_s(server_pid)
    output = subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout
    cpu_s = server_cpu_s(server_pid) - cpu_before
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    p50 = re.search(r"^\s+50%\s+(\S+)", output, re.M).group(1)  # the latency distribution's lines
    p99 = re.search(r"^\s+99%\s+(\S+)", output, re.M).group(1)
    failed = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    served = int(re.search(r"(\d+) requests in", output).group(1))
    cpu = f"; server CPU {1000 * cpu_s / served:.2f} ms/request" if server_pid else ""
    return (f"{rate:.0f} requests/s at concurrency {concurrency} (wrk, {seconds} s; latency p50 {p50}, "
            f"p99 {p99}; non-2xx/3xx: {failed.group(1) if failed else 0}{cpu})")


def server_cpu_s(pid: int | None) -> float:
    """CPU seconds (user + system) used so far by process `pid` and all its descendants (Linux):
    the web server's cost per request, whatever else the machine is doing."""
    if not pid:
        return 0.0
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return own + sum(server_cpu_s(int(child)) for child in children)

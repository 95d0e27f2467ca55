"""/report: a takedown report from someone who found a swap of themselves."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from webapp.jobs import takedowns

from .. import limits
from ..forms import TakedownReportForm


def report(request: HttpRequest) -> HttpResponse:
    """/report: public. A person who found a swap of themselves reports it to the moderators."""
    form = TakedownReportForm(request.POST or None, request.FILES or None, max_bytes=settings.VIDEO_MAX_BYTES)
    if request.method == "POST" and form.is_valid():
        if wait := limits.wait_s(request, "report"):  # face detection on this server, a moderator's time
            return limits.refused(request, "webapp/report.html", {"form": form}, wait)
        data = form.cleaned_data
        upload = data.get("file")
        created = takedowns.takedown_report_submit(
            reporter_name=data["reporter_name"],
            reporter_email=data["reporter_email"],
            relation=data["relation"],
            details=data["details"],
            link=data["link"].strip(),
            file_data=upload.read() if upload else None,
        )
        return render(request, "webapp/report.html", {"report": created})
    return render(request, "webapp/report.html", {"form": form}, status=400 if form.errors else 200)

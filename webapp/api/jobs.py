"""/api/v1/jobs: create (multipart), list, get, cancel, delete. Another user's job is a 404."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.jobs import etags, events, selectors, sharing, submission
from webapp.jobs.choices import JobState
from webapp.jobs.payload import cache_job_payload, cached_job_payload, job_payload
from webapp.jobs.services import intake, user_actions
from webapp.jobs.states import TERMINAL_STATES

from . import waiting
from .representations import JobPageSerializer, JobSerializer
from .throttles import JobCreateThrottle, ReadThrottle

PROBLEM = OpenApiResponse(description="RFC 9457 application/problem+json with a stable `code`")
JOB = OpenApiResponse(JobSerializer, description="The job")


class ThrottledView(APIView):
    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        for header, value in getattr(request, "ratelimit_headers", {}).items():
            response[header] = value
        return response


CLIENT_HEADER = "X-Visage-Client"


def request_client(request) -> str | None:
    """The client whose defaults a request gets: the X-Visage-Client header, else the signed-in
    device's client, else None (the channel decides). An unknown header value is a 400."""
    named = request.headers.get(CLIENT_HEADER, "").strip().lower()
    if named:
        if named not in submission.CLIENTS:
            raise serializers.ValidationError(
                {CLIENT_HEADER: f"{CLIENT_HEADER} is one of {', '.join(submission.CLIENTS)}, not {named[:40]!r}."}
            )
        return named
    device = getattr(request, "signed_in_device", None)
    return device.client if device is not None else None


class JobListCreateView(ThrottledView):
    parser_classes = [MultiPartParser, FormParser]

    # The create request as documented; its fields are checked by `submission.parse_submission`
    # (with the same class), one way for the API, the site's upload page and "Run again". No
    # docstring: the schema would show it.
    class InputSerializer(submission.SubmittedFields):
        class Meta:
            ref_name = "JobCreate"

    def get_throttles(self):
        return [JobCreateThrottle()] if self.request.method == "POST" else [ReadThrottle()]

    @extend_schema(
        operation_id="jobs_create",
        request={"multipart/form-data": InputSerializer},
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                str,
                OpenApiParameter.HEADER,
                required=False,
                description="Retry-safe creation: the same key returns the same job.",
            ),
            OpenApiParameter(
                CLIENT_HEADER,
                str,
                OpenApiParameter.HEADER,
                required=False,
                enum=list(submission.CLIENTS),
                description="The kind of client, for its defaults (resolution: mobile 720p, web 1080p).",
            ),
        ],
        responses={201: JOB, 400: PROBLEM, 401: PROBLEM, 402: PROBLEM, 403: PROBLEM, 404: PROBLEM, 409: PROBLEM,
                   415: PROBLEM, 422: PROBLEM, 429: PROBLEM},
        summary="Create a face-swap job",
    )
    def post(self, request):
        # The site's upload page posts here with its session; apps use bearer tokens.
        channel = "site" if isinstance(request.successful_authenticator, SessionAuthentication) else "api"
        try:
            submitted = submission.parse_submission(request.data, channel=channel, client=request_client(request))
        except submission.OptionsRefused as exc:
            raise serializers.ValidationError(exc.errors) from None
        key = request.headers.get("Idempotency-Key", "").strip()
        job, created = intake.job_submit(
            user=request.user,
            sources=request.FILES.getlist("source"),
            target=request.FILES.get("target"),
            options=submitted.options,
            consent=submitted.consent,
            idempotency_key=key,
            source_upload_ids=submitted.source_upload_ids,
            target_upload_id=submitted.target_upload_id,
        )
        payload = job_payload(job, request=request)
        headers = {"Location": payload["urls"]["self"], "ETag": events.remember(job)}
        if not created:
            headers["Idempotent-Replayed"] = "true"
        return Response(payload, status=status.HTTP_201_CREATED, headers=headers)

    @extend_schema(
        operation_id="jobs_list",
        parameters=[
            OpenApiParameter("state", str, enum=list(JobState.values), required=False),
            OpenApiParameter(
                "q", str, required=False,
                description="Words in the target's original file name (jobs created before names were kept "
                "have none and never match).",
            ),
            OpenApiParameter("favourite", bool, required=False, description="true: only starred jobs; false: only "
                             "the others."),
            OpenApiParameter("page", int, required=False),
        ],
        responses={
            200: JobPageSerializer,
            400: PROBLEM,
            401: PROBLEM,
        },
        summary="List your jobs, newest first",
    )
    def get(self, request):
        state = request.query_params.get("state")
        if state and state not in JobState.values:
            raise serializers.ValidationError(
                {"state": f"Unknown state {state!r}; one of {', '.join(JobState.values)}."}
            )
        favourite = request.query_params.get("favourite")
        if favourite not in (None, "true", "false"):
            raise serializers.ValidationError({"favourite": f"favourite is true or false, not {favourite!r}."})
        jobs = selectors.jobs_for_user(
            user=request.user,
            state=state,
            query=request.query_params.get("q", "")[:200],
            favourite=None if favourite is None else favourite == "true",
        )
        paginator = PageNumberPagination()
        page = paginator.paginate_queryset(jobs, request, view=self)
        # The page's ETag: which jobs, in which versions, out of how many (saves the payloads and
        # their presigned URLs when nothing changed; the rows are read either way).
        versions = "\n".join([str(paginator.page.paginator.count), *(etags.job_etag(job) for job in page)])
        etag = f'"{hashlib.sha256(versions.encode()).hexdigest()[:32]}"'
        if etags.matches(etag, etags.if_none_match(request)):
            return Response(status=status.HTTP_304_NOT_MODIFIED, headers={"ETag": etag})
        standings = selectors.queue_standings(page)  # the page's queued jobs in one read
        response = paginator.get_paginated_response(
            [job_payload(job, request=request, standings=standings) for job in page]
        )
        response["ETag"] = etag
        return response


class JobDetailView(ThrottledView):
    def get_throttles(self):
        return [ReadThrottle()]

    @extend_schema(
        operation_id="jobs_retrieve",
        parameters=[
            OpenApiParameter(
                "wait", float, required=False,
                description="Long-poll: wait up to this many seconds (0 < wait <= 30) for the job to change "
                "from the If-None-Match ETag you hold (or, without one, from its state and progress when the "
                "request arrived). Answers as soon as it changes; else 304 (with If-None-Match) or 200.",
            ),
            OpenApiParameter(
                "until", str, required=False, enum=["final"],
                description="With wait: answer only once the job is in a final state (succeeded, failed, "
                "rejected, canceled) or the wait is over, not at every progress change: submit, one "
                "`?wait=30&until=final` per 30 s, and the result.",
            ),
            OpenApiParameter(
                "If-None-Match", str, OpenApiParameter.HEADER, required=False,
                description="The ETag of the representation you hold: 304 Not Modified when it is still current.",
            ),
        ],
        responses={200: JOB, 304: OpenApiResponse(description="Not modified"), 400: PROBLEM, 401: PROBLEM,
                   404: PROBLEM},
        summary="Get a job (conditional with If-None-Match; long-poll with ?wait=N)",
    )
    def get(self, request, job_id):
        wait_s = long_poll_seconds(request)
        until_final = long_poll_until_final(request, wait_s)
        client_etags = etags.if_none_match(request)
        user_id = request.user.pk
        # Where the user's stream stands before anything is read: whatever changes from here on is
        # an event after this id, so the wait below cannot miss it.
        after = events.position(user_id=user_id) if wait_s else None
        # The row's version fields, one primary-key read: a 304 or a cached body is only ever for
        # what the database says now (a Redis-side record could lag behind a change whose publish
        # hit a Redis outage).
        row = selectors.job_etag_fields(user_id=user_id, job_id=job_id)
        if row is None:
            self._load(request, job_id)  # the 404 problem
        known = etags.representation(row)
        if etags.matches(known.etag(), client_etags) or after is None:
            # A 304 or a cached body needs no full Job load.
            job, etag, terminal = None, known.etag(), known.terminal
        else:
            job = self._load(request, job_id)
            etag, terminal = events.remember(job), job.state in TERMINAL_STATES
        if after is not None and not terminal:
            arrived = (job.state, job.progress) if job is not None else None
            seen = {"job": job, "etag": etag}

            def on_event(event):
                if until_final and not (event.data.get("terminal") or event.data.get("deleted")):
                    # Progress and intermediate states, as published: no read, keep waiting (the
                    # terminal state publishes an event of its own after them).
                    return None
                seen["job"] = job = self._load(request, job_id)  # a 404 when it was deleted meanwhile
                seen["etag"] = etag = events.remember(job)
                if until_final and job.state not in TERMINAL_STATES:
                    return None  # progress and intermediate states: keep waiting
                if client_etags:
                    changed = not etags.matches(etag, client_etags)
                else:
                    changed = (job.state, job.progress) != arrived
                if changed or job.state in TERMINAL_STATES:
                    return self._answer(request, job_id, job=job, etag=etag, client_etags=client_etags)
                return None

            events.release_database_connection()  # the wait reads Redis only
            # The wait runs on the event loop (waiting.waiting_view), each event back here.
            return waiting.LongPoll(
                view=self, request=request, user_id=user_id, job_id=job_id, after=after, timeout_s=wait_s,
                on_event=on_event,
                on_timeout=lambda: self._answer(request, job_id, job=seen["job"], etag=seen["etag"],
                                                client_etags=client_etags, terminal=terminal),
            )
        return self._answer(request, job_id, job=job, etag=etag, client_etags=client_etags, terminal=terminal)

    def _answer(self, request, job_id, *, job, etag: str, client_etags, terminal: bool | None = None):
        """304 when the client's ETag is current, else the job's body (from the cache when known)."""
        if job is not None:
            terminal = job.state in TERMINAL_STATES
        headers = {"ETag": etag}
        if not terminal:
            headers["Retry-After"] = "2"
        if etags.matches(etag, client_etags):
            return Response(status=status.HTTP_304_NOT_MODIFIED, headers=headers)
        origin = f"{request.scheme}://{request.get_host()}"
        body = cached_job_payload(job_id=job_id, etag=etag, origin=origin) if job is None else None
        if body is None:
            if job is None:
                job = self._load(request, job_id)
                headers["ETag"] = etag = events.remember(job)  # a change may have landed meanwhile
            body = job_payload(job, request=request)
            cache_job_payload(job_id=job_id, etag=etag, origin=origin, body=body)
        return Response(body, headers=headers)

    @staticmethod
    def _load(request, job_id):
        return get_object_or_404(selectors.jobs_for_user(user=request.user), id=job_id)

    class UpdateSerializer(serializers.Serializer):
        favourite = serializers.BooleanField(help_text="Star (true) or unstar (false) the job in your gallery.")

        class Meta:
            ref_name = "JobUpdate"

    @extend_schema(
        operation_id="jobs_partial_update",
        request={"application/json": UpdateSerializer},
        responses={200: JOB, 400: PROBLEM, 401: PROBLEM, 404: PROBLEM},
        summary="Change what you can change about a job: its favourite star",
    )
    def patch(self, request, job_id):
        serializer = self.UpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user_actions.job_set_favourite(job=self._load(request, job_id), favourite=serializer.validated_data["favourite"])
        job = self._load(request, job_id)  # with its uploads and links, as GET shows it
        return Response(job_payload(job, request=request), headers={"ETag": events.remember(job)})

    @extend_schema(
        operation_id="jobs_destroy",
        responses={204: None, 401: PROBLEM, 404: PROBLEM},
        summary="Delete a job and purge its stored media (cancels it first if running)",
    )
    def delete(self, request, job_id):
        job = get_object_or_404(selectors.jobs_for_user(user=request.user), id=job_id)
        user_actions.job_delete(job=job)
        return Response(status=status.HTTP_204_NO_CONTENT)


def long_poll_seconds(request) -> float:
    """`?wait=N`: 0 when absent; a 400 problem unless 0 < N <= LONG_POLL_MAX_S."""
    raw = request.query_params.get("wait")
    if raw is None:
        return 0.0
    limit = settings.LONG_POLL_MAX_S
    try:
        wait_s = float(raw)
    except ValueError:
        wait_s = -1.0
    if not 0 < wait_s <= limit:  # also refuses nan and inf
        raise serializers.ValidationError(
            {"wait": f"wait is how many seconds to wait for a change: a number above 0 and at most {limit}, "
                     f"not {raw!r}."}
        )
    return wait_s


def long_poll_until_final(request, wait_s: float) -> bool:
    """`?until=final` (with `wait`): answer at the final state, not at every change."""
    until = request.query_params.get("until")
    if until is None:
        return False
    if until != "final" or not wait_s:
        raise serializers.ValidationError(
            {"until": f"until=final goes with wait=N (wait for the job's final state); not {until!r}"
                      + ("" if wait_s else " without wait") + "."}
        )
    return True


class JobCancelView(ThrottledView):
    def get_throttles(self):
        return [ReadThrottle()]

    @extend_schema(
        operation_id="jobs_cancel",
        request=None,
        responses={200: JOB, 401: PROBLEM, 404: PROBLEM, 409: PROBLEM},
        summary="Cancel a job; held credits are released",
    )
    def post(self, request, job_id):
        job = get_object_or_404(selectors.jobs_for_user(user=request.user), id=job_id)
        job = user_actions.job_cancel(job=job)
        return Response(job_payload(job, request=request))


class JobShareView(ThrottledView):
    """The job's public share link: POST makes (or returns) it, DELETE stops sharing."""

    def get_throttles(self):
        return [ReadThrottle()]

    class OutputSerializer(serializers.Serializer):
        url = serializers.URLField()
        expires_at = serializers.DateTimeField()

        class Meta:
            ref_name = "ShareLink"

    @extend_schema(
        operation_id="jobs_share_create",
        request=None,
        responses={201: OutputSerializer, 200: OutputSerializer, 401: PROBLEM, 403: PROBLEM, 404: PROBLEM,
                   409: PROBLEM},
        summary="Share a result on an unlisted, expiring page (201 new link; 200 the active one again)",
    )
    def post(self, request, job_id):
        job = get_object_or_404(selectors.jobs_for_user(user=request.user), id=job_id)
        link, token, created = sharing.share_link_create(job=job)
        body = {
            "url": request.build_absolute_uri(sharing.share_link_url_path(token)),
            "expires_at": link.expires_at.isoformat().replace("+00:00", "Z"),
        }
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(
        operation_id="jobs_share_destroy",
        request=None,
        responses={204: None, 401: PROBLEM, 404: PROBLEM},
        summary="Stop sharing: every link of the job stops working (allowed even with sharing turned off)",
    )
    def delete(self, request, job_id):
        job = get_object_or_404(selectors.jobs_for_user(user=request.user), id=job_id)
        sharing.share_links_revoke(job=job)
        return Response(status=status.HTTP_204_NO_CONTENT)

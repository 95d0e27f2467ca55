from django.urls import include, path

from . import account, faces, job_events, jobs, quotes, waiting

urlpatterns = [
    path("auth/token", account.TokenView.as_view(), name="api-token"),
    path("me", account.MeView.as_view(), name="api-me"),
    path("jobs", jobs.JobListCreateView.as_view(), name="api-jobs"),
    path("jobs/events", waiting.waiting_view(job_events.JobEventsView), name="api-job-events"),
    path("jobs/<uuid:job_id>", waiting.waiting_view(jobs.JobDetailView), name="api-job-detail"),
    path("jobs/<uuid:job_id>/cancel", jobs.JobCancelView.as_view(), name="api-job-cancel"),
    path("jobs/<uuid:job_id>/share", jobs.JobShareView.as_view(), name="api-job-share"),
    path("faces", faces.FaceDetectView.as_view(), name="api-faces"),
    path("quotes", quotes.QuoteCreateView.as_view(), name="api-quotes"),
    path("", include("billing.urls")),
]

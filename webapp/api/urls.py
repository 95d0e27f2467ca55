from django.urls import include, path

from . import account, faces, job_events, jobs, push_devices, quotes, uploads, waiting

urlpatterns = [
    path("auth/token", account.TokenView.as_view(), name="api-token"),
    path("auth/refresh", account.RefreshView.as_view(), name="api-token-refresh"),
    path("auth/devices", account.DeviceListView.as_view(), name="api-devices"),
    path("auth/devices/<int:device_id>", account.DeviceDetailView.as_view(), name="api-device-detail"),
    path("devices", push_devices.PushDeviceListView.as_view(), name="api-push-devices"),
    path("devices/<int:device_id>", push_devices.PushDeviceDetailView.as_view(), name="api-push-device-detail"),
    path("me", account.MeView.as_view(), name="api-me"),
    path("me/delete", account.MeDeleteView.as_view(), name="api-me-delete"),
    path("jobs", jobs.JobListCreateView.as_view(), name="api-jobs"),
    path("jobs/events", waiting.waiting_view(job_events.JobEventsView), name="api-job-events"),
    path("jobs/<uuid:job_id>", waiting.waiting_view(jobs.JobDetailView, waits_only_with="wait"), name="api-job-detail"),
    path("jobs/<uuid:job_id>/cancel", jobs.JobCancelView.as_view(), name="api-job-cancel"),
    path("jobs/<uuid:job_id>/share", jobs.JobShareView.as_view(), name="api-job-share"),
    path("uploads", uploads.UploadCreateView.as_view(), name="api-uploads"),
    path("uploads/<uuid:upload_id>", uploads.UploadDetailView.as_view(), name="api-upload-detail"),
    path("uploads/<uuid:upload_id>/complete", uploads.UploadCompleteView.as_view(), name="api-upload-complete"),
    path("faces", faces.FaceDetectView.as_view(), name="api-faces"),
    path("quotes", quotes.QuoteCreateView.as_view(), name="api-quotes"),
    path("", include("billing.urls")),
]

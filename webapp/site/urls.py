"""The browser site's URLs (views in webapp/site/views/, a module per page)."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from .views import account, credits, gallery, job, landing, registration, report, share, upload

urlpatterns = [
    path("", landing.home, name="dashboard"),  # visitors: the landing page; signed in: the gallery
    path("jobs/status.json", gallery.dashboard_status, name="dashboard-status"),
    path("signup/", registration.signup, name="signup"),
    path("login/", registration.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Password reset by email (Django's views and tokens; the names are the ones Django expects).
    path("password/reset/", registration.PasswordResetView.as_view(), name="password_reset"),
    path("password/reset/sent/", registration.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path(
        "password/reset/<uidb64>/<token>/",
        registration.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "password/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(
            template_name="registration/password_reset_complete.html"
        ),
        name="password_reset_complete",
    ),
    path("jobs/new/", upload.upload, name="upload"),
    path("jobs/<uuid:job_id>/", job.job_detail, name="job-detail"),
    path("jobs/<uuid:job_id>/status.json", job.job_status, name="job-status"),
    path("jobs/<uuid:job_id>/cancel", job.job_cancel, name="job-cancel"),
    path("jobs/<uuid:job_id>/delete", job.job_delete, name="job-delete"),
    path("jobs/<uuid:job_id>/favourite", job.job_favourite, name="job-favourite"),
    path("jobs/<uuid:job_id>/share", job.job_share, name="job-share"),
    path("jobs/<uuid:job_id>/unshare", job.job_unshare, name="job-unshare"),
    path("jobs/<uuid:job_id>/run-again", job.job_run_again, name="job-run-again"),
    path("s/<str:token>/", share.share_page, name="share-page"),
    path("account/", account.account, name="account"),
    path("account/delete/", account.AccountDeleteView.as_view(), name="account-delete"),
    path("report", report.report, name="report"),
    path("examples/<slug:slug>/<str:which>.jpg", landing.example_picture, name="example-picture"),
    path(
        "account/password/",
        registration.PasswordChangeView.as_view(),
        name="password_change",
    ),
    path(
        "account/password/done/",
        auth_views.PasswordChangeDoneView.as_view(template_name="registration/password_change_done.html"),
        name="password_change_done",
    ),
    path("account/credits/", credits.credits, name="credits"),
    path("account/credits/<int:pack_id>/buy", credits.credits_buy, name="credits-buy"),
    path("account/credits/request", credits.credits_request, name="credits-request"),
    path("account/credits/success/", credits.credits_success, name="credits-success"),
    path("account/credits/canceled/", credits.credits_cancel, name="credits-cancel"),
    path("account/tokens", account.token_create, name="token-create"),
    path("account/tokens/<int:token_id>/revoke", account.token_revoke, name="token-revoke"),
    path("account/devices/<int:device_id>/sign-out", account.device_sign_out, name="device-sign-out"),
]

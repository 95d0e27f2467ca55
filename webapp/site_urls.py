"""The browser site (owned by the site issue; see webapp/views.py)."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from . import views

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("jobs/status.json", views.dashboard_status, name="dashboard-status"),
    path("signup/", views.signup, name="signup"),
    path(
        "login/",
        auth_views.LoginView.as_view(
            template_name="registration/login.html", redirect_authenticated_user=True
        ),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("jobs/new/", views.upload, name="upload"),
    path("jobs/<uuid:job_id>/", views.job_detail, name="job-detail"),
    path("jobs/<uuid:job_id>/status.json", views.job_status, name="job-status"),
    path("jobs/<uuid:job_id>/cancel", views.job_cancel, name="job-cancel"),
    path("jobs/<uuid:job_id>/delete", views.job_delete, name="job-delete"),
    path("account/", views.account, name="account"),
    path("account/tokens", views.token_create, name="token-create"),
    path("account/tokens/<int:token_id>/revoke", views.token_revoke, name="token-revoke"),
    path("errors/<slug:code>", views.error_doc, name="error-doc"),
]

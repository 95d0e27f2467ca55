"""The browser site (owned by the site issue; see webapp/views.py)."""

from django.contrib.auth import views as auth_views
from django.urls import path

from . import views

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("signup/", views.signup, name="signup"),
    path("login/", auth_views.LoginView.as_view(template_name="registration/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("jobs/new/", views.upload, name="upload"),
    path("jobs/<uuid:job_id>/", views.job_detail, name="job-detail"),
    path("jobs/<uuid:job_id>/status.json", views.job_status, name="job-status"),
    path("account/", views.account, name="account"),
    path("errors/<slug:code>", views.error_doc, name="error-doc"),
]

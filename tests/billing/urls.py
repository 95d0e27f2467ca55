"""The billing routes mounted as the platform mounts them (/api/v1/, /admin/), independent of webapp.urls."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("billing.urls")),
]

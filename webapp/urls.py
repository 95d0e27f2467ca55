from django.contrib import admin
from django.contrib.auth.decorators import user_passes_test
from django.urls import include, path
from django.views import i18n
from django_rq.urls import get_admin_urlpatterns, get_api_urlpatterns
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from webapp.api import docs, problems
from webapp.ops import health, metrics_endpoint


def _superusers_only(view):
    """django-rq's dashboard empties and requeues queues and shows tasks' arguments: superusers only
    (its own check is is_staff: every moderator could empty the GPU queue)."""
    return user_passes_test(lambda user: user.is_active and user.is_superuser, login_url="admin:login")(view)


urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("webapp.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", docs.same_origin_only(SpectacularSwaggerView.as_view(url_name="schema")), name="swagger-ui"),
    path("api/redoc/", docs.same_origin_only(SpectacularRedocView.as_view(url_name="schema")), name="redoc"),
    path("errors/<slug:code>", problems.error_doc, name="error-doc"),
    # The site's language switcher (POST, remembered in a cookie) and the site scripts' translations.
    path("i18n/setlang/", i18n.set_language, name="set_language"),
    path("i18n/catalog.js", i18n.JavaScriptCatalog.as_view(), name="javascript-catalog"),
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.healthz, name="readyz"),
    path("livez", health.livez, name="livez"),
    path("metrics", metrics_endpoint.metrics_view, name="metrics"),
    path("django-rq/", include((get_api_urlpatterns() + get_admin_urlpatterns(view_wrapper=_superusers_only), "django_rq"))),
    path("", include("webapp.site.urls")),
]

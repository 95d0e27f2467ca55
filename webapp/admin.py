"""Admin pages of the `webapp` app, registered by the packages that own the models."""

from webapp.accounts import admin as accounts_admin
from webapp.jobs import admin as jobs_admin
from webapp.jobs import takedown_admin
from webapp.notifications import admin as notifications_admin

__all__ = ["accounts_admin", "jobs_admin", "notifications_admin", "takedown_admin"]

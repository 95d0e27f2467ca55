from django.core.management.base import BaseCommand

from webapp.jobs.services import direct_uploads, maintenance


class Command(BaseCommand):
    help = (
        "Requeue or fail jobs whose worker stopped sending heartbeats, and abort abandoned direct uploads "
        "(workers also do this themselves)."
    )

    def handle(self, *args, **options):
        self.stdout.write(str(maintenance.jobs_sweep_stale()))
        self.stdout.write(f"expired direct uploads: {direct_uploads.direct_uploads_expire()}")

from django.core.management.base import BaseCommand

from webapp.jobs.services import maintenance, stored_files, webhook_outbox


class Command(BaseCommand):
    help = (
        "Requeue or fail jobs whose worker stopped sending heartbeats, and enqueue again undelivered"
        " webhooks, and delete uploaded originals no job owns (workers also do this themselves)."
    )

    def handle(self, *args, **options):
        counts = maintenance.jobs_sweep_stale()
        counts["webhooks"] = webhook_outbox.webhooks_sweep_undelivered()
        counts["orphan_uploads"] = stored_files.uploads_sweep_orphans()
        self.stdout.write(str(counts))

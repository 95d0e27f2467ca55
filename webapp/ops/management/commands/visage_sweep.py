from django.core.management.base import BaseCommand

from webapp.jobs.services import direct_uploads, maintenance, push_outbox, stored_files, webhook_outbox


class Command(BaseCommand):
    help = (
        "Requeue or fail jobs whose worker stopped sending heartbeats, enqueue again undelivered webhooks and pushes,"
        " delete uploaded originals no job owns and abort abandoned direct uploads (workers also do this"
        " themselves)."
    )

    def handle(self, *args, **options):
        counts = maintenance.jobs_sweep_stale()
        counts["webhooks"] = webhook_outbox.webhooks_sweep_undelivered()
        counts["pushes"] = push_outbox.pushes_sweep_undelivered()
        counts["orphan_uploads"] = stored_files.uploads_sweep_orphans()
        counts["expired_direct_uploads"] = direct_uploads.direct_uploads_expire()
        self.stdout.write(str(counts))

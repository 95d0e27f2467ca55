from django.conf import settings
from django.core.management.base import BaseCommand

from webapp.jobs.services import maintenance


class Command(BaseCommand):
    help = "Delete stored results older than VISAGE_RESULT_RETENTION_DAYS (run daily from cron)."

    def handle(self, *args, **options):
        purged = maintenance.results_purge_expired()
        self.stdout.write(f"purged {purged} result(s) older than {settings.RESULT_RETENTION_DAYS} days")

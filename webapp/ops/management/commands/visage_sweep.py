from django.core.management.base import BaseCommand

from webapp.jobs.services import maintenance


class Command(BaseCommand):
    help = "Requeue or fail jobs whose worker stopped sending heartbeats (workers also do this themselves)."

    def handle(self, *args, **options):
        self.stdout.write(str(maintenance.jobs_sweep_stale()))

from django.core.management.base import BaseCommand

from webapp.jobs import services


class Command(BaseCommand):
    help = "Requeue or fail jobs whose worker stopped sending heartbeats (workers also do this themselves)."

    def handle(self, *args, **options):
        self.stdout.write(str(services.jobs_sweep_stale()))

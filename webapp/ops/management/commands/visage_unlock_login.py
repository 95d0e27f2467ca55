"""Clear the failed sign-in count of a username and/or a client address (the sign-in limits' lockouts)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from webapp.accounts import login_limits


class Command(BaseCommand):
    help = "Unlock sign-in for a username (--username) and/or a client address (--ip)."

    def add_arguments(self, parser):
        parser.add_argument("--username")
        parser.add_argument("--ip", help="the client address as the server sees it (after VISAGE_TRUSTED_PROXIES)")

    def handle(self, *args, username=None, ip=None, **options):
        if username is None and ip is None:
            raise CommandError("Give --username and/or --ip.")
        cleared = login_limits.login_unlock(username=username, address=ip)
        self.stdout.write(f"Cleared {cleared} failed sign-in attempts.")

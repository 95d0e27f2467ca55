"""The `moderator` group: works the review queue in the admin without being a superuser."""

from __future__ import annotations

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP = "moderator"
PERMISSIONS = [
    # the review queue (jobs in state review) and what a reviewer needs to see
    ("webapp", "view_job"),
    ("webapp", "change_job"),
    ("webapp", "view_upload"),
    ("moderation", "review_content"),
    ("moderation", "view_verdict"),
    ("moderation", "change_verdict"),
    ("moderation", "view_checkresult"),
    ("moderation", "view_moderationrecord"),
    # the blocked-terms list is moderators' to maintain; protected identities stay with admins
    ("moderation", "view_blockedterm"),
    ("moderation", "add_blockedterm"),
    ("moderation", "change_blockedterm"),
    ("moderation", "delete_blockedterm"),
    ("moderation", "view_protectedidentity"),
]


def create_group(apps, schema_editor):
    # Permissions are normally created after all migrations ran; create them now so we can grant them.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=GROUP)
    for app_label, codename in PERMISSIONS:
        group.permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))


def delete_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("moderation", "0001_initial"),
        ("webapp", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_group, delete_group)]

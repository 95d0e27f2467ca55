# C2PA provenance read back from each signed result, and the uploader's consent.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('webapp', '0003_job_face_sources'),
    ]

    operations = [
        migrations.AddField(
            model_name='job',
            name='provenance',
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name='job',
            name='consent_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='job',
            name='consent_version',
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AddField(
            model_name='job',
            name='consent_text',
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name='job',
            name='consent_channel',
            field=models.CharField(blank=True, max_length=8),
        ),
    ]

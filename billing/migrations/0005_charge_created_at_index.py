from django.db import migrations, models


class Migration(migrations.Migration):
    """/metrics counts the last hour's charges: a range on created_at, indexed."""

    dependencies = [("billing", "0004_gpusample_frames_pixels")]

    operations = [
        migrations.AlterField(
            model_name="charge",
            name="created_at",
            field=models.DateTimeField(auto_now_add=True, db_index=True),
        ),
    ]

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("billing", "0003_quote_is_the_hold_payments_calibration")]

    operations = [
        migrations.AddField(
            model_name="gpusample",
            name="frames",
            field=models.PositiveIntegerField(default=1),
        ),
        migrations.AddField(
            model_name="gpusample",
            name="pixels",
            field=models.PositiveBigIntegerField(default=0),
        ),
    ]

"""The default price plan and the seed GPU-time calibration (values copied here, not imported, so
this migration keeps meaning what it meant when it was written)."""

from decimal import Decimal

from django.db import migrations

SEED_GPU_SECONDS_PER_FRAME = {
    ("fast", "720p"): "0.050",
    ("fast", "1080p"): "0.080",
    ("fast", "original"): "0.150",
    ("standard", "720p"): "0.100",
    ("standard", "1080p"): "0.150",
    ("standard", "original"): "0.300",
    ("hq", "720p"): "0.250",
    ("hq", "1080p"): "0.400",
    ("hq", "original"): "0.800",
}


def create_defaults(apps, schema_editor):
    PricePlan = apps.get_model("billing", "PricePlan")
    GpuCalibration = apps.get_model("billing", "GpuCalibration")
    if not PricePlan.objects.filter(is_default=True).exists():
        # hold_safety_factor existed when this ran in migration order; 0003 removed it (the hold is
        # the quote). Tests call this with today's models, which no longer have the field.
        extra = (
            {"hold_safety_factor": Decimal("1.5")}
            if any(f.name == "hold_safety_factor" for f in PricePlan._meta.get_fields())
            else {}
        )
        PricePlan.objects.create(
            name="Standard",
            is_default=True,
            unit_price=Decimal("0.10"),
            coefficient_720p=Decimal("1.00"),
            coefficient_1080p=Decimal("1.50"),
            original_coefficient_tiers=[
                [921_600, "1.00"],
                [2_073_600, "1.50"],
                [8_294_400, "3.00"],
                [None, "5.00"],
            ],
            weight_fast=Decimal("0.50"),
            weight_standard=Decimal("1.00"),
            weight_hq=Decimal("2.00"),
            minimum_charge=Decimal("0.05"),
            currency="USD",
            minor_unit_exponent=2,
            gpu_queue="default",
            **extra,
        )
    for (mode, resolution), seconds in SEED_GPU_SECONDS_PER_FRAME.items():
        GpuCalibration.objects.get_or_create(
            mode=mode, resolution=resolution, defaults={"gpu_seconds_per_frame": Decimal(seconds)}
        )


class Migration(migrations.Migration):
    dependencies = [("billing", "0001_initial")]

    operations = [migrations.RunPython(create_defaults, migrations.RunPython.noop)]

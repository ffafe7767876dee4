from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("modeleval", "0010_prediction_seed"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="recipe",
            field=models.JSONField(
                blank=True, default=dict,
                help_text='The recipe run this is (modeleval.recipes): {"name", "version", "entry", "settings"}, its '
                "settings being the recipe's defaults; empty for a run launched on its own.",
            ),
        ),
    ]

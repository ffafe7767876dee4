from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('benchmarks', '0007_idempotent_requests'),
    ]

    operations = [
        migrations.AddField(
            model_name='scene',
            name='meta',
            field=models.JSONField(blank=True, default=dict, help_text='Scan facts: alignment {source, matrix}, source_format, scene_type.'),
        ),
    ]

# IdempotentRequest now belongs to core (core/migrations/0001_initial.py); its table stays.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('benchmarks', '0008_scene_meta'),
        ('core', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name='IdempotentRequest')],
            database_operations=[],
        ),
    ]

# A job can be cancelled by who asked for it or an admin, and asked for again (core/jobs.py cancel_job).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('core', '0005_status_actor_once_per_statement'),
    ]

    operations = [
        migrations.AlterField(
            model_name='job',
            name='status',
            field=models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('done', 'Done'), ('failed', 'Failed'), ('cancelled', 'Cancelled')], default='queued', max_length=10),
        ),
    ]
